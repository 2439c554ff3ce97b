// Plain SGD, and SGD with a (Nesterov) momentum buffer.
func.func @sgd(%p: tensor<4xf32>, %g: tensor<4xf32>, %lr: tensor<f32>, %buf: tensor<4xf32>) {
  %0 = tg.sgd %p, %g, %lr momentum = 0.0 weight_decay = 0.0 : tensor<4xf32>, tensor<f32>
  %1, %2 = tg.sgd %p, %g, %lr, %buf momentum = 0.9 weight_decay = 1.0e-4 nesterov : tensor<4xf32>, tensor<f32>, tensor<4xf32>
  return
}
