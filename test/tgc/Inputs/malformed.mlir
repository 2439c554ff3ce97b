func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tg.add %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
