// Causal attention with fewer queries than keys, and a value head size (32) other than D (64).
func.func @attention_causal_fewer_queries(%q: tensor<1x4x16x64xf32>, %k: tensor<1x4x48x64xf32>, %v: tensor<1x4x48x32xf32>) -> (tensor<1x4x16x32xf32>, tensor<1x4x16xf32>) {
  %o, %lse = tg.attention %q, %k, %v causal : (tensor<1x4x16x64xf32>, tensor<1x4x48x64xf32>, tensor<1x4x48x32xf32>) -> (tensor<1x4x16x32xf32>, tensor<1x4x16xf32>)
  return %o, %lse : tensor<1x4x16x32xf32>, tensor<1x4x16xf32>
}
