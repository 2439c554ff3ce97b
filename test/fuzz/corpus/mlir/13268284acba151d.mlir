// Several inputs of different types and several results.
func.func @fusion_multiple_inputs_results(%p: tensor<8x16xi1>, %a: tensor<8x16xbf16>, %b: tensor<8x16xbf16>) -> (tensor<8x16xbf16>, tensor<8x16xf32>) {
  %0:2 = tg.fusion (%p, %a, %b) : (tensor<8x16xi1>, tensor<8x16xbf16>, tensor<8x16xbf16>) -> (tensor<8x16xbf16>, tensor<8x16xf32>) {
  ^bb0(%xp: tensor<8x16xi1>, %xa: tensor<8x16xbf16>, %xb: tensor<8x16xbf16>):
    %sel = tg.select %xp, %xa, %xb : tensor<8x16xi1>, tensor<8x16xbf16>
    %wide = tg.convert %sel : tensor<8x16xbf16> -> tensor<8x16xf32>
    tg.yield %sel, %wide : tensor<8x16xbf16>, tensor<8x16xf32>
  }
  return %0#0, %0#1 : tensor<8x16xbf16>, tensor<8x16xf32>
}
