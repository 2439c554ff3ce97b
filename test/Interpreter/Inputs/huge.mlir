func.func @main() -> tensor<131072x131072xf32> {
  %0 = tg.constant dense<1.0> : tensor<131072x131072xf32>
  return %0 : tensor<131072x131072xf32>
}
