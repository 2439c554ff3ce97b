// A tiny language model whose loss adds PaLM's z-loss, 1e-1 * mean(log(sum
// exp(logits))^2), written out as exp, a sum over the classes and a log: a
// vocabulary of 8 that tp=3 pads to 9 (test/tgc/vocab-parallel.test). The
// padded logits are zero, their exp is not: the sum must not read them.
func.func @lm(%ids: tensor<4x4xi64> {tg.role = "input", tg.name = "input_ids"},
              %labels: tensor<4x4xi64> {tg.role = "label", tg.name = "labels"},
              %table: tensor<8x8xf32> {tg.role = "param", tg.name = "embed.weight"},
              %head: tensor<8x8xf32> {tg.role = "param", tg.name = "head.weight"})
    -> (tensor<f32> {tg.role = "loss", tg.name = "loss"}) {
  %e = tg.embedding %table[%ids] : (tensor<8x8xf32>, tensor<4x4xi64>) -> tensor<4x4x8xf32>
  %h = tg.tanh %e : tensor<4x4x8xf32>
  %logits = tg.matmul %h, %head : (tensor<4x4x8xf32>, tensor<8x8xf32>) -> tensor<4x4x8xf32>
  %ce, %lse = tg.cross_entropy mean %logits, %labels : (tensor<4x4x8xf32>, tensor<4x4xi64>) -> (tensor<f32>, tensor<4x4xf32>)
  %exp = tg.exp %logits : tensor<4x4x8xf32>
  %sum = tg.reduce sum %exp dims = [2] : tensor<4x4x8xf32> -> tensor<4x4xf32>
  %z = tg.log %sum : tensor<4x4xf32>
  %z2 = tg.mul %z, %z : tensor<4x4xf32>
  %mean = tg.reduce mean %z2 dims = [0, 1] : tensor<4x4xf32> -> tensor<f32>
  %weight = tg.constant dense<1.000000e-01> : tensor<f32>
  %zloss = tg.mul %mean, %weight : tensor<f32>
  %loss = tg.add %ce, %zloss : tensor<f32>
  return %loss : tensor<f32>
}
