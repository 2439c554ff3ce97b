// A softmax over an empty last dimension of 4 * 10^8 rows (tgc-fuzz-onnx
// found it through an import): no element to compute, and it took minutes.

func.func @main(%x: tensor<64x2x3x1048576x0xf64>) -> tensor<64x2x3x1048576x0xf64> {
  %0 = tg.softmax %x dim = 4 : tensor<64x2x3x1048576x0xf64>
  return %0 : tensor<64x2x3x1048576x0xf64>
}
