// The unsharded step (forward and backward) of a two-layer tanh MLP with the
// loss sum(y * y), that ranks-pipeline.mlir cuts into two pipeline stages.
func.func @main(%x: tensor<8x4xf32> {tg.role = "input", tg.name = "x"},
                %w1: tensor<4x6xf32> {tg.role = "param", tg.name = "w1"},
                %w2: tensor<6x4xf32> {tg.role = "param", tg.name = "w2"})
    -> (tensor<f32> {tg.role = "loss", tg.name = "loss"},
        tensor<4x6xf32> {tg.role = "grad", tg.name = "w1.grad"},
        tensor<6x4xf32> {tg.role = "grad", tg.name = "w2.grad"},
        tensor<8x4xf32> {tg.role = "output", tg.name = "y"},
        tensor<4x6xf32> {tg.role = "param", tg.name = "w1.copy"}) {
  %h = tg.matmul %x, %w1 : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
  %a = tg.tanh %h : tensor<8x6xf32>
  %y = tg.matmul %a, %w2 : (tensor<8x6xf32>, tensor<6x4xf32>) -> tensor<8x4xf32>
  %yy = tg.mul %y, %y : tensor<8x4xf32>
  %loss = tg.reduce sum %yy dims = [0, 1] : tensor<8x4xf32> -> tensor<f32>
  %dy = tg.add %y, %y : tensor<8x4xf32>
  %dw2 = tg.matmul %a, %dy transpose_a : (tensor<8x6xf32>, tensor<8x4xf32>) -> tensor<6x4xf32>
  %da = tg.matmul %dy, %w2 transpose_b : (tensor<8x4xf32>, tensor<6x4xf32>) -> tensor<8x6xf32>
  %one = tg.constant dense<1.0> : tensor<8x6xf32>
  %aa = tg.mul %a, %a : tensor<8x6xf32>
  %slope = tg.sub %one, %aa : tensor<8x6xf32>
  %dh = tg.mul %da, %slope : tensor<8x6xf32>
  %dw1 = tg.matmul %x, %dh transpose_a : (tensor<8x4xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
  return %loss, %dw1, %dw2, %y, %w1 : tensor<f32>, tensor<4x6xf32>, tensor<6x4xf32>, tensor<8x4xf32>, tensor<4x6xf32>
}
