// attention_grad with a scale but not causal.
func.func @attention_grad_scale_only(%q: tensor<1x1x4x16xf32>, %lse: tensor<1x1x4xf32>) -> (tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>) {
  %dq, %dk, %dv = tg.attention_grad %q, %q, %q, %q, %q, %lse scale = 5.000000e-01 : (tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4xf32>) -> (tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>)
  return %dq, %dk, %dv : tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>
}
