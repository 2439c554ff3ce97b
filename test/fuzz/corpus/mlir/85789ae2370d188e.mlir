// gelu prints its approximation before the operand.
func.func @gelu(%x: tensor<4x3072xbf16>, %y: tensor<4xf32>) {
  %0 = tg.gelu erf %x : tensor<4x3072xbf16>
  %1 = tg.gelu tanh %x : tensor<4x3072xbf16>
  %2 = tg.gelu tanh %y : tensor<4xf32>
  return
}
