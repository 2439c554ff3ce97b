// slice prints `start:limit` and adds `:stride` only where the stride is not 1.
func.func @slice(%x: tensor<4x16xf32>, %qkv: tensor<8x128x2304xbf16>) {
  %0 = tg.slice %x [0:4, 0:16:2] : tensor<4x16xf32> -> tensor<4x8xf32>
  %1 = tg.slice %x [1:4:2, 3:16:5] : tensor<4x16xf32> -> tensor<2x3xf32>
  %2 = tg.slice %x [0:4:1, 0:16] : tensor<4x16xf32> -> tensor<4x16xf32>
  %3 = tg.slice %x [2:2, 16:16] : tensor<4x16xf32> -> tensor<0x0xf32>
  %4 = tg.slice %qkv [0:8, 0:128, 768:1536] : tensor<8x128x2304xbf16> -> tensor<8x128x768xbf16>
  return
}
