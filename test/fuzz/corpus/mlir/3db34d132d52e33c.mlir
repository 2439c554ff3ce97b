// softmax_grad of bf16 attention probabilities along the last dimension.
func.func @softmax_grad_bf16(%y: tensor<8x12x128x128xbf16>, %dy: tensor<8x12x128x128xbf16>) -> tensor<8x12x128x128xbf16> {
  %0 = tg.softmax_grad %y, %dy dim = 3 : tensor<8x12x128x128xbf16>
  return %0 : tensor<8x12x128x128xbf16>
}
