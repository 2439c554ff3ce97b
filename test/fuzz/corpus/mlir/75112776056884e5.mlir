// Every float-only unary op on f32.
func.func @unary_f32(%x: tensor<2x3xf32>) {
  %0 = tg.exp %x : tensor<2x3xf32>
  %1 = tg.log %x : tensor<2x3xf32>
  %2 = tg.sqrt %x : tensor<2x3xf32>
  %3 = tg.rsqrt %x : tensor<2x3xf32>
  %4 = tg.tanh %x : tensor<2x3xf32>
  %5 = tg.erf %x : tensor<2x3xf32>
  %6 = tg.sigmoid %x : tensor<2x3xf32>
  %7 = tg.relu %x : tensor<2x3xf32>
  %8 = tg.silu %x : tensor<2x3xf32>
  %9 = tg.sin %x : tensor<2x3xf32>
  %10 = tg.cos %x : tensor<2x3xf32>
  return
}
