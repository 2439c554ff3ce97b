// An f16 input, to check values that overflow it.
func.func @main(%x: tensor<2xf16> {tg.role = "input", tg.name = "x"})
    -> (tensor<2xf16> {tg.name = "y"}) {
  %0 = tg.neg %x : tensor<2xf16>
  return %0 : tensor<2xf16>
}
