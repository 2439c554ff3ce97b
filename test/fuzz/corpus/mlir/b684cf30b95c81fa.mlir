// layer_norm_grad of a bf16 input with an f32 scale: the parameter gradients have the scale's type.
func.func @layer_norm_grad_bf16_input_f32_scale(%dy: tensor<8x128x768xbf16>, %x: tensor<8x128x768xbf16>, %mean: tensor<8x128xf32>, %rstd: tensor<8x128xf32>, %g: tensor<768xf32>) -> (tensor<8x128x768xbf16>, tensor<768xf32>, tensor<768xf32>) {
  %dx, %dg, %db = tg.layer_norm_grad %dy, %x, %mean, %rstd, %g : (tensor<8x128x768xbf16>, tensor<8x128x768xbf16>, tensor<8x128xf32>, tensor<8x128xf32>, tensor<768xf32>) -> (tensor<8x128x768xbf16>, tensor<768xf32>, tensor<768xf32>)
  return %dx, %dg, %db : tensor<8x128x768xbf16>, tensor<768xf32>, tensor<768xf32>
}
