// concat of bf16, f8, f64, i64 and i1 tensors, including an empty input.
func.func @concat_types(%bf16: tensor<2xbf16>, %e4m3: tensor<2xf8E4M3FN>,
                        %empty: tensor<0xf8E4M3FN>, %f64: tensor<2xf64>,
                        %i64: tensor<2xi64>, %i1: tensor<2xi1>) {
  %0 = tg.concat %bf16, %bf16 dim = 0 : (tensor<2xbf16>, tensor<2xbf16>) -> tensor<4xbf16>
  %1 = tg.concat %e4m3, %empty dim = 0 : (tensor<2xf8E4M3FN>, tensor<0xf8E4M3FN>) -> tensor<2xf8E4M3FN>
  %2 = tg.concat %f64, %f64 dim = 0 : (tensor<2xf64>, tensor<2xf64>) -> tensor<4xf64>
  %3 = tg.concat %i64, %i64 dim = 0 : (tensor<2xi64>, tensor<2xi64>) -> tensor<4xi64>
  %4 = tg.concat %i1, %i1 dim = 0 : (tensor<2xi1>, tensor<2xi1>) -> tensor<4xi1>
  return
}
