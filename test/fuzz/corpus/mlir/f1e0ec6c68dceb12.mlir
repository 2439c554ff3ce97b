// A weight used on both stages (a tied embedding) has its cast copied to
// each: no transfer of a weight.
// VIRTUAL-LABEL: func.func @tied
func.func @tied(%x: tensor<64x256xf32> {tg.role = "input"},
                %w: tensor<256x256xf32> {tg.role = "param", tg.name = "wte"},
                %w0: tensor<256x256xf32> {tg.role = "param", tg.name = "h.0.w"},
                %w1: tensor<256x256xf32> {tg.role = "param", tg.name = "h.1.w"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %c = tg.convert %w : tensor<256x256xf32> -> tensor<256x256xf32>
  %e = tg.matmul %x, %c : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
  %h0 = tg.matmul %e, %w0 : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
  %h1 = tg.matmul %h0, %w1 : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
  %o = tg.matmul %h1, %c : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
  %loss = tg.reduce sum %o dims = [0, 1] : tensor<64x256xf32> -> tensor<f32>
  return %loss : tensor<f32>
}
