// An embedding lookup with i64 ids appends the row size to the ids' shape.
func.func @embedding_i64_ids(%wte: tensor<50257x768xf32>, %ids: tensor<8x128xi64>) -> tensor<8x128x768xf32> {
  %0 = tg.embedding %wte[%ids] : (tensor<50257x768xf32>, tensor<8x128xi64>) -> tensor<8x128x768xf32>
  return %0 : tensor<8x128x768xf32>
}
