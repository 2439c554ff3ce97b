// An embedding gathers rows of any element type: a bool mask by positions.
func.func @embedding_bool_table(%mask: tensor<8x1xi1>, %ids: tensor<4xi64>) -> tensor<4x1xi1> {
  %0 = tg.embedding %mask[%ids] : (tensor<8x1xi1>, tensor<4xi64>) -> tensor<4x1xi1>
  return %0 : tensor<4x1xi1>
}
