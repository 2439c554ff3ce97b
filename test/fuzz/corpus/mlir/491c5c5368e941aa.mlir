// A mean over a middle dimension.
func.func @reduce_mean_middle_dim(%x: tensor<8x128x768xf32>) -> tensor<8x768xf32> {
  %0 = tg.reduce mean %x dims = [1] : tensor<8x128x768xf32> -> tensor<8x768xf32>
  return %0 : tensor<8x768xf32>
}
