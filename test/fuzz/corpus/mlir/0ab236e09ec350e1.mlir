// slice of integer, boolean and rank-0 tensors; a rank-0 slice has no ranges.
func.func @slice_types(%i: tensor<10xi64>, %b: tensor<2x3xi1>, %s: tensor<f8E5M2>) {
  %0 = tg.slice %i [5:10:3] : tensor<10xi64> -> tensor<2xi64>
  %1 = tg.slice %b [0:1, 1:3] : tensor<2x3xi1> -> tensor<1x2xi1>
  %2 = tg.slice %s [] : tensor<f8E5M2> -> tensor<f8E5M2>
  return
}
