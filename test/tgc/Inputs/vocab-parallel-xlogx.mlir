// A tiny language model whose loss adds 1e-3 * mean(sum(x * log|x|)) over
// the logits: a vocabulary of 8 that tp=3 pads to 9
// (test/tgc/vocab-parallel.test). The padded logits are zero and their log
// is -inf: the product is NaN there, not zero, and the sum must not read it.
func.func @lm(%ids: tensor<4x4xi64> {tg.role = "input", tg.name = "input_ids"},
              %labels: tensor<4x4xi64> {tg.role = "label", tg.name = "labels"},
              %table: tensor<8x8xf32> {tg.role = "param", tg.name = "embed.weight"},
              %head: tensor<8x8xf32> {tg.role = "param", tg.name = "head.weight"})
    -> (tensor<f32> {tg.role = "loss", tg.name = "loss"}) {
  %e = tg.embedding %table[%ids] : (tensor<8x8xf32>, tensor<4x4xi64>) -> tensor<4x4x8xf32>
  %h = tg.tanh %e : tensor<4x4x8xf32>
  %logits = tg.matmul %h, %head : (tensor<4x4x8xf32>, tensor<8x8xf32>) -> tensor<4x4x8xf32>
  %ce, %lse = tg.cross_entropy mean %logits, %labels : (tensor<4x4x8xf32>, tensor<4x4xi64>) -> (tensor<f32>, tensor<4x4xf32>)
  %abs = tg.abs %logits : tensor<4x4x8xf32>
  %log = tg.log %abs : tensor<4x4x8xf32>
  %xlogx = tg.mul %logits, %log : tensor<4x4x8xf32>
  %sum = tg.reduce sum %xlogx dims = [2] : tensor<4x4x8xf32> -> tensor<4x4xf32>
  %mean = tg.reduce mean %sum dims = [0, 1] : tensor<4x4xf32> -> tensor<f32>
  %weight = tg.constant dense<1.000000e-03> : tensor<f32>
  %term = tg.mul %mean, %weight : tensor<f32>
  %loss = tg.add %ce, %term : tensor<f32>
  return %loss : tensor<f32>
}
