// The arithmetic binary ops accept i32 and i64.
func.func @binary_integer_types(%i32: tensor<4xi32>, %i64: tensor<4xi64>) {
  %0 = tg.add %i32, %i32 : tensor<4xi32>
  %1 = tg.sub %i64, %i64 : tensor<4xi64>
  %2 = tg.mul %i32, %i32 : tensor<4xi32>
  %3 = tg.div %i64, %i64 : tensor<4xi64>
  %4 = tg.max %i32, %i32 : tensor<4xi32>
  %5 = tg.min %i64, %i64 : tensor<4xi64>
  return
}
