// Equal batch dimensions with transpose_b: the scores q @ k^T of attention.
func.func @matmul_batched_transpose_b(%q: tensor<8x12x128x64xf32>, %k: tensor<8x12x128x64xf32>) -> tensor<8x12x128x128xf32> {
  %0 = tg.matmul %q, %k transpose_b : (tensor<8x12x128x64xf32>, tensor<8x12x128x64xf32>) -> tensor<8x12x128x128xf32>
  return %0 : tensor<8x12x128x128xf32>
}
