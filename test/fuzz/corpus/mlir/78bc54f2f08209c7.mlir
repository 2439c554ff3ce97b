// softmax along a middle dimension.
func.func @softmax_middle_dim(%x: tensor<4x10x6xf32>) -> tensor<4x10x6xf32> {
  %0 = tg.softmax %x dim = 1 : tensor<4x10x6xf32>
  return %0 : tensor<4x10x6xf32>
}
