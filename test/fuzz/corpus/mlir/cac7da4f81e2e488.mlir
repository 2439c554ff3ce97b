// Causal attention with an explicit scale.
func.func @attention_causal_scale(%q: tensor<8x12x128x64xbf16>, %k: tensor<8x12x128x64xbf16>, %v: tensor<8x12x128x64xbf16>) -> (tensor<8x12x128x64xbf16>, tensor<8x12x128xf32>) {
  %o, %lse = tg.attention %q, %k, %v causal scale = 1.250000e-01 : (tensor<8x12x128x64xbf16>, tensor<8x12x128x64xbf16>, tensor<8x12x128x64xbf16>) -> (tensor<8x12x128x64xbf16>, tensor<8x12x128xf32>)
  return %o, %lse : tensor<8x12x128x64xbf16>, tensor<8x12x128xf32>
}
