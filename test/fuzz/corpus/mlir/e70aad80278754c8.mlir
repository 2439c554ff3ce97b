// dropout with a runtime seed, a rate and a stream.
func.func @dropout(%x: tensor<8x128x768xf32>, %seed: tensor<i64>) -> tensor<8x128x768xf32> {
  %0 = tg.dropout %x, %seed rate = 1.000000e-01 stream = 3 : tensor<8x128x768xf32>, tensor<i64>
  return %0 : tensor<8x128x768xf32>
}
