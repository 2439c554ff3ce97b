// A step whose batch holds no rows: an example file cannot feed it
// (test/tgc/train-examples.test).

func.func @empty(%x: tensor<0x4xf32> {tg.name = "x", tg.role = "input"}, %w: tensor<4x2xf32> {tg.name = "w", tg.role = "param"}) -> (tensor<f32> {tg.name = "loss", tg.role = "loss"}) {
  %y = tg.matmul %x, %w : (tensor<0x4xf32>, tensor<4x2xf32>) -> tensor<0x2xf32>
  %l = tg.reduce sum %y dims = [0, 1] : tensor<0x2xf32> -> tensor<f32>
  return %l : tensor<f32>
}
