// compare accepts every numeric type; the result is always i1.
func.func @compare_types(%bf16: tensor<2x2xbf16>, %e5m2: tensor<2x2xf8E5M2>,
                         %i32: tensor<2x2xi32>, %i64: tensor<2x2xi64>,
                         %f64: tensor<2x2xf64>)
    -> (tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>) {
  %0 = tg.compare lt, %bf16, %bf16 : tensor<2x2xbf16>
  %1 = tg.compare ge, %e5m2, %e5m2 : tensor<2x2xf8E5M2>
  %2 = tg.compare eq, %i32, %i32 : tensor<2x2xi32>
  %3 = tg.compare ne, %i64, %i64 : tensor<2x2xi64>
  %4 = tg.compare le, %f64, %f64 : tensor<2x2xf64>
  return %0, %1, %2, %3, %4 : tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>
}
