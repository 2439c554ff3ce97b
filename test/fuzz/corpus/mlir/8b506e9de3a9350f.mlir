// Grouped-query attention_grad: the key/value gradients have the key/value heads (2), not the query heads (8).
func.func @attention_grad_grouped_query(%do: tensor<2x8x32x16xf16>, %q: tensor<2x8x32x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x16xf16>, %o: tensor<2x8x32x16xf16>, %lse: tensor<2x8x32xf32>) -> (tensor<2x8x32x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x16xf16>) {
  %dq, %dk, %dv = tg.attention_grad %do, %q, %k, %v, %o, %lse causal : (tensor<2x8x32x16xf16>, tensor<2x8x32x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x16xf16>, tensor<2x8x32x16xf16>, tensor<2x8x32xf32>) -> (tensor<2x8x32x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x16xf16>)
  return %dq, %dk, %dv : tensor<2x8x32x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x16xf16>
}
