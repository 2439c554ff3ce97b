func.func @f(%x: tensor<4xf32> {tg.role = "param"}) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
