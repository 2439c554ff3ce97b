// The bitwise ops and bitcasts in a training step: |c| by clearing the f32
// sign bit, a bf16 value's bits flipped in its low mantissa bit, a ui8 and
// an i16 mask built with and, or, xor and not (zero-extended ui8: ~x must
// stay within 0..255 inside a fused kernel), an i1 xor, and an i1 bitcast
// to ui8; the weights' gradient reaches them through multiplications by
// these values (the bitwise ops themselves carry none).
func.func @bitwise_step(
    %w: tensor<4x8xf32> {tg.role = "param", tg.name = "w"},
    %c: tensor<4x8xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %bits = tg.bitcast %c : tensor<4x8xf32> -> tensor<4x8xi32>
  %magnitude = tg.constant dense<2147483647> : tensor<4x8xi32>
  %cleared = tg.bitwise and, %bits, %magnitude : tensor<4x8xi32>
  %abs = tg.bitcast %cleared : tensor<4x8xi32> -> tensor<4x8xf32>
  %half = tg.convert %c : tensor<4x8xf32> -> tensor<4x8xbf16>
  %hbits = tg.bitcast %half : tensor<4x8xbf16> -> tensor<4x8xi16>
  %one16 = tg.constant dense<1> : tensor<4x8xi16>
  %flipped = tg.bitwise xor, %hbits, %one16 : tensor<4x8xi16>
  %nudged = tg.bitcast %flipped : tensor<4x8xi16> -> tensor<4x8xbf16>
  %nudged32 = tg.convert %nudged : tensor<4x8xbf16> -> tensor<4x8xf32>
  %iota = tg.constant dense<[[0, 1, 2, 3, 4, 5, 6, 7], [8, 9, 10, 11, 12, 13, 14, 15], [16, 17, 18, 19, 20, 21, 22, 23], [24, 25, 26, 27, 28, 29, 30, 31]]> : tensor<4x8xui8>
  %low = tg.constant dense<5> : tensor<4x8xui8>
  %masked = tg.bitwise and, %iota, %low : tensor<4x8xui8>
  %high = tg.constant dense<16> : tensor<4x8xui8>
  %mixed = tg.bitwise or, %masked, %high : tensor<4x8xui8>
  %inverted = tg.bitwise_not %mixed : tensor<4x8xui8>
  %threshold = tg.constant dense<236> : tensor<4x8xui8>
  %keep = tg.compare gt, %inverted, %threshold : tensor<4x8xui8>
  %odd = tg.compare ne, %masked, %low : tensor<4x8xui8>
  %both = tg.bitwise xor, %keep, %odd : tensor<4x8xi1>
  %byte = tg.bitcast %both : tensor<4x8xi1> -> tensor<4x8xui8>
  %scale = tg.convert %byte : tensor<4x8xui8> -> tensor<4x8xf32>
  %a = tg.mul %w, %abs : tensor<4x8xf32>
  %b = tg.mul %a, %nudged32 : tensor<4x8xf32>
  %d = tg.mul %b, %scale : tensor<4x8xf32>
  %e = tg.mul %d, %d : tensor<4x8xf32>
  %loss = tg.reduce sum %e dims = [0, 1] : tensor<4x8xf32> -> tensor<f32>
  return %loss : tensor<f32>
}
