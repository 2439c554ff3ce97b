// Discardable attributes survive the round trip in the attribute dictionary.
func.func @attr_dict(%a: tensor<4xf32>) {
  %0 = tg.add %a, %a {tag = "x"} : tensor<4xf32>
  %1 = tg.gelu tanh %a {tag = "y"} : tensor<4xf32>
  %2 = tg.compare lt, %a, %a {tag = "z"} : tensor<4xf32>
  return
}
