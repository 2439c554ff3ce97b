func.func @main(%w: tensor<4x3x5xf32> {tg.role = "param", tg.name = "w"},
                %x: tensor<2x2x3xf32> {tg.role = "input", tg.name = "x"},
                %ids: tensor<2x2xi64> {tg.role = "input", tg.name = "ids"})
    -> (tensor<2x2x5xf32> {tg.name = "y"}) {
  %0 = tg.expert_matmul %x, %w[%ids] : (tensor<2x2x3xf32>, tensor<4x3x5xf32>, tensor<2x2xi64>) -> tensor<2x2x5xf32>
  return %0 : tensor<2x2x5xf32>
}
