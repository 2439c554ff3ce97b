func.func @main(%table: tensor<4x3xf32> {tg.role = "param", tg.name = "table"},
                %ids: tensor<2x2xi64> {tg.role = "input", tg.name = "ids"})
    -> (tensor<2x2x3xf32> {tg.name = "rows"}) {
  %0 = tg.embedding %table[%ids] : (tensor<4x3xf32>, tensor<2x2xi64>) -> tensor<2x2x3xf32>
  return %0 : tensor<2x2x3xf32>
}
