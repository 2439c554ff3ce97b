// The float-only unary ops accept every float type.
func.func @unary_float_types(%bf16: tensor<8xbf16>, %f16: tensor<8xf16>,
                             %e4m3: tensor<8xf8E4M3FN>, %e5m2: tensor<8xf8E5M2>,
                             %f64: tensor<8xf64>) {
  %0 = tg.exp %bf16 : tensor<8xbf16>
  %1 = tg.log %f16 : tensor<8xf16>
  %2 = tg.sqrt %e4m3 : tensor<8xf8E4M3FN>
  %3 = tg.rsqrt %e5m2 : tensor<8xf8E5M2>
  %4 = tg.tanh %f64 : tensor<8xf64>
  %5 = tg.sigmoid %bf16 : tensor<8xbf16>
  %6 = tg.silu %f16 : tensor<8xf16>
  %7 = tg.relu %e4m3 : tensor<8xf8E4M3FN>
  %8 = tg.erf %f64 : tensor<8xf64>
  return
}
