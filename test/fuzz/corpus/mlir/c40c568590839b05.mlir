// A sum over the leading dimensions keeps the trailing one.
func.func @reduce_sum_leading_dims(%x: tensor<8x128x768xf32>) -> tensor<768xf32> {
  %0 = tg.reduce sum %x dims = [0, 1] : tensor<8x128x768xf32> -> tensor<768xf32>
  return %0 : tensor<768xf32>
}
