// rms_norm_grad of a bf16 input with a bf16 scale.
func.func @rms_norm_grad_bf16(%dy: tensor<16x32xbf16>, %x: tensor<16x32xbf16>, %rstd: tensor<16xf32>, %g: tensor<32xbf16>) -> (tensor<16x32xbf16>, tensor<32xbf16>) {
  %dx, %dg = tg.rms_norm_grad %dy, %x, %rstd, %g : (tensor<16x32xbf16>, tensor<16x32xbf16>, tensor<16xf32>, tensor<32xbf16>) -> (tensor<16x32xbf16>, tensor<32xbf16>)
  return %dx, %dg : tensor<16x32xbf16>, tensor<32xbf16>
}
