// transpose_a contracts over the second-to-last dimension of the lhs (a weight gradient).
func.func @matmul_transpose_a(%x: tensor<1024x768xf32>, %dy: tensor<1024x3072xf32>) -> tensor<768x3072xf32> {
  %0 = tg.matmul %x, %dy transpose_a : (tensor<1024x768xf32>, tensor<1024x3072xf32>) -> tensor<768x3072xf32>
  return %0 : tensor<768x3072xf32>
}
