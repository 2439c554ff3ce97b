// embedding_grad with i64 ids scatters into a table of the result's size.
func.func @embedding_grad_i64_ids(%dy: tensor<8x128x768xf32>, %ids: tensor<8x128xi64>) -> tensor<50257x768xf32> {
  %0 = tg.embedding_grad %dy[%ids] : (tensor<8x128x768xf32>, tensor<8x128xi64>) -> tensor<50257x768xf32>
  return %0 : tensor<50257x768xf32>
}
