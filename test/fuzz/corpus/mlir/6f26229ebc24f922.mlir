// A scale without causal.
func.func @attention_scale_only(%q: tensor<1x1x4x16xf32>) -> (tensor<1x1x4x16xf32>, tensor<1x1x4xf32>) {
  %o, %lse = tg.attention %q, %q, %q scale = 5.000000e-01 : (tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>) -> (tensor<1x1x4x16xf32>, tensor<1x1x4xf32>)
  return %o, %lse : tensor<1x1x4x16xf32>, tensor<1x1x4xf32>
}
