// A min over a bf16 tensor keeps bf16.
func.func @reduce_min_bf16(%x: tensor<2x3x5xbf16>) -> tensor<3xbf16> {
  %0 = tg.reduce min %x dims = [0, 2] : tensor<2x3x5xbf16> -> tensor<3xbf16>
  return %0 : tensor<3xbf16>
}
