// attention_grad without causal or scale prints neither keyword.
func.func @attention_grad(%do: tensor<2x4x16x32xf32>, %q: tensor<2x4x16x32xf32>, %k: tensor<2x4x16x32xf32>, %v: tensor<2x4x16x32xf32>, %o: tensor<2x4x16x32xf32>, %lse: tensor<2x4x16xf32>) -> (tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>) {
  %dq, %dk, %dv = tg.attention_grad %do, %q, %k, %v, %o, %lse : (tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16xf32>) -> (tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>)
  return %dq, %dk, %dv : tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>
}
