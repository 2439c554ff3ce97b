// A linear layer: a rank-2 rhs is shared by every batch of the lhs.
func.func @matmul_shared_rhs(%x: tensor<8x128x768xbf16>, %w: tensor<768x3072xbf16>) -> tensor<8x128x3072xbf16> {
  %0 = tg.matmul %x, %w : (tensor<8x128x768xbf16>, tensor<768x3072xbf16>) -> tensor<8x128x3072xbf16>
  return %0 : tensor<8x128x3072xbf16>
}
