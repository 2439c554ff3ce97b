// grad_scale: the update multiplies the (widened) gradient by a scalar, the
// inverse loss scale of an fp16 step.
func.func @grad_scale(%p: tensor<2x3xf32>, %g: tensor<2x3xf16>, %m: tensor<2x3xf32>, %v: tensor<2x3xf32>, %s: tensor<f32>, %t: tensor<i64>, %g32: tensor<2x3xf32>, %r: tensor<2xf32>, %c: tensor<3xf32>) {
  %0 = tg.sgd %p, %g, %s grad_scale %s momentum = 0.0 weight_decay = 0.0 : tensor<2x3xf32> grad tensor<2x3xf16>, tensor<f32> grad_scale tensor<f32>
  %1:2 = tg.sgd %p, %g, %s, %m grad_scale %s momentum = 0.9 weight_decay = 0.0 : tensor<2x3xf32> grad tensor<2x3xf16>, tensor<f32>, tensor<2x3xf32> grad_scale tensor<f32>
  %2:3 = tg.adamw %p, %g, %m, %v, %s, %t grad_scale %s betas = (0.9, 0.999) epsilon = 1.0e-8 weight_decay = 0.0 : tensor<2x3xf32> grad tensor<2x3xf16>, tensor<f32>, tensor<i64> grad_scale tensor<f32>
  %3:3 = tg.lamb %p, %g32, %m, %v, %s, %t grad_scale %s betas = (0.9, 0.999) epsilon = 1.0e-8 weight_decay = 0.0 : tensor<2x3xf32>, tensor<f32>, tensor<i64> grad_scale tensor<f32>
  %4:3 = tg.adafactor %p, %g, [%r, %c], %s, %t grad_scale %s decay_rate = -0.8 epsilon1 = 1.0e-30 clip_threshold = 1.0 weight_decay = 0.0 : tensor<2x3xf32> grad tensor<2x3xf16>, [tensor<2xf32>, tensor<3xf32>], tensor<f32>, tensor<i64> grad_scale tensor<f32>
  return
}
