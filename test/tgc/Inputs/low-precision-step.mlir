// ONNX's low-precision element types in a training step's kernels, each
// stored one element a byte: f8E4M3FNUZ and f8E5M2FNUZ (no -0, NaN where
// -0 would be), f4E2M1FN, f8E8M0FNU (powers of two), i4 arithmetic that
// wraps, ui4, i2 and ui2, and bitcasts between them and i8 in the low bits;
// an f8E4M3FNUZ parameter, saved as F32 (safetensors has no name for it).
func.func @lp_step(
    %w: tensor<4x8xf32> {tg.role = "param", tg.name = "w"},
    %m: tensor<4x8xf8E4M3FNUZ> {tg.role = "param", tg.name = "m"},
    %c: tensor<4x8xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %q = tg.convert %c : tensor<4x8xf32> -> tensor<4x8xf8E4M3FNUZ>
  %qf = tg.convert %q : tensor<4x8xf8E4M3FNUZ> -> tensor<4x8xf32>
  %q5 = tg.convert %c : tensor<4x8xf32> -> tensor<4x8xf8E5M2FNUZ>
  %q5b = tg.bitcast %q5 : tensor<4x8xf8E5M2FNUZ> -> tensor<4x8xi8>
  %q5f = tg.convert %q5b : tensor<4x8xi8> -> tensor<4x8xf32>
  %q4 = tg.convert %c : tensor<4x8xf32> -> tensor<4x8xf4E2M1FN>
  %q4b = tg.bitcast %q4 : tensor<4x8xf4E2M1FN> -> tensor<4x8xi4>
  %q4f = tg.convert %q4b : tensor<4x8xi4> -> tensor<4x8xf32>
  %cabs = tg.abs %c : tensor<4x8xf32>
  %e8 = tg.convert %cabs : tensor<4x8xf32> -> tensor<4x8xf8E8M0FNU>
  %e8f = tg.convert %e8 : tensor<4x8xf8E8M0FNU> -> tensor<4x8xf32>
  %i4 = tg.constant dense<[[-8, -7, -1, 0, 1, 2, 6, 7], [-8, -7, -1, 0, 1, 2, 6, 7], [-8, -7, -1, 0, 1, 2, 6, 7], [-8, -7, -1, 0, 1, 2, 6, 7]]> : tensor<4x8xi4>
  %three = tg.constant dense<3> : tensor<4x8xi4>
  %i4s = tg.add %i4, %three : tensor<4x8xi4>
  %u4 = tg.bitcast %i4s : tensor<4x8xi4> -> tensor<4x8xui4>
  %u4f = tg.convert %u4 : tensor<4x8xui4> -> tensor<4x8xf32>
  %f4 = tg.bitcast %u4 : tensor<4x8xui4> -> tensor<4x8xf4E2M1FN>
  %f4f = tg.convert %f4 : tensor<4x8xf4E2M1FN> -> tensor<4x8xf32>
  %i2 = tg.convert %c : tensor<4x8xf32> -> tensor<4x8xi2>
  %u2 = tg.bitcast %i2 : tensor<4x8xi2> -> tensor<4x8xui2>
  %u2f = tg.convert %u2 : tensor<4x8xui2> -> tensor<4x8xf32>
  %i2f = tg.convert %i2 : tensor<4x8xi2> -> tensor<4x8xf32>
  %mf = tg.convert %m : tensor<4x8xf8E4M3FNUZ> -> tensor<4x8xf32>
  %a0 = tg.mul %w, %qf : tensor<4x8xf32>
  %a = tg.add %a0, %mf : tensor<4x8xf32>
  %a2 = tg.add %a, %q5f : tensor<4x8xf32>
  %b = tg.mul %a2, %q4f : tensor<4x8xf32>
  %b2 = tg.add %b, %e8f : tensor<4x8xf32>
  %d = tg.mul %b2, %u4f : tensor<4x8xf32>
  %d2 = tg.add %d, %f4f : tensor<4x8xf32>
  %d3 = tg.mul %d2, %u2f : tensor<4x8xf32>
  %d4 = tg.add %d3, %i2f : tensor<4x8xf32>
  %small = tg.constant dense<0.001> : tensor<4x8xf32>
  %d5 = tg.mul %d4, %small : tensor<4x8xf32>
  %e = tg.mul %d5, %d5 : tensor<4x8xf32>
  %loss = tg.reduce sum %e dims = [0, 1] : tensor<4x8xf32> -> tensor<f32>
  return %loss : tensor<f32>
}
