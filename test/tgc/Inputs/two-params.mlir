// y = x * w + v, with two params: what --params must match.
func.func @main(%x: tensor<2xf32> {tg.role = "input", tg.name = "x"},
                %w: tensor<2xf32> {tg.role = "param", tg.name = "w"},
                %v: tensor<2xf32> {tg.role = "param", tg.name = "v"})
    -> (tensor<2xf32> {tg.name = "y"}) {
  %0 = tg.mul %x, %w : tensor<2xf32>
  %1 = tg.add %0, %v : tensor<2xf32>
  return %1 : tensor<2xf32>
}
