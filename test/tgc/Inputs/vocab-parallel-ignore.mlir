// A tiny untied language model whose loss ignores the label 3 (a class id
// like any other, so random labels hit it): a vocabulary of 8, tokens of
// width 8 (test/tgc/vocab-parallel.test).
func.func @lm(%ids: tensor<4x4xi64> {tg.role = "input", tg.name = "input_ids"},
              %labels: tensor<4x4xi64> {tg.role = "label", tg.name = "labels"},
              %table: tensor<8x8xf32> {tg.role = "param", tg.name = "embed.weight"},
              %head: tensor<8x8xf32> {tg.role = "param", tg.name = "head.weight"})
    -> (tensor<f32> {tg.role = "loss", tg.name = "loss"}) {
  %e = tg.embedding %table[%ids] : (tensor<8x8xf32>, tensor<4x4xi64>) -> tensor<4x4x8xf32>
  %h = tg.tanh %e : tensor<4x4x8xf32>
  %logits = tg.matmul %h, %head : (tensor<4x4x8xf32>, tensor<8x8xf32>) -> tensor<4x4x8xf32>
  %loss, %lse = tg.cross_entropy mean %logits, %labels ignore_index = 3 : (tensor<4x4x8xf32>, tensor<4x4xi64>) -> (tensor<f32>, tensor<4x4xf32>)
  return %loss : tensor<f32>
}
