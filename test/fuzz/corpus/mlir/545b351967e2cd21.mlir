// pad prints its low, high and interior paddings and its types.
func.func @pad(%x: tensor<2x3xf32>, %i: tensor<4xi64>) {
  %0 = tg.pad %x low = [1, 0] high = [0, 2] interior = [0, 1] : tensor<2x3xf32> -> tensor<3x7xf32>
  %1 = tg.pad %x low = [0, 0] high = [0, 0] interior = [0, 0] : tensor<2x3xf32> -> tensor<2x3xf32>
  %2 = tg.pad %i low = [3] high = [1] interior = [2] : tensor<4xi64> -> tensor<14xi64>
  return
}
