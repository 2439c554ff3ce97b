// bf16 operands with an f32 result: the accumulation is not rounded to bf16.
func.func @matmul_mixed_result_type(%a: tensor<64x128xbf16>, %b: tensor<128x32xbf16>) -> tensor<64x32xf32> {
  %0 = tg.matmul %a, %b : (tensor<64x128xbf16>, tensor<128x32xbf16>) -> tensor<64x32xf32>
  return %0 : tensor<64x32xf32>
}
