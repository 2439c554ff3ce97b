// layer_norm of a bf16 input with f32 scale and bias; the statistics are f32.
func.func @layer_norm_f32_scale_bf16_input(%x: tensor<8x128x768xbf16>, %g: tensor<768xf32>, %b: tensor<768xf32>) -> (tensor<8x128x768xbf16>, tensor<8x128xf32>, tensor<8x128xf32>) {
  %y, %mean, %rstd = tg.layer_norm %x, %g, %b epsilon = 1.000000e-05 : (tensor<8x128x768xbf16>, tensor<768xf32>, tensor<768xf32>) -> (tensor<8x128x768xbf16>, tensor<8x128xf32>, tensor<8x128xf32>)
  return %y, %mean, %rstd : tensor<8x128x768xbf16>, tensor<8x128xf32>, tensor<8x128xf32>
}
