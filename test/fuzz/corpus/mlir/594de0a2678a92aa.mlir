// dropout of bf16 values with an i32 seed.
func.func @dropout_bf16_i32_seed(%x: tensor<16xbf16>, %seed: tensor<i32>) -> tensor<16xbf16> {
  %0 = tg.dropout %x, %seed rate = 5.000000e-01 stream = 0 : tensor<16xbf16>, tensor<i32>
  return %0 : tensor<16xbf16>
}
