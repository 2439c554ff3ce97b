// Without numbered layers, any op boundary is a cut, where the two stages'
// modelled times are closest.
// VIRTUAL-LABEL: func.func @unnamed
func.func @unnamed(%x: tensor<64x256xf32> {tg.role = "input"},
                   %w: tensor<256x256xf32> {tg.role = "param", tg.name = "w"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %h = tg.matmul %x, %w : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
  %a = tg.relu %h : tensor<64x256xf32>
  %n = tg.neg %a : tensor<64x256xf32>
  %loss = tg.reduce sum %n dims = [0, 1] : tensor<64x256xf32> -> tensor<f32>
  return %loss : tensor<f32>
}
