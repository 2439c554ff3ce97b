// An argument whose byte size does not fit in int64 (size-overflow.test):
// the peak was -16 bytes and the FLOPs -2.

func.func @huge(%a: tensor<9223372036854775807x2xf32>) -> tensor<9223372036854775807x2xf32> {
  return %a : tensor<9223372036854775807x2xf32>
}
