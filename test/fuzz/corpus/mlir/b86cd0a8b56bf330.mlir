// A max over integers keeps the integer element type.
func.func @reduce_max_int(%x: tensor<4x6xi32>) -> tensor<4xi32> {
  %0 = tg.reduce max %x dims = [1] : tensor<4x6xi32> -> tensor<4xi32>
  return %0 : tensor<4xi32>
}
