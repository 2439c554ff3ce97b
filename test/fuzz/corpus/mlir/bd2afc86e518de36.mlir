// pad of an empty dimension (only low and high count), a scalar, i1 and bf16, and interior padding of a size-1 dimension.
func.func @pad_edges(%e: tensor<0x3xi32>, %s: tensor<i1>, %o: tensor<1x4xbf16>) {
  %0 = tg.pad %e low = [2, 0] high = [1, 1] interior = [5, 0] : tensor<0x3xi32> -> tensor<3x4xi32>
  %1 = tg.pad %s low = [] high = [] interior = [] : tensor<i1> -> tensor<i1>
  %2 = tg.pad %o low = [0, 1] high = [0, 0] interior = [7, 1] : tensor<1x4xbf16> -> tensor<1x8xbf16>
  return
}
