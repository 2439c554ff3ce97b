// Grouped-query attention: 8 query heads share 2 key/value heads.
func.func @attention_grouped_query(%q: tensor<2x8x32x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>) -> (tensor<2x8x32x64xf16>, tensor<2x8x32xf32>) {
  %o, %lse = tg.attention %q, %k, %v causal : (tensor<2x8x32x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) -> (tensor<2x8x32x64xf16>, tensor<2x8x32xf32>)
  return %o, %lse : tensor<2x8x32x64xf16>, tensor<2x8x32xf32>
}
