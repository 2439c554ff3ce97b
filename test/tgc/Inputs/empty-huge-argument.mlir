// An empty tensor beside a dimension of 2^63 - 1 (size-overflow.test): it
// holds nothing, but its strides overflow int64 (tgc-fuzz-onnx found it
// through the interpreter's reductions).

func.func @empty(%a: tensor<0x9223372036854775807xf32>) -> tensor<0x9223372036854775807xf32> {
  return %a : tensor<0x9223372036854775807xf32>
}
