// The attributes default to fairseq's values.
func.func @adafactor_defaults(%p: tensor<3xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  %0:2 = "tg.adafactor"(%p, %p, %p, %lr, %t) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0>}> : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<f32>, tensor<i64>) -> (tensor<3xf32>, tensor<3xf32>)
  return
}
