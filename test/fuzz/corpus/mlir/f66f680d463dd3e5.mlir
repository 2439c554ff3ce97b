// An embedding lookup with i32 ids from a bf16 table.
func.func @embedding_i32_ids(%wpe: tensor<1024x64xbf16>, %pos: tensor<16xi32>) -> tensor<16x64xbf16> {
  %0 = tg.embedding %wpe[%pos] : (tensor<1024x64xbf16>, tensor<16xi32>) -> tensor<16x64xbf16>
  return %0 : tensor<16x64xbf16>
}
