// pow accepts every float type.
func.func @pow_float_types(%bf16: tensor<2xbf16>, %f16: tensor<2xf16>,
                           %e4m3: tensor<2xf8E4M3FN>, %e5m2: tensor<2xf8E5M2>,
                           %f64: tensor<2xf64>) {
  %0 = tg.pow %bf16, %bf16 : tensor<2xbf16>
  %1 = tg.pow %f16, %f16 : tensor<2xf16>
  %2 = tg.pow %e4m3, %e4m3 : tensor<2xf8E4M3FN>
  %3 = tg.pow %e5m2, %e5m2 : tensor<2xf8E5M2>
  %4 = tg.pow %f64, %f64 : tensor<2xf64>
  return
}
