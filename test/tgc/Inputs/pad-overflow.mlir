// tg.pad whose low + size + high wraps around int64 to 2 (size-overflow.test).

func.func @pad(%a: tensor<4x8xf32>) -> tensor<2x8xf32> {
  %0 = tg.pad %a low = [9223372036854775807, 0] high = [9223372036854775807, 0] interior = [0, 0] : tensor<4x8xf32> -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}
