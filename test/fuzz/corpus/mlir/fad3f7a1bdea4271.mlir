// A library call with an epilogue: matmul, bias and GELU in one region.
func.func @fusion_matmul_epilogue(%x: tensor<64x768xbf16>, %w: tensor<768x3072xbf16>, %bias: tensor<64x3072xbf16>) -> tensor<64x3072xbf16> {
  %0 = tg.fusion (%x, %w, %bias) : (tensor<64x768xbf16>, tensor<768x3072xbf16>, tensor<64x3072xbf16>) -> tensor<64x3072xbf16> {
  ^bb0(%bx: tensor<64x768xbf16>, %bw: tensor<768x3072xbf16>, %bb: tensor<64x3072xbf16>):
    %mm = tg.matmul %bx, %bw : (tensor<64x768xbf16>, tensor<768x3072xbf16>) -> tensor<64x3072xbf16>
    %add = tg.add %mm, %bb : tensor<64x3072xbf16>
    %g = tg.gelu tanh %add : tensor<64x3072xbf16>
    tg.yield %g : tensor<64x3072xbf16>
  }
  return %0 : tensor<64x3072xbf16>
}
