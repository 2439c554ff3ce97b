// RUN: tgc-opt %s --split-input-file --verify-diagnostics

// Momentum needs a buffer.
func.func @momentum_without_buffer(%p: tensor<4xf32>, %g: tensor<4xf32>, %lr: tensor<f32>) {
  // expected-error @+1 {{'tg.sgd' op momentum > 0 needs a momentum_buffer operand}}
  %0 = tg.sgd %p, %g, %lr momentum = 0.9 weight_decay = 0.0 : tensor<4xf32>, tensor<f32>
  return
}

// -----

// A buffer needs momentum.
func.func @buffer_without_momentum(%p: tensor<4xf32>, %g: tensor<4xf32>, %lr: tensor<f32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'tg.sgd' op a momentum_buffer needs momentum > 0}}
  %0, %1 = tg.sgd %p, %g, %lr, %b momentum = 0.0 weight_decay = 0.0 : tensor<4xf32>, tensor<f32>, tensor<4xf32>
  return
}

// -----

// Momentum is in [0, 1).
func.func @momentum_range(%p: tensor<4xf32>, %g: tensor<4xf32>, %lr: tensor<f32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'tg.sgd' op momentum must be in [0, 1), got 1}}
  %0, %1 = tg.sgd %p, %g, %lr, %b momentum = 1.0 weight_decay = 0.0 : tensor<4xf32>, tensor<f32>, tensor<4xf32>
  return
}

// -----

// The buffer has the parameter's type.
func.func @buffer_type(%p: tensor<4xf32>, %g: tensor<4xf32>, %lr: tensor<f32>, %b: tensor<4xbf16>) {
  // expected-error @+1 {{'tg.sgd' op momentum_buffer has type 'tensor<4xbf16>', the parameter 'tensor<4xf32>'}}
  %0, %1 = tg.sgd %p, %g, %lr, %b momentum = 0.9 weight_decay = 0.0 : tensor<4xf32>, tensor<f32>, tensor<4xbf16>
  return
}

// -----

// Nesterov needs momentum.
func.func @nesterov(%p: tensor<4xf32>, %g: tensor<4xf32>, %lr: tensor<f32>) {
  // expected-error @+1 {{'tg.sgd' op nesterov needs momentum > 0}}
  %0 = tg.sgd %p, %g, %lr momentum = 0.0 weight_decay = 0.0 nesterov : tensor<4xf32>, tensor<f32>
  return
}

// -----

// Weight decay is non-negative.
func.func @decay(%p: tensor<4xf32>, %g: tensor<4xf32>, %lr: tensor<f32>) {
  // expected-error @+1 {{'tg.sgd' op weight_decay must be finite and non-negative, got -1}}
  %0 = tg.sgd %p, %g, %lr momentum = 0.0 weight_decay = -1.0 : tensor<4xf32>, tensor<f32>
  return
}

// -----

// Betas are in [0, 1).
func.func @betas(%p: tensor<4xf32>, %g: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{'tg.adamw' op betas must be in [0, 1), got 1}}
  %0:3 = tg.adamw %p, %g, %m, %v, %lr, %t betas = (0.9, 1.0) epsilon = 1.0e-8 weight_decay = 0.0 : tensor<4xf32>, tensor<f32>, tensor<i64>
  return
}

// -----

// Epsilon is positive.
func.func @epsilon(%p: tensor<4xf32>, %g: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{'tg.lamb' op epsilon must be finite and positive, got 0}}
  %0:3 = tg.lamb %p, %g, %m, %v, %lr, %t betas = (0.9, 0.999) epsilon = 0.0 weight_decay = 0.0 : tensor<4xf32>, tensor<f32>, tensor<i64>
  return
}
