// top_k along the last dimension: values and i64 positions.
func.func @top_k(%x: tensor<16x8xf32>, %y: tensor<5xi32>) -> (tensor<16x2xf32>, tensor<16x2xi64>, tensor<3xi32>) {
  %v, %i = tg.top_k %x k = 2 : tensor<16x8xf32> -> tensor<16x2xf32>, tensor<16x2xi64>
  %w, %j = tg.top_k %y k = 3 smallest : tensor<5xi32> -> tensor<3xi32>, tensor<3xi64>
  return %v, %i, %w : tensor<16x2xf32>, tensor<16x2xi64>, tensor<3xi32>
}
