// Two expert stacks on the same routed rows (a router's top-1 expert of
// each token): one of 4 experts, one of 3 (whose ids are the first's
// clamped to 2). dp=2 splits the first on its experts; the second's 3
// experts stay whole.
func.func @main(%x: tensor<8x4xf32> {tg.role = "input", tg.name = "x"},
    %router: tensor<4x4xf32> {tg.role = "param", tg.name = "router"},
    %w4: tensor<4x4x6xf32> {tg.role = "param", tg.name = "experts4"},
    %w3: tensor<3x6x4xf32> {tg.role = "param", tg.name = "experts3"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %logits = tg.matmul %x, %router : (tensor<8x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
  %best, %top = tg.top_k %logits k = 1 : tensor<8x4xf32> -> tensor<8x1xf32>, tensor<8x1xi64>
  %ids = tg.reshape %top : tensor<8x1xi64> -> tensor<8xi64>
  %h = tg.expert_matmul %x, %w4[%ids] : (tensor<8x4xf32>, tensor<4x4x6xf32>, tensor<8xi64>) -> tensor<8x6xf32>
  %a = tg.silu %h : tensor<8x6xf32>
  %two = tg.constant dense<2> : tensor<8xi64>
  %ids3 = tg.min %ids, %two : tensor<8xi64>
  %y = tg.expert_matmul %a, %w3[%ids3] : (tensor<8x6xf32>, tensor<3x6x4xf32>, tensor<8xi64>) -> tensor<8x4xf32>
  %weight = tg.broadcast_in_dim %best dims = [0, 1] : tensor<8x1xf32> -> tensor<8x4xf32>
  %scaled = tg.mul %y, %weight : tensor<8x4xf32>
  %sq = tg.mul %scaled, %scaled : tensor<8x4xf32>
  %sum = tg.reduce sum %sq dims = [0, 1] : tensor<8x4xf32> -> tensor<f32>
  %scale = tg.constant dense<1.0e+06> : tensor<f32>
  %loss = tg.mul %sum, %scale : tensor<f32>
  return %loss : tensor<f32>
}
