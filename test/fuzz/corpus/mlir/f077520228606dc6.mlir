// Attention without causal or scale prints neither keyword.
func.func @attention_default(%q: tensor<8x12x128x64xbf16>, %k: tensor<8x12x128x64xbf16>, %v: tensor<8x12x128x64xbf16>) -> (tensor<8x12x128x64xbf16>, tensor<8x12x128xf32>) {
  %o, %lse = tg.attention %q, %k, %v : (tensor<8x12x128x64xbf16>, tensor<8x12x128x64xbf16>, tensor<8x12x128x64xbf16>) -> (tensor<8x12x128x64xbf16>, tensor<8x12x128xf32>)
  return %o, %lse : tensor<8x12x128x64xbf16>, tensor<8x12x128xf32>
}
