// reshape between shapes of equal element count, scalars and empty tensors.
func.func @reshape(%x: tensor<8x128x768xf32>, %one: tensor<1xf8E4M3FN>,
                   %empty: tensor<0x4xi32>, %mask: tensor<6xi1>) {
  %0 = tg.reshape %x : tensor<8x128x768xf32> -> tensor<1024x768xf32>
  %1 = tg.reshape %one : tensor<1xf8E4M3FN> -> tensor<f8E4M3FN>
  %2 = tg.reshape %1 : tensor<f8E4M3FN> -> tensor<1x1xf8E4M3FN>
  %3 = tg.reshape %empty : tensor<0x4xi32> -> tensor<2x0xi32>
  %4 = tg.reshape %mask : tensor<6xi1> -> tensor<2x3xi1>
  return
}
