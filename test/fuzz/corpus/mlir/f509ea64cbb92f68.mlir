// embedding_grad with i32 ids of rank 1 into a bf16 table.
func.func @embedding_grad_i32_ids(%dy: tensor<16x64xbf16>, %pos: tensor<16xi32>) -> tensor<1024x64xbf16> {
  %0 = tg.embedding_grad %dy[%pos] : (tensor<16x64xbf16>, tensor<16xi32>) -> tensor<1024x64xbf16>
  return %0 : tensor<1024x64xbf16>
}
