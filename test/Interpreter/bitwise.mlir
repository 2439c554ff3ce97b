// The bitwise ops and bitcasts, with values computed by hand.
// RUN: tgc run %s --entry bitwise --print-values | FileCheck %s --check-prefix=BITWISE
// RUN: tgc run %s --entry bitcast --print-values | FileCheck %s --check-prefix=BITCAST

// ui8 and i8 keep their ranges: ~[5, 255, 9] is [250, 0, 246] in ui8, and
// (~u & (u ^ v)) | v is [0, 0, 6]; in i8 ~5 is -6, -128 & 127 is 0,
// -128 | 1 is -127; i1 xor is inequality; i4 wraps its complement.
// BITWISE: 0: tensor<3xui8>
// BITWISE-NEXT: [250, 0, 246]
// BITWISE: 1: tensor<3xui8>
// BITWISE-NEXT: [0, 0, 6]
// BITWISE: 2: tensor<3xi8>
// BITWISE-NEXT: [-6, 0, -127]
// BITWISE: 3: tensor<4xi1>
// BITWISE-NEXT: [0, 1, 1, 0]
// BITWISE: 4: tensor<2xi4>
// BITWISE-NEXT: [-8, 7]
func.func @bitwise() -> (tensor<3xui8>, tensor<3xui8>, tensor<3xi8>,
                         tensor<4xi1>, tensor<2xi4>) {
  %u = tg.constant dense<[5, 255, 9]> : tensor<3xui8>
  %v = tg.constant dense<[0, 0, 6]> : tensor<3xui8>
  %un = tg.bitwise_not %u : tensor<3xui8>
  %uo = tg.bitwise xor, %u, %v : tensor<3xui8>
  %m = tg.bitwise and, %un, %uo : tensor<3xui8>
  %x = tg.bitwise or, %m, %v : tensor<3xui8>
  %s = tg.constant dense<[5, -128, -128]> : tensor<3xi8>
  %t = tg.constant dense<[0, 127, 1]> : tensor<3xi8>
  %sn = tg.bitwise_not %s : tensor<3xi8>
  %sa = tg.bitwise and, %s, %t : tensor<3xi8>
  %so = tg.bitwise or, %s, %t : tensor<3xi8>
  %one = tg.constant dense<[1, 0, 0]> : tensor<3xi1>
  %y = tg.select %one, %sn, %sa : tensor<3xi1>, tensor<3xi8>
  %sel = tg.constant dense<[1, 1, 0]> : tensor<3xi1>
  %z = tg.select %sel, %y, %so : tensor<3xi1>, tensor<3xi8>
  %p = tg.constant dense<[0, 0, 1, 1]> : tensor<4xi1>
  %q = tg.constant dense<[0, 1, 0, 1]> : tensor<4xi1>
  %r = tg.bitwise xor, %p, %q : tensor<4xi1>
  %n = tg.constant dense<[7, -8]> : tensor<2xi4>
  %nn = tg.bitwise_not %n : tensor<2xi4>
  return %un, %x, %z, %r, %nn : tensor<3xui8>, tensor<3xui8>, tensor<3xi8>, tensor<4xi1>, tensor<2xi4>
}

// f32 1.0 is 0x3f800000 = 1065353216 and -0.0 is i32's minimum; i32 -1 is
// a NaN with the sign bit set; bf16 1.0 is 0x3f80 = 16256; i8 -1 is ui8 255;
// i1 true is ui8 1 and ui8 2 is i1 true; f64 2.0 is 0x4000000000000000.
// BITCAST: 0: tensor<2xi32>
// BITCAST-NEXT: [1065353216, -2147483648]
// BITCAST: 1: tensor<2xf32>
// BITCAST-NEXT: [1, -nan]
// BITCAST: 2: tensor<1xi16>
// BITCAST-NEXT: [16256]
// BITCAST: 3: tensor<2xui8>
// BITCAST-NEXT: [255, 1]
// BITCAST: 4: tensor<2xi1>
// BITCAST-NEXT: [1, 0]
// BITCAST: 5: tensor<1xi64>
// BITCAST-NEXT: [4611686018427387904]
func.func @bitcast() -> (tensor<2xi32>, tensor<2xf32>, tensor<1xi16>,
                         tensor<2xui8>, tensor<2xi1>, tensor<1xi64>) {
  %f = tg.constant dense<[1.0, -0.0]> : tensor<2xf32>
  %fi = tg.bitcast %f : tensor<2xf32> -> tensor<2xi32>
  %i = tg.constant dense<[1065353216, -1]> : tensor<2xi32>
  %if = tg.bitcast %i : tensor<2xi32> -> tensor<2xf32>
  %h = tg.constant dense<1.0> : tensor<1xbf16>
  %hi = tg.bitcast %h : tensor<1xbf16> -> tensor<1xi16>
  %s = tg.constant dense<-1> : tensor<1xi8>
  %su = tg.bitcast %s : tensor<1xi8> -> tensor<1xui8>
  %b = tg.constant dense<true> : tensor<1xi1>
  %bu = tg.bitcast %b : tensor<1xi1> -> tensor<1xui8>
  %two = tg.constant dense<[2, 0]> : tensor<2xui8>
  %tb = tg.bitcast %two : tensor<2xui8> -> tensor<2xi1>
  %both = tg.concat %su, %bu dim = 0 : (tensor<1xui8>, tensor<1xui8>) -> tensor<2xui8>
  %d = tg.constant dense<2.0> : tensor<1xf64>
  %di = tg.bitcast %d : tensor<1xf64> -> tensor<1xi64>
  return %fi, %if, %hi, %both, %tb, %di : tensor<2xi32>, tensor<2xf32>, tensor<1xi16>, tensor<2xui8>, tensor<2xi1>, tensor<1xi64>
}
