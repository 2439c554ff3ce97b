// The arithmetic binary ops accept every float type of the dialect.
func.func @binary_float_types(%bf16: tensor<4xbf16>, %f16: tensor<4xf16>,
                              %e4m3: tensor<4xf8E4M3FN>, %e5m2: tensor<4xf8E5M2>,
                              %f64: tensor<4xf64>) {
  %0 = tg.add %bf16, %bf16 : tensor<4xbf16>
  %1 = tg.sub %f16, %f16 : tensor<4xf16>
  %2 = tg.mul %e4m3, %e4m3 : tensor<4xf8E4M3FN>
  %3 = tg.div %e5m2, %e5m2 : tensor<4xf8E5M2>
  %4 = tg.max %f64, %f64 : tensor<4xf64>
  %5 = tg.min %bf16, %bf16 : tensor<4xbf16>
  return
}
