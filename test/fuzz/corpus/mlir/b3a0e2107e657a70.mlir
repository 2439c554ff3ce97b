// log_softmax along a middle dimension of a bf16 tensor.
func.func @log_softmax_middle_dim(%x: tensor<4x10x6xbf16>) -> tensor<4x10x6xbf16> {
  %0 = tg.log_softmax %x dim = 1 : tensor<4x10x6xbf16>
  return %0 : tensor<4x10x6xbf16>
}
