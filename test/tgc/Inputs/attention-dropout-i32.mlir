// Attention dropout with an i32 seed and an i32 offset (AttentionDesc's
// seedType and offsetType): a causal grouped-query attention, then one
// drawn as a device's block of the heads would draw it (an offset and the
// whole probabilities' shape: the emitter's index levels).
func.func @attention_dropout_i32(
    %q: tensor<1x4x3x8xf32> {tg.role = "param", tg.name = "q"},
    %k: tensor<1x2x5x8xf32> {tg.role = "param", tg.name = "k"},
    %v: tensor<1x2x5x8xf32> {tg.role = "param", tg.name = "v"},
    %seed: tensor<i32> {tg.role = "hyper", tg.name = "dropout_seed"},
    %c: tensor<1x4x3x8xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y, %lse = tg.attention %q, %k, %v causal scale = 3.000000e+00 dropout = 4.000000e-01 seed %seed stream = 5 : (tensor<1x4x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>, tensor<i32>) -> (tensor<1x4x3x8xf32>, tensor<1x4x3xf32>)
  %offset = tg.constant dense<60> : tensor<i32>
  %z, %lse2 = tg.attention %y, %y, %y scale = 2.000000e+00 dropout = 2.500000e-01 seed %seed offset %offset stream = 6 of [2, 8, 3, 3] : (tensor<1x4x3x8xf32>, tensor<1x4x3x8xf32>, tensor<1x4x3x8xf32>, tensor<i32>, tensor<i32>) -> (tensor<1x4x3x8xf32>, tensor<1x4x3xf32>)
  %w = tg.mul %z, %c : tensor<1x4x3x8xf32>
  %loss = tg.reduce sum %w dims = [0, 1, 2, 3] : tensor<1x4x3x8xf32> -> tensor<f32>
  return %loss : tensor<f32>
}
