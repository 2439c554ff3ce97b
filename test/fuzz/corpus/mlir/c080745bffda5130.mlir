// AdamW and LAMB update a parameter and its two moments.
func.func @adam(%p: tensor<2x3xf32>, %g: tensor<2x3xf32>, %m: tensor<2x3xf32>, %v: tensor<2x3xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  %0:3 = tg.adamw %p, %g, %m, %v, %lr, %t betas = (0.9, 0.999) epsilon = 1.0e-8 weight_decay = 0.0 : tensor<2x3xf32>, tensor<f32>, tensor<i64>
  %1:3 = tg.lamb %p, %g, %m, %v, %lr, %t betas = (0.9, 0.999) epsilon = 1.0e-6 weight_decay = 0.01 : tensor<2x3xf32>, tensor<f32>, tensor<i64>
  return
}
