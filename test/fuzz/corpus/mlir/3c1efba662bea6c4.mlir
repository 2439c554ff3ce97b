// rms_norm_grad has one statistic, rstd, and no bias gradient.
func.func @rms_norm_grad(%dy: tensor<2x64x256xf32>, %x: tensor<2x64x256xf32>, %rstd: tensor<2x64xf32>, %g: tensor<256xf32>) -> (tensor<2x64x256xf32>, tensor<256xf32>) {
  %dx, %dg = tg.rms_norm_grad %dy, %x, %rstd, %g : (tensor<2x64x256xf32>, tensor<2x64x256xf32>, tensor<2x64xf32>, tensor<256xf32>) -> (tensor<2x64x256xf32>, tensor<256xf32>)
  return %dx, %dg : tensor<2x64x256xf32>, tensor<256xf32>
}
