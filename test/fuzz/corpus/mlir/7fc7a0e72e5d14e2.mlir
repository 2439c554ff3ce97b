// A training step: every role, tg.aliases on the new param and state, names reused across sides.
func.func @train_step(
    %w: tensor<16x4xf32> {tg.role = "param", tg.name = "fc.weight"},
    %m: tensor<16x4xf32> {tg.role = "state", tg.name = "fc.weight.momentum"},
    %x: tensor<8x16xf32> {tg.role = "input", tg.name = "x"},
    %y: tensor<8xi64> {tg.role = "label", tg.name = "y"},
    %lr: tensor<f32> {tg.role = "hyper", tg.name = "lr"})
    -> (tensor<f32> {tg.role = "loss", tg.name = "loss"},
        tensor<16x4xf32> {tg.role = "grad", tg.name = "fc.weight.grad"},
        tensor<16x4xf32> {tg.role = "param", tg.name = "fc.weight", tg.aliases = 0},
        tensor<16x4xf32> {tg.role = "state", tg.name = "fc.weight.momentum", tg.aliases = 1},
        tensor<8x4xf32> {tg.role = "output", tg.name = "logits"}) {
  %logits = tg.matmul %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %loss, %lse = tg.cross_entropy mean %logits, %y : (tensor<8x4xf32>, tensor<8xi64>) -> (tensor<f32>, tensor<8xf32>)
  %p = tg.softmax %logits dim = 1 : tensor<8x4xf32>
  %g = tg.matmul %x, %p transpose_a : (tensor<8x16xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
  %m2 = tg.add %m, %g : tensor<16x4xf32>
  %lrb = tg.broadcast_in_dim %lr dims = [] : tensor<f32> -> tensor<16x4xf32>
  %step = tg.mul %lrb, %m2 : tensor<16x4xf32>
  %w2 = tg.sub %w, %step : tensor<16x4xf32>
  return %loss, %g, %w2, %m2, %logits : tensor<f32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<8x4xf32>
}
