// transpose prints its permutation; rank 0 has the empty permutation.
func.func @transpose(%x: tensor<8x128x12x64xf32>, %m: tensor<3x5xf16>,
                     %s: tensor<i64>, %b: tensor<2x3x4xi1>) {
  %0 = tg.transpose %x perm = [0, 2, 1, 3] : tensor<8x128x12x64xf32> -> tensor<8x12x128x64xf32>
  %1 = tg.transpose %m perm = [1, 0] : tensor<3x5xf16> -> tensor<5x3xf16>
  %2 = tg.transpose %m perm = [0, 1] : tensor<3x5xf16> -> tensor<3x5xf16>
  %3 = tg.transpose %s perm = [] : tensor<i64> -> tensor<i64>
  %4 = tg.transpose %b perm = [2, 0, 1] : tensor<2x3x4xi1> -> tensor<4x2x3xi1>
  return
}
