// tanh(x) * 1.001: close to, but not the same as, compare.mlir.
func.func @main(%x: tensor<8xf32> {tg.role = "input", tg.name = "x"}) -> (tensor<8xf32> {tg.name = "out"}) {
  %0 = tg.tanh %x : tensor<8xf32>
  %c = tg.constant dense<1.001> : tensor<8xf32>
  %1 = tg.mul %0, %c : tensor<8xf32>
  return %1 : tensor<8xf32>
}
