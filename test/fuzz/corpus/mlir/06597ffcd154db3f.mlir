// Both transposes together print in the order transpose_a, transpose_b.
func.func @matmul_transpose_both(%a: tensor<2x16x4xf16>, %b: tensor<2x8x16xf16>) -> tensor<2x4x8xf16> {
  %0 = tg.matmul %a, %b transpose_a transpose_b : (tensor<2x16x4xf16>, tensor<2x8x16xf16>) -> tensor<2x4x8xf16>
  return %0 : tensor<2x4x8xf16>
}
