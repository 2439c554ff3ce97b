// tg.fake_quant on the interpreter, values computed by hand.
// RUN: tgc run %s --print-values | FileCheck %s

// f8E4M3FN with the history's amax 4: scale 2^floor(log2(448 / 4)) = 64.
// 0.3 * 64 = 19.2 rounds to 20 (spacing 2), -2.7 * 64 = -172.8 to -176
// (spacing 16), 500 * 64 saturates at 448; divided by 64 again.
// CHECK: 0: tensor<4xbf16>
// CHECK-NEXT: [1, 0.3125, -2.75, 7]
// f8E5M2 with an empty history (amax 0): scale 1. 1e-3 rounds to 2^-10,
// 3e-7 is below half the smallest subnormal (2^-16), -50 rounds to -48
// (spacing 8). With margin 1 the scale halves: 0.3 * 32 = 9.6 rounds to 10.
// CHECK: 1: tensor<4xf32>
// CHECK-NEXT: [0.0009765625, 0, -48, 0]
// CHECK: 2: tensor<1xbf16>
// CHECK-NEXT: [0.3125]
// tg.scale_grad and tg.fake_quant_grad are identities in the forward.
// CHECK: 3: tensor<2xf32>
// CHECK-NEXT: [1.5, -3]
func.func @main() -> (tensor<4xbf16>, tensor<4xf32>, tensor<1xbf16>, tensor<2xf32>) {
  %x = tg.constant dense<[1.0, 0.3, -2.7, 500.0]> : tensor<4xbf16>
  %h = tg.constant dense<[0.0, 4.0, 1.0]> : tensor<3xf32>
  %y = tg.fake_quant %x, %h format = f8E4M3FN margin = 0 : tensor<4xbf16>, tensor<3xf32>
  %x2 = tg.constant dense<[1.0e-3, 3.0e-7, -50.0, 0.0]> : tensor<4xf32>
  %z = tg.constant dense<[0.0]> : tensor<1xf32>
  %q = tg.fake_quant %x2, %z format = f8E5M2 margin = 0 : tensor<4xf32>, tensor<1xf32>
  %x3 = tg.constant dense<[0.3]> : tensor<1xbf16>
  %m = tg.fake_quant %x3, %h format = f8E4M3FN margin = 1 : tensor<1xbf16>, tensor<3xf32>
  %v = tg.constant dense<[1.5, -3.0]> : tensor<2xf32>
  %s = tg.constant dense<1024.0> : tensor<f32>
  %a = tg.scale_grad %v, %s : tensor<2xf32>, tensor<f32>
  %b = tg.fake_quant_grad %a, %z format = f8E5M2 margin = 0 : tensor<2xf32>, tensor<1xf32>
  return %y, %q, %m, %b : tensor<4xbf16>, tensor<4xf32>, tensor<1xbf16>, tensor<2xf32>
}
