// The mixed-precision ops round-trip.
func.func @precision_ops(%x: tensor<2x4xf16>, %s: tensor<f32>, %y: tensor<2x4xbf16>, %h: tensor<16xf32>)
    -> (tensor<2x4xf16>, tensor<2x4xbf16>, tensor<2x4xbf16>) {
  %0 = tg.scale_grad %x, %s : tensor<2x4xf16>, tensor<f32>
  %1 = tg.fake_quant %y, %h format = f8E4M3FN margin = 0 : tensor<2x4xbf16>, tensor<16xf32>
  %2 = tg.fake_quant_grad %y, %h format = f8E5M2 margin = 2 : tensor<2x4xbf16>, tensor<16xf32>
  return %0, %1, %2 : tensor<2x4xf16>, tensor<2x4xbf16>, tensor<2x4xbf16>
}
