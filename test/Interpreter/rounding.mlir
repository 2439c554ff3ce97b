// Precision emulation at the boundaries of each format, with values computed
// by hand: ties to even, overflow, subnormals.
// RUN: tgc run %s --entry bf16_ties --print-values | FileCheck %s --check-prefix=BF16
// RUN: tgc run %s --entry bf16_ties --print-values --precision-emulation off | FileCheck %s --check-prefix=NOEMU
// RUN: tgc run %s --entry f16_edges --print-values | FileCheck %s --check-prefix=F16
// RUN: tgc run %s --entry f8_edges --print-values | FileCheck %s --check-prefix=F8
// RUN: tgc run %s --entry narrow_formats --print-values | FileCheck %s --check-prefix=NARROW

// bf16 has 8 significant bits: 1 + 2^-8 is a tie between 1 and 1 + 2^-7 and
// rounds to the even 1; 1 + 3*2^-8 is a tie that rounds up to 1 + 2^-6; the
// largest bf16 doubled overflows to inf.
// BF16: 0: tensor<3xbf16>
// BF16-NEXT: [1, 1.015625, inf]
// NOEMU: [1.00390625, 1.01171875, inf]
func.func @bf16_ties() -> tensor<3xbf16> {
  %a = tg.constant dense<[1.0, 1.0, 3.3895313892515355e+38]> : tensor<3xbf16>
  %b = tg.constant dense<[0.00390625, 0.01171875, 3.3895313892515355e+38]> : tensor<3xf32>
  %bb = tg.convert %b : tensor<3xf32> -> tensor<3xbf16>
  %s = tg.add %a, %bb : tensor<3xbf16>
  return %s : tensor<3xbf16>
}

// f16: 65504 is the largest; 65519 rounds to it, 65520 (the tie with 2^16)
// overflows to inf; 2^-25 is half the smallest subnormal and ties to 0;
// 3 * 2^-25 rounds to 2^-23.
// F16: 0: tensor<5xf16>
// F16-NEXT: [65504, 65504, inf, 0, 1.1920929e-07]
func.func @f16_edges() -> tensor<5xf16> {
  %a = tg.constant dense<[65504.0, 65519.0, 65520.0, 2.9802322387695312e-08, 8.940696716308594e-08]> : tensor<5xf32>
  %h = tg.convert %a : tensor<5xf32> -> tensor<5xf16>
  return %h : tensor<5xf16>
}

// f8E4M3FN has no infinity: 464 ties to the even 448, 465 is NaN; its
// smallest subnormal is 2^-9, and 2^-10 ties to 0. f8E5M2 overflows to inf.
// F8: 0: tensor<4xf8E4M3FN>
// F8-NEXT: [448, nan, 0.001953125, 0]
// F8: 1: tensor<2xf8E5M2>
// F8-NEXT: [57344, inf]
func.func @f8_edges() -> (tensor<4xf8E4M3FN>, tensor<2xf8E5M2>) {
  %a = tg.constant dense<[464.0, 465.0, 0.001953125, 0.0009765625]> : tensor<4xf32>
  %e4 = tg.convert %a : tensor<4xf32> -> tensor<4xf8E4M3FN>
  %b = tg.constant dense<[57344.0, 61440.0]> : tensor<2xf32>
  %e5 = tg.convert %b : tensor<2xf32> -> tensor<2xf8E5M2>
  return %e4, %e5 : tensor<4xf8E4M3FN>, tensor<2xf8E5M2>
}

// The imported storage formats. f8E4M3FNUZ: 240 is the largest, 248 (the
// tie with 256) overflows to NaN, there is no -0 (-2^-11 ties to +0).
// f4E2M1FN has neither infinity nor NaN: beyond 6 saturates, from f32 and
// from f64 alike, and NaN becomes 0; 0.25 and 2.5 tie to the even 0 and 2.
// i4 wraps like the other integers; ui2 from i64 keeps the low two bits.
// NARROW: 0: tensor<4xf8E4M3FNUZ>
// NARROW-NEXT: [240, nan, 0, 0.0009765625]
// NARROW: 1: tensor<6xf4E2M1FN>
// NARROW-NEXT: [0, 2, 6, -6, 6, 0]
// NARROW: 2: tensor<3xf4E2M1FN>
// NARROW-NEXT: [6, -6, 0]
// NARROW: 3: tensor<3xi4>
// NARROW-NEXT: [-8, 7, -1]
// NARROW: 4: tensor<3xui2>
// NARROW-NEXT: [1, 3, 0]
func.func @narrow_formats() -> (tensor<4xf8E4M3FNUZ>, tensor<6xf4E2M1FN>,
                                tensor<3xf4E2M1FN>, tensor<3xi4>,
                                tensor<3xui2>) {
  %a = tg.constant dense<[240.0, 248.0, -0.00048828125, 0.0009765625]> : tensor<4xf32>
  %e4 = tg.convert %a : tensor<4xf32> -> tensor<4xf8E4M3FNUZ>
  %b = tg.constant dense<[0.25, 2.5, 7.0, -1.0e30, 0x7F800000, 0x7FC00000]> : tensor<6xf32>
  %f4 = tg.convert %b : tensor<6xf32> -> tensor<6xf4E2M1FN>
  %c = tg.constant dense<[1.0e300, 0xFFF0000000000000, 0x7FF8000000000000]> : tensor<3xf64>
  %g4 = tg.convert %c : tensor<3xf64> -> tensor<3xf4E2M1FN>
  %i = tg.constant dense<[7, 7, 7]> : tensor<3xi4>
  %d = tg.constant dense<[1, 0, -8]> : tensor<3xi4>
  %s = tg.add %i, %d : tensor<3xi4>
  %w = tg.constant dense<[5, -1, 4]> : tensor<3xi64>
  %u = tg.convert %w : tensor<3xi64> -> tensor<3xui2>
  return %e4, %f4, %g4, %s, %u : tensor<4xf8E4M3FNUZ>, tensor<6xf4E2M1FN>,
                                 tensor<3xf4E2M1FN>, tensor<3xi4>, tensor<3xui2>
}

// f8E8M0FNU holds powers of two: 1.5 rounds up to 2, 1.4 down to 1, 0
// becomes 2^-127, a negative value NaN.
// RUN: tgc run %s --entry e8m0 --print-values | FileCheck %s --check-prefix=E8M0
// E8M0: 0: tensor<5xf8E8M0FNU>
// E8M0-NEXT: [2, 1, 5.877{{[0-9]*}}e-39, nan, 4]
func.func @e8m0() -> tensor<5xf8E8M0FNU> {
  %a = tg.constant dense<[1.5, 1.4, 0.0, -2.0, 3.0]> : tensor<5xf32>
  %e = tg.convert %a : tensor<5xf32> -> tensor<5xf8E8M0FNU>
  return %e : tensor<5xf8E8M0FNU>
}
