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

// -----

// A matrix has factored row and column states.
func.func @adafactor_factored_count(%p: tensor<2x3xf32>, %v: tensor<2x3xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{'tg.adafactor' op a parameter of rank 2 needs 2 states (the factored row and column second moments), got 1}}
  %0:2 = tg.adafactor %p, %p, [%v], %lr, %t decay_rate = -0.8 epsilon1 = 1.0e-30 clip_threshold = 1.0 weight_decay = 0.0 : tensor<2x3xf32>, [tensor<2x3xf32>], tensor<f32>, tensor<i64>
  return
}

// -----

// A vector has one state.
func.func @adafactor_unfactored_count(%p: tensor<3xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{'tg.adafactor' op a parameter of rank 1 needs 1 state (its second moment), got 2}}
  %0:3 = tg.adafactor %p, %p, [%p, %p], %lr, %t decay_rate = -0.8 epsilon1 = 1.0e-30 clip_threshold = 1.0 weight_decay = 0.0 : tensor<3xf32>, [tensor<3xf32>, tensor<3xf32>], tensor<f32>, tensor<i64>
  return
}

// -----

// The row state drops the last dimension.
func.func @adafactor_row(%p: tensor<2x3xf32>, %r: tensor<3xf32>, %c: tensor<3xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{'tg.adafactor' op row state has type 'tensor<3xf32>', expected 'tensor<2xf32>' (the parameter's shape without its last dimension)}}
  %0:3 = tg.adafactor %p, %p, [%r, %c], %lr, %t decay_rate = -0.8 epsilon1 = 1.0e-30 clip_threshold = 1.0 weight_decay = 0.0 : tensor<2x3xf32>, [tensor<3xf32>, tensor<3xf32>], tensor<f32>, tensor<i64>
  return
}

// -----

// The column state drops the second-to-last dimension, keeping the batch.
func.func @adafactor_column(%p: tensor<4x2x3xf32>, %r: tensor<4x2xf32>, %c: tensor<3xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{'tg.adafactor' op column state has type 'tensor<3xf32>', expected 'tensor<4x3xf32>' (the parameter's shape without its second-to-last dimension)}}
  %0:3 = tg.adafactor %p, %p, [%r, %c], %lr, %t decay_rate = -0.8 epsilon1 = 1.0e-30 clip_threshold = 1.0 weight_decay = 0.0 : tensor<4x2x3xf32>, [tensor<4x2xf32>, tensor<3xf32>], tensor<f32>, tensor<i64>
  return
}

// -----

// An unfactored state has the parameter's type, element type included.
func.func @adafactor_state(%p: tensor<3xf32>, %v: tensor<3xbf16>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{'tg.adafactor' op state has type 'tensor<3xbf16>', expected 'tensor<3xf32>' (the parameter's)}}
  %0:2 = tg.adafactor %p, %p, [%v], %lr, %t decay_rate = -0.8 epsilon1 = 1.0e-30 clip_threshold = 1.0 weight_decay = 0.0 : tensor<3xf32>, [tensor<3xbf16>], tensor<f32>, tensor<i64>
  return
}

// -----

// beta2 = 1 - t^decay_rate is in [0, 1) only for a negative decay_rate.
func.func @adafactor_decay_rate(%p: tensor<3xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{'tg.adafactor' op decay_rate must be finite and negative, got 0}}
  %0:2 = tg.adafactor %p, %p, [%p], %lr, %t decay_rate = 0.0 epsilon1 = 1.0e-30 clip_threshold = 1.0 weight_decay = 0.0 : tensor<3xf32>, [tensor<3xf32>], tensor<f32>, tensor<i64>
  return
}

// -----

// epsilon1 keeps the second moment positive.
func.func @adafactor_epsilon1(%p: tensor<3xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{'tg.adafactor' op epsilon1 must be finite and positive, got 0}}
  %0:2 = tg.adafactor %p, %p, [%p], %lr, %t decay_rate = -0.8 epsilon1 = 0.0 clip_threshold = 1.0 weight_decay = 0.0 : tensor<3xf32>, [tensor<3xf32>], tensor<f32>, tensor<i64>
  return
}

// -----

// The update's RMS is clipped to a positive threshold.
func.func @adafactor_clip_threshold(%p: tensor<3xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{'tg.adafactor' op clip_threshold must be finite and positive, got -1}}
  %0:2 = tg.adafactor %p, %p, [%p], %lr, %t decay_rate = -0.8 epsilon1 = 1.0e-30 clip_threshold = -1.0 weight_decay = 0.0 : tensor<3xf32>, [tensor<3xf32>], tensor<f32>, tensor<i64>
  return
}

// -----

// Weight decay is non-negative.
func.func @adafactor_weight_decay(%p: tensor<3xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{'tg.adafactor' op weight_decay must be finite and non-negative, got -5.000000e-01}}
  %0:2 = tg.adafactor %p, %p, [%p], %lr, %t decay_rate = -0.8 epsilon1 = 1.0e-30 clip_threshold = 1.0 weight_decay = -0.5 : tensor<3xf32>, [tensor<3xf32>], tensor<f32>, tensor<i64>
  return
}

// -----

// The gradient has the parameter's shape.
func.func @grad_shape(%p: tensor<4xf32>, %g: tensor<2x2xf32>, %lr: tensor<f32>) {
  // expected-error @+1 {{'tg.sgd' op gradient has shape 2x2, the parameter 4}}
  %0 = tg.sgd %p, %g, %lr momentum = 0.0 weight_decay = 0.0 : tensor<4xf32> grad tensor<2x2xf32>, tensor<f32>
  return
}

// -----

// A gradient may be narrower than its parameter, never wider.
func.func @grad_wider(%p: tensor<4xbf16>, %g: tensor<4xf32>, %m: tensor<4xbf16>, %v: tensor<4xbf16>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{'tg.adamw' op gradient element type 'f32' does not widen exactly to the parameter's 'bf16'}}
  %0:3 = tg.adamw %p, %g, %m, %v, %lr, %t betas = (0.9, 0.999) epsilon = 1.0e-8 weight_decay = 0.0 : tensor<4xbf16> grad tensor<4xf32>, tensor<f32>, tensor<i64>
  return
}

// -----

// f16 does not widen exactly to bf16 (fewer exponent bits in bf16's favour,
// more mantissa bits in f16's).
func.func @grad_f16_for_bf16(%p: tensor<4xbf16>, %g: tensor<4xf16>, %s: tensor<4xbf16>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{'tg.adafactor' op gradient element type 'f16' does not widen exactly to the parameter's 'bf16'}}
  %0:2 = tg.adafactor %p, %g, [%s], %lr, %t decay_rate = -0.8 epsilon1 = 1.0e-30 clip_threshold = 1.0 weight_decay = 0.0 : tensor<4xbf16> grad tensor<4xf16>, [tensor<4xbf16>], tensor<f32>, tensor<i64>
  return
}

// -----

// grad_scale is a scalar.
func.func @grad_scale_not_scalar(%p: tensor<4xf32>, %g: tensor<4xf32>, %lr: tensor<f32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{'tg.sgd' op operand #3 must be 0D tensor of tg floating-point type values}}
  %0 = tg.sgd %p, %g, %lr grad_scale %s momentum = 0.0 weight_decay = 0.0 : tensor<4xf32>, tensor<f32> grad_scale tensor<4xf32>
  return
}
