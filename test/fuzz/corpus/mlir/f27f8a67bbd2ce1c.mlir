// Round trip of the backward ops, in custom syntax and in generic form.

// softmax_grad takes the forward's output, then the gradient, along a middle dimension.
func.func @softmax_grad_middle_dim(%y: tensor<4x10x6xf32>, %dy: tensor<4x10x6xf32>) -> tensor<4x10x6xf32> {
  %0 = tg.softmax_grad %y, %dy dim = 1 : tensor<4x10x6xf32>
  return %0 : tensor<4x10x6xf32>
}
