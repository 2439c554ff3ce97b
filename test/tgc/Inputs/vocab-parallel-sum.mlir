// A tiny language model whose table is tied to its output projection (read
// transposed, as GPT-2's) and whose loss sums over the tokens
// (test/tgc/vocab-parallel.test).
func.func @lm(%ids: tensor<4x4xi64> {tg.role = "input", tg.name = "input_ids"},
              %labels: tensor<4x4xi64> {tg.role = "label", tg.name = "labels"},
              %table: tensor<8x8xf32> {tg.role = "param", tg.name = "wte.weight"})
    -> (tensor<f32> {tg.role = "loss", tg.name = "loss"}) {
  %e = tg.embedding %table[%ids] : (tensor<8x8xf32>, tensor<4x4xi64>) -> tensor<4x4x8xf32>
  %h = tg.tanh %e : tensor<4x4x8xf32>
  %logits = tg.matmul %h, %table transpose_b : (tensor<4x4x8xf32>, tensor<8x8xf32>) -> tensor<4x4x8xf32>
  %loss, %lse = tg.cross_entropy sum %logits, %labels : (tensor<4x4x8xf32>, tensor<4x4xi64>) -> (tensor<f32>, tensor<4x4xf32>)
  return %loss : tensor<f32>
}
