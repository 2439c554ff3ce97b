// An empty dimension list parses and prints as `[]` (it is not folded here).
func.func @reduce_no_dims(%x: tensor<4x6xi64>) -> tensor<4x6xi64> {
  %0 = tg.reduce sum %x dims = [] : tensor<4x6xi64> -> tensor<4x6xi64>
  return %0 : tensor<4x6xi64>
}
