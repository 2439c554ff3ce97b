// convert between float types, floats and integers, and to and from i1.
func.func @convert(%f32: tensor<768x768xf32>, %bf16: tensor<768x768xbf16>,
                   %e5m2: tensor<768x768xf8E5M2>, %f64: tensor<768x768xf64>,
                   %i32: tensor<768x768xi32>, %i64: tensor<768x768xi64>,
                   %i1: tensor<768x768xi1>) {
  %0 = tg.convert %f32 : tensor<768x768xf32> -> tensor<768x768xbf16>
  %1 = tg.convert %bf16 : tensor<768x768xbf16> -> tensor<768x768xf32>
  %2 = tg.convert %f32 : tensor<768x768xf32> -> tensor<768x768xf8E4M3FN>
  %3 = tg.convert %e5m2 : tensor<768x768xf8E5M2> -> tensor<768x768xf16>
  %4 = tg.convert %f64 : tensor<768x768xf64> -> tensor<768x768xf32>
  %5 = tg.convert %f32 : tensor<768x768xf32> -> tensor<768x768xi32>
  %6 = tg.convert %i64 : tensor<768x768xi64> -> tensor<768x768xf32>
  %7 = tg.convert %i32 : tensor<768x768xi32> -> tensor<768x768xi64>
  %8 = tg.convert %i32 : tensor<768x768xi32> -> tensor<768x768xi1>
  %9 = tg.convert %i1 : tensor<768x768xi1> -> tensor<768x768xf32>
  %10 = tg.convert %f32 : tensor<768x768xf32> -> tensor<768x768xf32>
  return
}
