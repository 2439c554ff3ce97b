// A gradient narrower than its parameter is written after the parameter's
// type: f32 updates of bf16 gradients (mixed precision), f64 of f32.
func.func @narrow_grad(%p: tensor<2x3xf32>, %g: tensor<2x3xbf16>, %m: tensor<2x3xf32>, %v: tensor<2x3xf32>, %lr: tensor<f32>, %t: tensor<i64>, %q: tensor<3xf64>, %gq: tensor<3xf32>, %s: tensor<3xf64>, %lr64: tensor<f64>) {
  %0 = tg.sgd %p, %g, %lr momentum = 0.0 weight_decay = 0.0 : tensor<2x3xf32> grad tensor<2x3xbf16>, tensor<f32>
  %1:3 = tg.adamw %p, %g, %m, %v, %lr, %t betas = (0.9, 0.999) epsilon = 1.0e-8 weight_decay = 0.0 : tensor<2x3xf32> grad tensor<2x3xbf16>, tensor<f32>, tensor<i64>
  %2:3 = tg.lamb %p, %g, %m, %v, %lr, %t betas = (0.9, 0.999) epsilon = 1.0e-8 weight_decay = 0.0 : tensor<2x3xf32> grad tensor<2x3xbf16>, tensor<f32>, tensor<i64>
  %3:2 = tg.adafactor %q, %gq, [%s], %lr64, %t decay_rate = -0.8 epsilon1 = 1.0e-30 clip_threshold = 1.0 weight_decay = 0.0 : tensor<3xf64> grad tensor<3xf32>, [tensor<3xf64>], tensor<f64>, tensor<i64>
  return
}
