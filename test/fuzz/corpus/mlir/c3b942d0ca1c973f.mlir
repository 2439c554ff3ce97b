// Round trip of the shape ops, in custom syntax and in generic form.

// Splat and dense constants of every element type print their value and type.
func.func @constant() {
  %0 = tg.constant dense<1.0> : tensor<4xf32>
  %1 = tg.constant dense<[1.5, -2.0]> : tensor<2xbf16>
  %2 = tg.constant dense<0x7C00> : tensor<2xf16>
  %3 = tg.constant dense<448.0> : tensor<2xf8E4M3FN>
  %4 = tg.constant dense<[0.5, -0.0]> : tensor<2xf8E5M2>
  %5 = tg.constant dense<[1.0, 0.25]> : tensor<2xf64>
  %6 = tg.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %7 = tg.constant dense<-9223372036854775808> : tensor<i64>
  %8 = tg.constant dense<[true, false]> : tensor<2xi1>
  %9 = tg.constant dense<> : tensor<0x3xf32>
  return
}
