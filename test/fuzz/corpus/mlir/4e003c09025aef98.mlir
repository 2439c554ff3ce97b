// Reducing every dimension gives a scalar (a rank-0 tensor).
func.func @reduce_to_scalar(%x: tensor<4x6xf16>) -> tensor<f16> {
  %0 = tg.reduce sum %x dims = [0, 1] : tensor<4x6xf16> -> tensor<f16>
  return %0 : tensor<f16>
}
