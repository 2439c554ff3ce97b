// A training step with ui64 values: what --emit cuda refuses.
func.func @uint64_step(%w: tensor<4xf32> {tg.role = "param", tg.name = "w"},
                       %n: tensor<4xui64> {tg.role = "input", tg.name = "n"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %two = tg.constant dense<2> : tensor<4xui64>
  %half = tg.div %n, %two : tensor<4xui64>
  %f = tg.convert %half : tensor<4xui64> -> tensor<4xf32>
  %y = tg.mul %w, %f : tensor<4xf32>
  %loss = tg.reduce sum %y dims = [0] : tensor<4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}
