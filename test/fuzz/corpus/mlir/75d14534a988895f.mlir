// rms_norm has one statistic, rstd.
func.func @rms_norm(%x: tensor<2x64x256xf32>, %g: tensor<256xf32>) -> (tensor<2x64x256xf32>, tensor<2x64xf32>) {
  %y, %rstd = tg.rms_norm %x, %g epsilon = 1.000000e-05 : (tensor<2x64x256xf32>, tensor<256xf32>) -> (tensor<2x64x256xf32>, tensor<2x64xf32>)
  return %y, %rstd : tensor<2x64x256xf32>, tensor<2x64xf32>
}
