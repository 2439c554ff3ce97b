// Writes .npy files for the error tests of run-errors.test.
func.func @main() -> (tensor<3xf32> {tg.name = "three"}, tensor<2x2xi64> {tg.name = "ids"},
                      tensor<2x2xi64> {tg.name = "good_ids"}, tensor<4x3xi64> {tg.name = "int_table"},
                      tensor<4xf32> {tg.name = "nan"}) {
  %a = tg.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %b = tg.constant dense<[[0, 1], [7, 2]]> : tensor<2x2xi64>
  %g = tg.constant dense<[[0, 1], [3, 2]]> : tensor<2x2xi64>
  %t = tg.constant dense<1> : tensor<4x3xi64>
  %z = tg.constant dense<0.0> : tensor<4xf32>
  %n = tg.div %z, %z : tensor<4xf32>
  return %a, %b, %g, %t, %n : tensor<3xf32>, tensor<2x2xi64>, tensor<2x2xi64>, tensor<4x3xi64>, tensor<4xf32>
}
