func.func @main() -> tensor<4294967296x4294967296xf32> {
  %0 = tg.constant dense<1.0> : tensor<4294967296x4294967296xf32>
  return %0 : tensor<4294967296x4294967296xf32>
}
