// Adafactor factors the second moment of a matrix (row and column states),
// over the last two dimensions of a batch of matrices, and keeps one
// unfactored state for a vector or a scalar.
func.func @adafactor(%p: tensor<2x3xf32>, %g: tensor<2x3xf32>, %r: tensor<2xf32>, %c: tensor<3xf32>, %lr: tensor<f32>, %t: tensor<i64>,
                     %p3: tensor<4x2x3xf64>, %r3: tensor<4x2xf64>, %c3: tensor<4x3xf64>,
                     %b: tensor<5xf32>, %v: tensor<5xf32>, %s: tensor<bf16>) {
  %0:3 = tg.adafactor %p, %g, [%r, %c], %lr, %t decay_rate = -0.8 epsilon1 = 1.0e-30 clip_threshold = 1.0 weight_decay = 0.0 : tensor<2x3xf32>, [tensor<2xf32>, tensor<3xf32>], tensor<f32>, tensor<i64>
  %1:3 = tg.adafactor %p3, %p3, [%r3, %c3], %lr, %t decay_rate = -0.5 epsilon1 = 1.0e-3 clip_threshold = 2.0 weight_decay = 0.01 : tensor<4x2x3xf64>, [tensor<4x2xf64>, tensor<4x3xf64>], tensor<f32>, tensor<i64>
  %2:2 = tg.adafactor %b, %b, [%v], %lr, %t decay_rate = -0.8 epsilon1 = 1.0e-30 clip_threshold = 1.0 weight_decay = 0.0 : tensor<5xf32>, [tensor<5xf32>], tensor<f32>, tensor<i64>
  %3:2 = tg.adafactor %s, %s, [%s], %lr, %t decay_rate = -0.8 epsilon1 = 1.0e-30 clip_threshold = 1.0 weight_decay = 0.0 : tensor<bf16>, [tensor<bf16>], tensor<f32>, tensor<i64>
  return
}
