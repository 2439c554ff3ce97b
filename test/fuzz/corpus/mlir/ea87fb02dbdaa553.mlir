// attention_grad with causal and scale, as the forward had them (bf16, fewer queries than keys).
func.func @attention_grad_causal_scale(%do: tensor<8x12x64x64xbf16>, %q: tensor<8x12x64x64xbf16>, %k: tensor<8x12x128x64xbf16>, %v: tensor<8x12x128x64xbf16>, %o: tensor<8x12x64x64xbf16>, %lse: tensor<8x12x64xf32>) -> (tensor<8x12x64x64xbf16>, tensor<8x12x128x64xbf16>, tensor<8x12x128x64xbf16>) {
  %dq, %dk, %dv = tg.attention_grad %do, %q, %k, %v, %o, %lse causal scale = 1.250000e-01 : (tensor<8x12x64x64xbf16>, tensor<8x12x64x64xbf16>, tensor<8x12x128x64xbf16>, tensor<8x12x128x64xbf16>, tensor<8x12x64x64xbf16>, tensor<8x12x64xf32>) -> (tensor<8x12x64x64xbf16>, tensor<8x12x128x64xbf16>, tensor<8x12x128x64xbf16>)
  return %dq, %dk, %dv : tensor<8x12x64x64xbf16>, tensor<8x12x128x64xbf16>, tensor<8x12x128x64xbf16>
}
