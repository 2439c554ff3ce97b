// gelu_grad prints its approximation before the gradient and the input.
func.func @gelu_grad(%dy: tensor<8x128x3072xf32>, %x: tensor<8x128x3072xf32>, %dyb: tensor<16xbf16>, %xb: tensor<16xbf16>) -> (tensor<8x128x3072xf32>, tensor<8x128x3072xf32>, tensor<16xbf16>) {
  %0 = tg.gelu_grad erf %dy, %x : tensor<8x128x3072xf32>
  %1 = tg.gelu_grad tanh %dy, %x : tensor<8x128x3072xf32>
  %2 = tg.gelu_grad tanh %dyb, %xb : tensor<16xbf16>
  return %0, %1, %2 : tensor<8x128x3072xf32>, tensor<8x128x3072xf32>, tensor<16xbf16>
}
