func.func @main(%x: tensor<4xf32> {tg.role = "input", tg.name = "x"}) -> (tensor<4xf32> {tg.name = "y"}) {
  %0 = tg.exp %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
