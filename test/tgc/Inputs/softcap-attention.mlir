// A soft-capped causal attention over trained q, k and v (no bias), with a
// loss of its output's squares: what emit-cuda.test compiles to check that
// the soft cap travels in the AttentionDesc without a bias, and that
// codegen-host-attention-softcap-nobias trains against tgc train. The
// seeded parameters are small: a scale of 1000 brings their scores near 1,
// where the cap of 1 bends them.
func.func @softcap_attention(
    %q: tensor<1x4x8x16xf32> {tg.role = "param", tg.name = "q"},
    %k: tensor<1x2x8x16xf32> {tg.role = "param", tg.name = "k"},
    %v: tensor<1x2x8x16xf32> {tg.role = "param", tg.name = "v"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y, %lse = tg.attention %q, %k, %v causal scale = 1.000000e+03 softcap = 1.000000e+00 : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x4x8xf32>)
  %w = tg.mul %y, %y : tensor<1x4x8x16xf32>
  %loss = tg.reduce sum %w dims = [0, 1, 2, 3] : tensor<1x4x8x16xf32> -> tensor<f32>
  return %loss : tensor<f32>
}
