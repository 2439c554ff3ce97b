// RUN: tgc-opt %s --split-input-file --tg-raise | FileCheck %s
// RUN: tgc-opt %s --split-input-file --tg-raise='mask-threshold=-1e9' | FileCheck %s --check-prefix=THRESHOLD
// RUN: tgc-opt %s --split-input-file --tg-raise='patterns=gelu,attention' | FileCheck %s --check-prefix=ONLY

// LayerNormalization as torch.onnx.export (opset 14) writes it and an
// importer translates it: keepdims means as reshapes, scalars broadcast.
// With patterns=gelu,attention, it stays.
// ONLY-LABEL: func.func @layer_norm_exported
// ONLY-NOT: tg.layer_norm
// ONLY: tg.reduce
// CHECK-LABEL: func.func @layer_norm_exported
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x8xf32>, %[[G:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK-NEXT: %[[Y:.*]], %{{.*}}, %{{.*}} = tg.layer_norm %[[X]], %[[G]], %[[B]] epsilon = 9.9999997473787516E-6
// CHECK-NEXT: return %[[Y]]
func.func @layer_norm_exported(%x: tensor<2x3x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x3x8xf32> {
  %m = tg.reduce mean %x dims = [2] : tensor<2x3x8xf32> -> tensor<2x3xf32>
  %mk = tg.reshape %m : tensor<2x3xf32> -> tensor<2x3x1xf32>
  %mb = tg.broadcast_in_dim %mk dims = [0, 1, 2] : tensor<2x3x1xf32> -> tensor<2x3x8xf32>
  %d = tg.sub %x, %mb : tensor<2x3x8xf32>
  %two = tg.constant dense<2.0> : tensor<f32>
  %twob = tg.broadcast_in_dim %two dims = [] : tensor<f32> -> tensor<2x3x8xf32>
  %sq = tg.pow %d, %twob : tensor<2x3x8xf32>
  %v = tg.reduce mean %sq dims = [2] : tensor<2x3x8xf32> -> tensor<2x3xf32>
  %vk = tg.reshape %v : tensor<2x3xf32> -> tensor<2x3x1xf32>
  %eps = tg.constant dense<9.99999974E-6> : tensor<f32>
  %epsb = tg.broadcast_in_dim %eps dims = [] : tensor<f32> -> tensor<2x3x1xf32>
  %ve = tg.add %vk, %epsb : tensor<2x3x1xf32>
  %s = tg.sqrt %ve : tensor<2x3x1xf32>
  %sb = tg.broadcast_in_dim %s dims = [0, 1, 2] : tensor<2x3x1xf32> -> tensor<2x3x8xf32>
  %n = tg.div %d, %sb : tensor<2x3x8xf32>
  %gb = tg.broadcast_in_dim %g dims = [2] : tensor<8xf32> -> tensor<2x3x8xf32>
  %y0 = tg.mul %n, %gb : tensor<2x3x8xf32>
  %bb = tg.broadcast_in_dim %b dims = [2] : tensor<8xf32> -> tensor<2x3x8xf32>
  %y = tg.add %y0, %bb : tensor<2x3x8xf32>
  return %y : tensor<2x3x8xf32>
}

// -----

// The same with the operands of commutative ops swapped, the square as a
// product, the inverse standard deviation as rsqrt, statistics without
// keepdims, splat constants of the full shape, and the centering written
// twice.
// CHECK-LABEL: func.func @layer_norm_variant
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[G:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK-NEXT: %[[Y:.*]], %{{.*}}, %{{.*}} = tg.layer_norm %[[X]], %[[G]], %[[B]] epsilon = 9.999999960041972E-13
// CHECK-NEXT: return %[[Y]]
func.func @layer_norm_variant(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %m = tg.reduce mean %x dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  %mb = tg.broadcast_in_dim %m dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  %d1 = tg.sub %x, %mb : tensor<4x8xf32>
  %d2 = tg.sub %x, %mb : tensor<4x8xf32>
  %sq = tg.mul %d1, %d1 : tensor<4x8xf32>
  %v = tg.reduce mean %sq dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  %eps = tg.constant dense<1.0e-12> : tensor<4xf32>
  %ve = tg.add %eps, %v : tensor<4xf32>
  %r = tg.rsqrt %ve : tensor<4xf32>
  %rb = tg.broadcast_in_dim %r dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  %n = tg.mul %rb, %d2 : tensor<4x8xf32>
  %gb = tg.broadcast_in_dim %g dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
  %y0 = tg.mul %gb, %n : tensor<4x8xf32>
  %bb = tg.broadcast_in_dim %b dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
  %y = tg.add %bb, %y0 : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Without elementwise affine, the scale and bias are constants.
// CHECK-LABEL: func.func @layer_norm_plain
// CHECK-DAG: %[[ONE:.*]] = tg.constant dense<1.000000e+00> : tensor<8xf32>
// CHECK-DAG: %[[ZERO:.*]] = tg.constant dense<0.000000e+00> : tensor<8xf32>
// CHECK: tg.layer_norm %{{.*}}, %[[ONE]], %[[ZERO]] epsilon = 9.9999997473787516E-6
// CHECK-NOT: tg.div
func.func @layer_norm_plain(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = tg.reduce mean %x dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  %mb = tg.broadcast_in_dim %m dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  %d = tg.sub %x, %mb : tensor<4x8xf32>
  %sq = tg.mul %d, %d : tensor<4x8xf32>
  %v = tg.reduce mean %sq dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  %eps = tg.constant dense<1.0e-5> : tensor<4xf32>
  %ve = tg.add %v, %eps : tensor<4xf32>
  %s = tg.sqrt %ve : tensor<4xf32>
  %sb = tg.broadcast_in_dim %s dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  %y = tg.div %d, %sb : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Statistics over another axis than the last are not a layer norm.
// CHECK-LABEL: func.func @layer_norm_wrong_axis
// CHECK-NOT: tg.layer_norm
func.func @layer_norm_wrong_axis(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = tg.reduce mean %x dims = [0] : tensor<4x8xf32> -> tensor<8xf32>
  %mb = tg.broadcast_in_dim %m dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
  %d = tg.sub %x, %mb : tensor<4x8xf32>
  %sq = tg.mul %d, %d : tensor<4x8xf32>
  %v = tg.reduce mean %sq dims = [0] : tensor<4x8xf32> -> tensor<8xf32>
  %eps = tg.constant dense<1.0e-5> : tensor<8xf32>
  %ve = tg.add %v, %eps : tensor<8xf32>
  %s = tg.sqrt %ve : tensor<8xf32>
  %sb = tg.broadcast_in_dim %s dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
  %y = tg.div %d, %sb : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A power of 3 instead of the square is not a variance.
// CHECK-LABEL: func.func @layer_norm_wrong_power
// CHECK-NOT: tg.layer_norm
// CHECK: tg.pow
func.func @layer_norm_wrong_power(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = tg.reduce mean %x dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  %mb = tg.broadcast_in_dim %m dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  %d = tg.sub %x, %mb : tensor<4x8xf32>
  %three = tg.constant dense<3.0> : tensor<4x8xf32>
  %sq = tg.pow %d, %three : tensor<4x8xf32>
  %v = tg.reduce mean %sq dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  %eps = tg.constant dense<1.0e-5> : tensor<4xf32>
  %ve = tg.add %v, %eps : tensor<4xf32>
  %s = tg.sqrt %ve : tensor<4xf32>
  %sb = tg.broadcast_in_dim %s dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  %y = tg.div %d, %sb : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// The centered value is read elsewhere: raising would compute it twice.
// CHECK-LABEL: func.func @layer_norm_extra_use
// CHECK-NOT: tg.layer_norm
// CHECK: return
func.func @layer_norm_extra_use(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %m = tg.reduce mean %x dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  %mb = tg.broadcast_in_dim %m dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  %d = tg.sub %x, %mb : tensor<4x8xf32>
  %sq = tg.mul %d, %d : tensor<4x8xf32>
  %v = tg.reduce mean %sq dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  %eps = tg.constant dense<1.0e-5> : tensor<4xf32>
  %ve = tg.add %v, %eps : tensor<4xf32>
  %s = tg.sqrt %ve : tensor<4xf32>
  %sb = tg.broadcast_in_dim %s dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  %y = tg.div %d, %sb : tensor<4x8xf32>
  return %y, %d : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// The square of another value than the centered input is not a variance.
// CHECK-LABEL: func.func @layer_norm_other_square
// CHECK-NOT: tg.layer_norm
func.func @layer_norm_other_square(%x: tensor<4x8xf32>, %z: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = tg.reduce mean %x dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  %mb = tg.broadcast_in_dim %m dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  %d = tg.sub %x, %mb : tensor<4x8xf32>
  %sq = tg.mul %z, %z : tensor<4x8xf32>
  %v = tg.reduce mean %sq dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  %eps = tg.constant dense<1.0e-5> : tensor<4xf32>
  %ve = tg.add %v, %eps : tensor<4xf32>
  %s = tg.sqrt %ve : tensor<4xf32>
  %sb = tg.broadcast_in_dim %s dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  %y = tg.div %d, %sb : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// LLaMA's RMSNorm as exported: x * (1 / sqrt(mean(x^2) + eps)) * w.
// CHECK-LABEL: func.func @rms_norm_exported
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x8xf32>, %[[W:.*]]: tensor<8xf32>)
// CHECK-NEXT: %[[Y:.*]], %{{.*}} = tg.rms_norm %[[X]], %[[W]] epsilon = 9.9999999747524271E-7
// CHECK-NEXT: return %[[Y]]
func.func @rms_norm_exported(%x: tensor<2x3x8xf32>, %w: tensor<8xf32>) -> tensor<2x3x8xf32> {
  %two = tg.constant dense<2.0> : tensor<f32>
  %twob = tg.broadcast_in_dim %two dims = [] : tensor<f32> -> tensor<2x3x8xf32>
  %sq = tg.pow %x, %twob : tensor<2x3x8xf32>
  %v = tg.reduce mean %sq dims = [2] : tensor<2x3x8xf32> -> tensor<2x3xf32>
  %vk = tg.reshape %v : tensor<2x3xf32> -> tensor<2x3x1xf32>
  %eps = tg.constant dense<9.99999997E-7> : tensor<f32>
  %epsb = tg.broadcast_in_dim %eps dims = [] : tensor<f32> -> tensor<2x3x1xf32>
  %ve = tg.add %vk, %epsb : tensor<2x3x1xf32>
  %s = tg.sqrt %ve : tensor<2x3x1xf32>
  %one = tg.constant dense<1.0> : tensor<f32>
  %oneb = tg.broadcast_in_dim %one dims = [] : tensor<f32> -> tensor<2x3x1xf32>
  %r = tg.div %oneb, %s : tensor<2x3x1xf32>
  %rb = tg.broadcast_in_dim %r dims = [0, 1, 2] : tensor<2x3x1xf32> -> tensor<2x3x8xf32>
  %n = tg.mul %x, %rb : tensor<2x3x8xf32>
  %wb = tg.broadcast_in_dim %w dims = [2] : tensor<8xf32> -> tensor<2x3x8xf32>
  %y = tg.mul %n, %wb : tensor<2x3x8xf32>
  return %y : tensor<2x3x8xf32>
}

// -----

// RMSNorm without a weight, with rsqrt: the scale is ones.
// CHECK-LABEL: func.func @rms_norm_plain
// CHECK: %[[ONE:.*]] = tg.constant dense<1.000000e+00> : tensor<8xf32>
// CHECK: tg.rms_norm %{{.*}}, %[[ONE]] epsilon = 9.9999999747524271E-7
// CHECK-NOT: tg.rsqrt
func.func @rms_norm_plain(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %sq = tg.mul %x, %x : tensor<4x8xf32>
  %v = tg.reduce mean %sq dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  %eps = tg.constant dense<1.0e-6> : tensor<4xf32>
  %ve = tg.add %v, %eps : tensor<4xf32>
  %r = tg.rsqrt %ve : tensor<4xf32>
  %rb = tg.broadcast_in_dim %r dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  %y = tg.mul %rb, %x : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// The inverse RMS is also returned: it stays, and so does the pattern.
// CHECK-LABEL: func.func @rms_norm_extra_use
// CHECK-NOT: tg.rms_norm
// CHECK: tg.rsqrt
func.func @rms_norm_extra_use(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  %sq = tg.mul %x, %x : tensor<4x8xf32>
  %v = tg.reduce mean %sq dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  %eps = tg.constant dense<1.0e-6> : tensor<4xf32>
  %ve = tg.add %v, %eps : tensor<4xf32>
  %r = tg.rsqrt %ve : tensor<4xf32>
  %rb = tg.broadcast_in_dim %r dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  %y = tg.mul %rb, %x : tensor<4x8xf32>
  return %y, %r : tensor<4x8xf32>, tensor<4xf32>
}

// -----

// Dividing by the RMS of another tensor is not a normalization.
// CHECK-LABEL: func.func @rms_norm_other_input
// CHECK-NOT: tg.rms_norm
func.func @rms_norm_other_input(%x: tensor<4x8xf32>, %z: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %sq = tg.mul %z, %z : tensor<4x8xf32>
  %v = tg.reduce mean %sq dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  %eps = tg.constant dense<1.0e-6> : tensor<4xf32>
  %ve = tg.add %v, %eps : tensor<4xf32>
  %r = tg.rsqrt %ve : tensor<4xf32>
  %rb = tg.broadcast_in_dim %r dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  %y = tg.mul %rb, %x : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// nn.GELU() as exported: 0.5 * (x * (1 + erf(x / 1.4142135))).
// ONLY-LABEL: func.func @gelu_erf_exported
// ONLY-NEXT: tg.gelu erf
// CHECK-LABEL: func.func @gelu_erf_exported
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>)
// CHECK-NEXT: %[[Y:.*]] = tg.gelu erf %[[X]] : tensor<2x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @gelu_erf_exported(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %c = tg.constant dense<1.41421354> : tensor<f32>
  %cb = tg.broadcast_in_dim %c dims = [] : tensor<f32> -> tensor<2x8xf32>
  %0 = tg.div %x, %cb : tensor<2x8xf32>
  %1 = tg.erf %0 : tensor<2x8xf32>
  %one = tg.constant dense<1.0> : tensor<f32>
  %oneb = tg.broadcast_in_dim %one dims = [] : tensor<f32> -> tensor<2x8xf32>
  %2 = tg.add %1, %oneb : tensor<2x8xf32>
  %3 = tg.mul %x, %2 : tensor<2x8xf32>
  %h = tg.constant dense<0.5> : tensor<f32>
  %hb = tg.broadcast_in_dim %h dims = [] : tensor<f32> -> tensor<2x8xf32>
  %y = tg.mul %3, %hb : tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// The erf form grouped otherwise, multiplying by 1/sqrt(2), in bf16 (the
// constants rounded to bf16).
// CHECK-LABEL: func.func @gelu_erf_variant
// CHECK-NEXT: tg.gelu erf %{{.*}} : tensor<2x8xbf16>
// CHECK-NEXT: return
func.func @gelu_erf_variant(%x: tensor<2x8xbf16>) -> tensor<2x8xbf16> {
  %c = tg.constant dense<0.70703125> : tensor<2x8xbf16>
  %0 = tg.mul %c, %x : tensor<2x8xbf16>
  %1 = tg.erf %0 : tensor<2x8xbf16>
  %one = tg.constant dense<1.0> : tensor<2x8xbf16>
  %2 = tg.add %one, %1 : tensor<2x8xbf16>
  %h = tg.constant dense<0.5> : tensor<2x8xbf16>
  %3 = tg.mul %h, %x : tensor<2x8xbf16>
  %y = tg.mul %3, %2 : tensor<2x8xbf16>
  return %y : tensor<2x8xbf16>
}

// -----

// nn.GELU(approximate='tanh') as exported, x^3 as two products.
// CHECK-LABEL: func.func @gelu_tanh_exported
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>)
// CHECK-NEXT: %[[Y:.*]] = tg.gelu tanh %[[X]] : tensor<2x8xf32>
// CHECK-NEXT: return %[[Y]]
func.func @gelu_tanh_exported(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = tg.mul %x, %x : tensor<2x8xf32>
  %1 = tg.mul %x, %0 : tensor<2x8xf32>
  %c0 = tg.constant dense<0.0447149985> : tensor<f32>
  %c0b = tg.broadcast_in_dim %c0 dims = [] : tensor<f32> -> tensor<2x8xf32>
  %2 = tg.mul %c0b, %1 : tensor<2x8xf32>
  %3 = tg.add %x, %2 : tensor<2x8xf32>
  %c1 = tg.constant dense<0.797884583> : tensor<f32>
  %c1b = tg.broadcast_in_dim %c1 dims = [] : tensor<f32> -> tensor<2x8xf32>
  %4 = tg.mul %c1b, %3 : tensor<2x8xf32>
  %5 = tg.tanh %4 : tensor<2x8xf32>
  %one = tg.constant dense<1.0> : tensor<f32>
  %oneb = tg.broadcast_in_dim %one dims = [] : tensor<f32> -> tensor<2x8xf32>
  %6 = tg.add %oneb, %5 : tensor<2x8xf32>
  %7 = tg.mul %x, %6 : tensor<2x8xf32>
  %h = tg.constant dense<0.5> : tensor<f32>
  %hb = tg.broadcast_in_dim %h dims = [] : tensor<f32> -> tensor<2x8xf32>
  %y = tg.mul %hb, %7 : tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// GPT-2's gelu_new: x^3 as pow(x, 3).
// CHECK-LABEL: func.func @gelu_tanh_pow
// CHECK-NEXT: tg.gelu tanh
// CHECK-NEXT: return
func.func @gelu_tanh_pow(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %three = tg.constant dense<3.0> : tensor<2x8xf32>
  %1 = tg.pow %x, %three : tensor<2x8xf32>
  %c0 = tg.constant dense<0.044715> : tensor<2x8xf32>
  %2 = tg.mul %1, %c0 : tensor<2x8xf32>
  %3 = tg.add %2, %x : tensor<2x8xf32>
  %c1 = tg.constant dense<0.797884583> : tensor<2x8xf32>
  %4 = tg.mul %3, %c1 : tensor<2x8xf32>
  %5 = tg.tanh %4 : tensor<2x8xf32>
  %one = tg.constant dense<1.0> : tensor<2x8xf32>
  %6 = tg.add %5, %one : tensor<2x8xf32>
  %h = tg.constant dense<0.5> : tensor<2x8xf32>
  %7 = tg.mul %h, %x : tensor<2x8xf32>
  %y = tg.mul %7, %6 : tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// A wrong coefficient (0.04 for 0.044715) is another function.
// CHECK-LABEL: func.func @gelu_tanh_wrong_constant
// CHECK-NOT: tg.gelu
// CHECK: tg.tanh
func.func @gelu_tanh_wrong_constant(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %three = tg.constant dense<3.0> : tensor<2x8xf32>
  %1 = tg.pow %x, %three : tensor<2x8xf32>
  %c0 = tg.constant dense<0.04> : tensor<2x8xf32>
  %2 = tg.mul %1, %c0 : tensor<2x8xf32>
  %3 = tg.add %2, %x : tensor<2x8xf32>
  %c1 = tg.constant dense<0.797884583> : tensor<2x8xf32>
  %4 = tg.mul %3, %c1 : tensor<2x8xf32>
  %5 = tg.tanh %4 : tensor<2x8xf32>
  %one = tg.constant dense<1.0> : tensor<2x8xf32>
  %6 = tg.add %5, %one : tensor<2x8xf32>
  %h = tg.constant dense<0.5> : tensor<2x8xf32>
  %7 = tg.mul %h, %x : tensor<2x8xf32>
  %y = tg.mul %7, %6 : tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// Dividing by 2 instead of sqrt(2) is not GELU.
// CHECK-LABEL: func.func @gelu_erf_wrong_constant
// CHECK-NOT: tg.gelu
// CHECK: tg.erf
func.func @gelu_erf_wrong_constant(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %c = tg.constant dense<2.0> : tensor<2x8xf32>
  %0 = tg.div %x, %c : tensor<2x8xf32>
  %1 = tg.erf %0 : tensor<2x8xf32>
  %one = tg.constant dense<1.0> : tensor<2x8xf32>
  %2 = tg.add %1, %one : tensor<2x8xf32>
  %3 = tg.mul %x, %2 : tensor<2x8xf32>
  %h = tg.constant dense<0.5> : tensor<2x8xf32>
  %y = tg.mul %3, %h : tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// The erf is read elsewhere: the pattern stays.
// CHECK-LABEL: func.func @gelu_extra_use
// CHECK-NOT: tg.gelu
// CHECK: return
func.func @gelu_extra_use(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %c = tg.constant dense<1.41421354> : tensor<2x8xf32>
  %0 = tg.div %x, %c : tensor<2x8xf32>
  %1 = tg.erf %0 : tensor<2x8xf32>
  %one = tg.constant dense<1.0> : tensor<2x8xf32>
  %2 = tg.add %1, %one : tensor<2x8xf32>
  %3 = tg.mul %x, %2 : tensor<2x8xf32>
  %h = tg.constant dense<0.5> : tensor<2x8xf32>
  %y = tg.mul %3, %h : tensor<2x8xf32>
  return %y, %1 : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// SiLU, and SwiGLU's silu(a) * b: only the SiLU is raised.
// CHECK-LABEL: func.func @swiglu
// CHECK-SAME: (%[[A:.*]]: tensor<2x8xf32>, %[[B:.*]]: tensor<2x8xf32>)
// CHECK-NEXT: %[[S:.*]] = tg.silu %[[A]] : tensor<2x8xf32>
// CHECK-NEXT: %[[Y:.*]] = tg.mul %[[S]], %[[B]]
// CHECK-NEXT: return %[[Y]]
func.func @swiglu(%a: tensor<2x8xf32>, %b: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = tg.sigmoid %a : tensor<2x8xf32>
  %1 = tg.mul %a, %0 : tensor<2x8xf32>
  %y = tg.mul %1, %b : tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// x * sigmoid(z) is a gate, not a SiLU; a sigmoid read elsewhere stays.
// CHECK-LABEL: func.func @silu_negative
// CHECK-NOT: tg.silu
// CHECK: return
func.func @silu_negative(%x: tensor<2x8xf32>, %z: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) {
  %0 = tg.sigmoid %z : tensor<2x8xf32>
  %1 = tg.mul %x, %0 : tensor<2x8xf32>
  %2 = tg.sigmoid %x : tensor<2x8xf32>
  %3 = tg.mul %2, %x : tensor<2x8xf32>
  return %1, %3, %2 : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// Causal attention as torch.onnx.export writes a hand-written GPT block:
// the keys transposed, the scores scaled, masked_fill(-inf) as a select of
// a constant triangular mask, softmax, and the product with the values.
// The scale is 1/sqrt(8), the default.
// CHECK-LABEL: func.func @attention_exported
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x4x8xf32>, %[[K:.*]]: tensor<1x2x4x8xf32>, %[[V:.*]]: tensor<1x2x4x8xf32>)
// CHECK-NEXT: %[[O:.*]], %{{.*}} = tg.attention %[[Q]], %[[K]], %[[V]] causal : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4xf32>)
// CHECK-NEXT: return %[[O]]
func.func @attention_exported(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %kt = tg.transpose %k perm = [0, 1, 3, 2] : tensor<1x2x4x8xf32> -> tensor<1x2x8x4xf32>
  %s = tg.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %c = tg.constant dense<0.353553385> : tensor<f32>
  %cb = tg.broadcast_in_dim %c dims = [] : tensor<f32> -> tensor<1x2x4x4xf32>
  %y = tg.mul %s, %cb : tensor<1x2x4x4xf32>
  %mask = tg.constant dense<[[[[false, true, true, true], [false, false, true, true], [false, false, false, true], [false, false, false, false]]]]> : tensor<1x1x4x4xi1>
  %mb = tg.broadcast_in_dim %mask dims = [0, 1, 2, 3] : tensor<1x1x4x4xi1> -> tensor<1x2x4x4xi1>
  %fill = tg.constant dense<0xFF800000> : tensor<f32>
  %fb = tg.broadcast_in_dim %fill dims = [] : tensor<f32> -> tensor<1x2x4x4xf32>
  %z = tg.select %mb, %fb, %y : tensor<1x2x4x4xi1>, tensor<1x2x4x4xf32>
  %p = tg.softmax %z dim = 3 : tensor<1x2x4x4xf32>
  %o = tg.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Hugging Face's form: torch.where(keep, scores, finfo.min), the scores
// divided by sqrt(D) and the queries pre-scaled by 0.5: scale 0.5/sqrt(8).
// CHECK-LABEL: func.func @attention_keep_mask
// CHECK-NEXT: tg.attention %{{.*}}, %{{.*}}, %{{.*}} causal scale = 0.17677669{{[0-9]*}} :
// CHECK-NEXT: return
func.func @attention_keep_mask(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %half = tg.constant dense<0.5> : tensor<1x2x4x8xf32>
  %qs = tg.mul %half, %q : tensor<1x2x4x8xf32>
  %s = tg.matmul %qs, %k transpose_b : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %c = tg.constant dense<2.82842708> : tensor<1x2x4x4xf32>
  %y = tg.div %s, %c : tensor<1x2x4x4xf32>
  %keep = tg.constant dense<[[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]> : tensor<4x4xi1>
  %kb = tg.broadcast_in_dim %keep dims = [2, 3] : tensor<4x4xi1> -> tensor<1x2x4x4xi1>
  %fill = tg.constant dense<-3.40282347E+38> : tensor<1x2x4x4xf32>
  %z = tg.select %kb, %y, %fill : tensor<1x2x4x4xi1>, tensor<1x2x4x4xf32>
  %p = tg.softmax %z dim = 3 : tensor<1x2x4x4xf32>
  %o = tg.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// An additive mask of 0 and -1e9, added before the scaling.
// CHECK-LABEL: func.func @attention_additive_mask
// CHECK-NEXT: tg.attention %{{.*}}, %{{.*}}, %{{.*}} causal scale = 2.500000e-01 :
// CHECK-NEXT: return
func.func @attention_additive_mask(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %s = tg.matmul %q, %k transpose_b : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %mask = tg.constant dense<[[0.0, -1.0e9, -1.0e9, -1.0e9], [0.0, 0.0, -1.0e9, -1.0e9], [0.0, 0.0, 0.0, -1.0e9], [0.0, 0.0, 0.0, 0.0]]> : tensor<4x4xf32>
  %mb = tg.broadcast_in_dim %mask dims = [2, 3] : tensor<4x4xf32> -> tensor<1x2x4x4xf32>
  %z = tg.add %mb, %s : tensor<1x2x4x4xf32>
  %c = tg.constant dense<0.25> : tensor<f32>
  %cb = tg.broadcast_in_dim %c dims = [] : tensor<f32> -> tensor<1x2x4x4xf32>
  %y = tg.mul %cb, %z : tensor<1x2x4x4xf32>
  %p = tg.softmax %y dim = 3 : tensor<1x2x4x4xf32>
  %o = tg.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Grouped-query attention as LLaMA's repeat_kv exports it: the two key/value
// heads are expanded to the four query heads; tg.attention takes them as
// they are. Without a mask, the attention is not causal.
// CHECK-LABEL: func.func @attention_gqa
// CHECK-SAME: (%[[Q:.*]]: tensor<1x4x4x8xf32>, %[[K:.*]]: tensor<1x2x4x8xf32>, %[[V:.*]]: tensor<1x2x4x8xf32>)
// CHECK-NEXT: %[[O:.*]], %{{.*}} = tg.attention %[[Q]], %[[K]], %[[V]] : (tensor<1x4x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> (tensor<1x4x4x8xf32>, tensor<1x4x4xf32>)
// CHECK-NEXT: return %[[O]]
func.func @attention_gqa(%q: tensor<1x4x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %k5 = tg.reshape %k : tensor<1x2x4x8xf32> -> tensor<1x2x1x4x8xf32>
  %ke = tg.broadcast_in_dim %k5 dims = [0, 1, 2, 3, 4] : tensor<1x2x1x4x8xf32> -> tensor<1x2x2x4x8xf32>
  %kr = tg.reshape %ke : tensor<1x2x2x4x8xf32> -> tensor<1x4x4x8xf32>
  %ve = tg.broadcast_in_dim %v dims = [0, 1, 3, 4] : tensor<1x2x4x8xf32> -> tensor<1x2x2x4x8xf32>
  %vr = tg.reshape %ve : tensor<1x2x2x4x8xf32> -> tensor<1x4x4x8xf32>
  %kt = tg.transpose %kr perm = [0, 1, 3, 2] : tensor<1x4x4x8xf32> -> tensor<1x4x8x4xf32>
  %s = tg.matmul %q, %kt : (tensor<1x4x4x8xf32>, tensor<1x4x8x4xf32>) -> tensor<1x4x4x4xf32>
  %c = tg.constant dense<2.82842708> : tensor<1x4x4x4xf32>
  %y = tg.div %s, %c : tensor<1x4x4x4xf32>
  %p = tg.softmax %y dim = 3 : tensor<1x4x4x4xf32>
  %o = tg.matmul %p, %vr : (tensor<1x4x4x4xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  return %o : tensor<1x4x4x8xf32>
}

// -----

// A mask that also hides the diagonal is not the causal one; as the bias,
// it would make row 0, every key of which it hides with -inf, zeros where
// the decomposition's softmax gives NaN: it stays.
// CHECK-LABEL: func.func @attention_wrong_mask
// CHECK-NOT: tg.attention
// CHECK: tg.softmax
func.func @attention_wrong_mask(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %kt = tg.transpose %k perm = [0, 1, 3, 2] : tensor<1x2x4x8xf32> -> tensor<1x2x8x4xf32>
  %s = tg.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %c = tg.constant dense<0.353553385> : tensor<f32>
  %cb = tg.broadcast_in_dim %c dims = [] : tensor<f32> -> tensor<1x2x4x4xf32>
  %y = tg.mul %s, %cb : tensor<1x2x4x4xf32>
  %mask = tg.constant dense<[[[[true, true, true, true], [false, true, true, true], [false, false, true, true], [false, false, false, true]]]]> : tensor<1x1x4x4xi1>
  %mb = tg.broadcast_in_dim %mask dims = [0, 1, 2, 3] : tensor<1x1x4x4xi1> -> tensor<1x2x4x4xi1>
  %fill = tg.constant dense<0xFF800000> : tensor<f32>
  %fb = tg.broadcast_in_dim %fill dims = [] : tensor<f32> -> tensor<1x2x4x4xf32>
  %z = tg.select %mb, %fb, %y : tensor<1x2x4x4xi1>, tensor<1x2x4x4xf32>
  %p = tg.softmax %z dim = 3 : tensor<1x2x4x4xf32>
  %o = tg.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// A fill of -100 does not hide a key.
// CHECK-LABEL: func.func @attention_small_fill
// CHECK-NOT: tg.attention
// CHECK: tg.softmax
func.func @attention_small_fill(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %kt = tg.transpose %k perm = [0, 1, 3, 2] : tensor<1x2x4x8xf32> -> tensor<1x2x8x4xf32>
  %s = tg.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %c = tg.constant dense<0.353553385> : tensor<f32>
  %cb = tg.broadcast_in_dim %c dims = [] : tensor<f32> -> tensor<1x2x4x4xf32>
  %y = tg.mul %s, %cb : tensor<1x2x4x4xf32>
  %mask = tg.constant dense<[[[[false, true, true, true], [false, false, true, true], [false, false, false, true], [false, false, false, false]]]]> : tensor<1x1x4x4xi1>
  %mb = tg.broadcast_in_dim %mask dims = [0, 1, 2, 3] : tensor<1x1x4x4xi1> -> tensor<1x2x4x4xi1>
  %fill = tg.constant dense<-100.0> : tensor<f32>
  %fb = tg.broadcast_in_dim %fill dims = [] : tensor<f32> -> tensor<1x2x4x4xf32>
  %z = tg.select %mb, %fb, %y : tensor<1x2x4x4xi1>, tensor<1x2x4x4xf32>
  %p = tg.softmax %z dim = 3 : tensor<1x2x4x4xf32>
  %o = tg.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// The probabilities are also returned: the softmax must stay.
// CHECK-LABEL: func.func @attention_probabilities_used
// CHECK-NOT: tg.attention
// CHECK: tg.softmax
func.func @attention_probabilities_used(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>) {
  %kt = tg.transpose %k perm = [0, 1, 3, 2] : tensor<1x2x4x8xf32> -> tensor<1x2x8x4xf32>
  %s = tg.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %c = tg.constant dense<0.353553385> : tensor<f32>
  %cb = tg.broadcast_in_dim %c dims = [] : tensor<f32> -> tensor<1x2x4x4xf32>
  %y = tg.mul %s, %cb : tensor<1x2x4x4xf32>
  %mask = tg.constant dense<[[[[false, true, true, true], [false, false, true, true], [false, false, false, true], [false, false, false, false]]]]> : tensor<1x1x4x4xi1>
  %mb = tg.broadcast_in_dim %mask dims = [0, 1, 2, 3] : tensor<1x1x4x4xi1> -> tensor<1x2x4x4xi1>
  %fill = tg.constant dense<0xFF800000> : tensor<f32>
  %fb = tg.broadcast_in_dim %fill dims = [] : tensor<f32> -> tensor<1x2x4x4xf32>
  %z = tg.select %mb, %fb, %y : tensor<1x2x4x4xi1>, tensor<1x2x4x4xf32>
  %p = tg.softmax %z dim = 3 : tensor<1x2x4x4xf32>
  %o = tg.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o, %p : tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>
}

// -----

// A softmax over the queries is not attention.
// CHECK-LABEL: func.func @attention_softmax_over_queries
// CHECK-NOT: tg.attention
// CHECK: tg.softmax
func.func @attention_softmax_over_queries(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %kt = tg.transpose %k perm = [0, 1, 3, 2] : tensor<1x2x4x8xf32> -> tensor<1x2x8x4xf32>
  %s = tg.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %c = tg.constant dense<0.353553385> : tensor<f32>
  %cb = tg.broadcast_in_dim %c dims = [] : tensor<f32> -> tensor<1x2x4x4xf32>
  %y = tg.mul %s, %cb : tensor<1x2x4x4xf32>
  %mask = tg.constant dense<[[[[false, true, true, true], [false, false, true, true], [false, false, false, true], [false, false, false, false]]]]> : tensor<1x1x4x4xi1>
  %mb = tg.broadcast_in_dim %mask dims = [0, 1, 2, 3] : tensor<1x1x4x4xi1> -> tensor<1x2x4x4xi1>
  %fill = tg.constant dense<0xFF800000> : tensor<f32>
  %fb = tg.broadcast_in_dim %fill dims = [] : tensor<f32> -> tensor<1x2x4x4xf32>
  %z = tg.select %mb, %fb, %y : tensor<1x2x4x4xi1>, tensor<1x2x4x4xf32>
  %p = tg.softmax %z dim = 2 : tensor<1x2x4x4xf32>
  %o = tg.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// The loss written with a one-hot pick of the label's log-probability, as
// an importer may translate NegativeLogLikelihoodLoss(LogSoftmax(x)).
// CHECK-LABEL: func.func @cross_entropy_one_hot
// CHECK-SAME: (%[[X:.*]]: tensor<6x16xf32>, %[[Y:.*]]: tensor<6xi64>)
// CHECK-NEXT: %[[L:.*]], %{{.*}} = tg.cross_entropy mean %[[X]], %[[Y]] : (tensor<6x16xf32>, tensor<6xi64>) -> (tensor<f32>, tensor<6xf32>)
// CHECK-NEXT: return %[[L]]
func.func @cross_entropy_one_hot(%x: tensor<6x16xf32>, %y: tensor<6xi64>) -> tensor<f32> {
  %lp = tg.log_softmax %x dim = 1 : tensor<6x16xf32>
  %yb = tg.broadcast_in_dim %y dims = [0] : tensor<6xi64> -> tensor<6x16xi64>
  %iota = tg.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]> : tensor<16xi64>
  %ib = tg.broadcast_in_dim %iota dims = [1] : tensor<16xi64> -> tensor<6x16xi64>
  %oh = tg.compare eq, %yb, %ib : tensor<6x16xi64>
  %zero = tg.constant dense<0.0> : tensor<6x16xf32>
  %sel = tg.select %oh, %lp, %zero : tensor<6x16xi1>, tensor<6x16xf32>
  %picked = tg.reduce sum %sel dims = [1] : tensor<6x16xf32> -> tensor<6xf32>
  %m = tg.reduce mean %picked dims = [0] : tensor<6xf32> -> tensor<f32>
  %loss = tg.neg %m : tensor<f32>
  return %loss : tensor<f32>
}

// -----

// The sum form, over [2, 3] tokens: the labels reshaped to [2, 3, 1] before
// the broadcast, the one-hot mask converted and multiplied, the negation
// before the reduction.
// CHECK-LABEL: func.func @cross_entropy_sum
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x16xf32>, %[[Y:.*]]: tensor<2x3xi64>)
// CHECK-NEXT: %[[L:.*]], %{{.*}} = tg.cross_entropy sum %[[X]], %[[Y]]
// CHECK-NEXT: return %[[L]]
func.func @cross_entropy_sum(%x: tensor<2x3x16xf32>, %y: tensor<2x3xi64>) -> tensor<f32> {
  %lp = tg.log_softmax %x dim = 2 : tensor<2x3x16xf32>
  %y1 = tg.reshape %y : tensor<2x3xi64> -> tensor<2x3x1xi64>
  %yb = tg.broadcast_in_dim %y1 dims = [0, 1, 2] : tensor<2x3x1xi64> -> tensor<2x3x16xi64>
  %iota = tg.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]> : tensor<16xi64>
  %ib = tg.broadcast_in_dim %iota dims = [2] : tensor<16xi64> -> tensor<2x3x16xi64>
  %oh = tg.compare eq, %ib, %yb : tensor<2x3x16xi64>
  %ohf = tg.convert %oh : tensor<2x3x16xi1> -> tensor<2x3x16xf32>
  %sel = tg.mul %ohf, %lp : tensor<2x3x16xf32>
  %picked = tg.reduce sum %sel dims = [2] : tensor<2x3x16xf32> -> tensor<2x3xf32>
  %neg = tg.neg %picked : tensor<2x3xf32>
  %loss = tg.reduce sum %neg dims = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// A cross-entropy of log-probabilities reads the logits.
// CHECK-LABEL: func.func @cross_entropy_of_log_softmax
// CHECK-SAME: (%[[X:.*]]: tensor<6x16xf32>, %[[Y:.*]]: tensor<6xi64>)
// CHECK-NEXT: %[[L:.*]], %{{.*}} = tg.cross_entropy mean %[[X]], %[[Y]] ignore_index = -100
// CHECK-NEXT: return %[[L]]
func.func @cross_entropy_of_log_softmax(%x: tensor<6x16xf32>, %y: tensor<6xi64>) -> tensor<f32> {
  %lp = tg.log_softmax %x dim = 1 : tensor<6x16xf32>
  %l, %lse = tg.cross_entropy mean %lp, %y ignore_index = -100 : (tensor<6x16xf32>, tensor<6xi64>) -> (tensor<f32>, tensor<6xf32>)
  return %l : tensor<f32>
}

// -----

// Class ids out of order are not a one-hot mask of the label.
// CHECK-LABEL: func.func @cross_entropy_wrong_classes
// CHECK-NOT: tg.cross_entropy
// CHECK: tg.log_softmax
func.func @cross_entropy_wrong_classes(%x: tensor<6x16xf32>, %y: tensor<6xi64>) -> tensor<f32> {
  %lp = tg.log_softmax %x dim = 1 : tensor<6x16xf32>
  %yb = tg.broadcast_in_dim %y dims = [0] : tensor<6xi64> -> tensor<6x16xi64>
  %iota = tg.constant dense<[1, 0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]> : tensor<16xi64>
  %ib = tg.broadcast_in_dim %iota dims = [1] : tensor<16xi64> -> tensor<6x16xi64>
  %oh = tg.compare eq, %yb, %ib : tensor<6x16xi64>
  %zero = tg.constant dense<0.0> : tensor<6x16xf32>
  %sel = tg.select %oh, %lp, %zero : tensor<6x16xi1>, tensor<6x16xf32>
  %picked = tg.reduce sum %sel dims = [1] : tensor<6x16xf32> -> tensor<6xf32>
  %m = tg.reduce mean %picked dims = [0] : tensor<6xf32> -> tensor<f32>
  %loss = tg.neg %m : tensor<f32>
  return %loss : tensor<f32>
}

// -----

// The log-probabilities are also returned, and the logsumexp of a
// cross-entropy of log-probabilities is read: both stay.
// CHECK-LABEL: func.func @cross_entropy_extra_uses
// CHECK: tg.log_softmax
// CHECK: tg.cross_entropy mean %{{.*}}, %{{.*}} :
// CHECK: tg.log_softmax
// CHECK: tg.reduce sum
func.func @cross_entropy_extra_uses(%x: tensor<6x16xf32>, %y: tensor<6xi64>) -> (tensor<f32>, tensor<6xf32>, tensor<f32>, tensor<6x16xf32>) {
  %lp0 = tg.log_softmax %x dim = 1 : tensor<6x16xf32>
  %l, %lse = tg.cross_entropy mean %lp0, %y : (tensor<6x16xf32>, tensor<6xi64>) -> (tensor<f32>, tensor<6xf32>)
  %lp = tg.log_softmax %x dim = 1 : tensor<6x16xf32>
  %yb = tg.broadcast_in_dim %y dims = [0] : tensor<6xi64> -> tensor<6x16xi64>
  %iota = tg.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]> : tensor<16xi64>
  %ib = tg.broadcast_in_dim %iota dims = [1] : tensor<16xi64> -> tensor<6x16xi64>
  %oh = tg.compare eq, %yb, %ib : tensor<6x16xi64>
  %zero = tg.constant dense<0.0> : tensor<6x16xf32>
  %sel = tg.select %oh, %lp, %zero : tensor<6x16xi1>, tensor<6x16xf32>
  %picked = tg.reduce sum %sel dims = [1] : tensor<6x16xf32> -> tensor<6xf32>
  %m = tg.reduce mean %picked dims = [0] : tensor<6xf32> -> tensor<f32>
  %loss = tg.neg %m : tensor<f32>
  return %l, %lse, %loss, %lp : tensor<f32>, tensor<6xf32>, tensor<f32>, tensor<6x16xf32>
}

// -----

// A fill of -1e4 hides a key by default (its probability underflows to 0),
// not with mask-threshold=-1e9.
// CHECK-LABEL: func.func @attention_fill_1e4
// CHECK-NEXT: tg.attention %{{.*}}, %{{.*}}, %{{.*}} causal :
// THRESHOLD-LABEL: func.func @attention_fill_1e4
// THRESHOLD-NOT: tg.attention
// THRESHOLD: tg.softmax
// ONLY-LABEL: func.func @attention_fill_1e4
// ONLY-NEXT: tg.attention
func.func @attention_fill_1e4(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %kt = tg.transpose %k perm = [0, 1, 3, 2] : tensor<1x2x4x8xf32> -> tensor<1x2x8x4xf32>
  %s = tg.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %c = tg.constant dense<0.353553385> : tensor<f32>
  %cb = tg.broadcast_in_dim %c dims = [] : tensor<f32> -> tensor<1x2x4x4xf32>
  %y = tg.mul %s, %cb : tensor<1x2x4x4xf32>
  %mask = tg.constant dense<[[[[false, true, true, true], [false, false, true, true], [false, false, false, true], [false, false, false, false]]]]> : tensor<1x1x4x4xi1>
  %mb = tg.broadcast_in_dim %mask dims = [0, 1, 2, 3] : tensor<1x1x4x4xi1> -> tensor<1x2x4x4xi1>
  %fill = tg.constant dense<-1.0e4> : tensor<f32>
  %fb = tg.broadcast_in_dim %fill dims = [] : tensor<f32> -> tensor<1x2x4x4xf32>
  %z = tg.select %mb, %fb, %y : tensor<1x2x4x4xi1>, tensor<1x2x4x4xf32>
  %p = tg.softmax %z dim = 3 : tensor<1x2x4x4xf32>
  %o = tg.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// The rewrite driver erases every dead op, also one that was dead on input.
// CHECK-LABEL: func.func @dead_on_input
// CHECK-NEXT: return
// ONLY-LABEL: func.func @dead_on_input
// ONLY-NEXT: return
func.func @dead_on_input(%x: tensor<4xf32>) -> tensor<4xf32> {
  %unused = tg.exp %x : tensor<4xf32>
  return %x : tensor<4xf32>
}

// -----

// A mask computed at run time (Hugging Face's 4-D causal and padding mask,
// one per batch entry) added to the scaled scores becomes the attention's
// bias, read through its broadcast over the heads.
// CHECK-LABEL: func.func @attention_runtime_mask
// CHECK-SAME: (%[[Q:.*]]: tensor<2x2x4x8xf32>, %[[K:.*]]: tensor<2x2x4x8xf32>, %[[V:.*]]: tensor<2x2x4x8xf32>, %[[M:.*]]: tensor<2x1x4x4xf32>)
// CHECK-NEXT: %[[O:.*]], %{{.*}} = tg.attention %[[Q]], %[[K]], %[[V]] bias %[[M]] scale = 2.500000e-01 : (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x1x4x4xf32>)
// CHECK-NEXT: return %[[O]]
func.func @attention_runtime_mask(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>, %m: tensor<2x1x4x4xf32>) -> tensor<2x2x4x8xf32> {
  %s = tg.matmul %q, %k transpose_b : (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x4xf32>
  %c = tg.constant dense<0.25> : tensor<2x2x4x4xf32>
  %y = tg.mul %s, %c : tensor<2x2x4x4xf32>
  %mb = tg.broadcast_in_dim %m dims = [0, 1, 2, 3] : tensor<2x1x4x4xf32> -> tensor<2x2x4x4xf32>
  %z = tg.add %mb, %y : tensor<2x2x4x4xf32>
  %p = tg.softmax %z dim = 3 : tensor<2x2x4x4xf32>
  %o = tg.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// A padding mask [B, Sk] added before the scale: the bias is the mask
// reshaped to [B, 1, 1, Sk], times the scale.
// CHECK-LABEL: func.func @attention_runtime_mask_scaled
// CHECK-SAME: %[[M:[^:]*]]: tensor<2x4xf32>
// CHECK: %[[R:.*]] = tg.reshape %[[M]] : tensor<2x4xf32> -> tensor<2x1x1x4xf32>
// CHECK: %[[C:.*]] = tg.constant dense<5.000000e-01> : tensor<2x1x1x4xf32>
// CHECK: %[[B:.*]] = tg.mul %[[R]], %[[C]]
// CHECK: tg.attention %{{.*}}, %{{.*}}, %{{.*}} bias %[[B]] scale = 5.000000e-01 :
func.func @attention_runtime_mask_scaled(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>, %m: tensor<2x4xf32>) -> tensor<2x2x4x8xf32> {
  %s = tg.matmul %q, %k transpose_b : (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x4xf32>
  %mb = tg.broadcast_in_dim %m dims = [0, 3] : tensor<2x4xf32> -> tensor<2x2x4x4xf32>
  %z = tg.add %s, %mb : tensor<2x2x4x4xf32>
  %c = tg.constant dense<0.5> : tensor<2x2x4x4xf32>
  %y = tg.mul %z, %c : tensor<2x2x4x4xf32>
  %p = tg.softmax %y dim = 3 : tensor<2x2x4x4xf32>
  %o = tg.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// masked_fill with -inf where a run-time predicate holds: the bias is
// -inf there and 0 elsewhere.
// CHECK-LABEL: func.func @attention_runtime_select
// CHECK-SAME: %[[H:[^:]*]]: tensor<2x1x1x4xi1>
// CHECK-DAG: %[[Z:.*]] = tg.constant dense<0.000000e+00> : tensor<2x1x1x4xf32>
// CHECK-DAG: %[[I:.*]] = tg.constant dense<0xFF800000> : tensor<2x1x1x4xf32>
// CHECK: %[[B:.*]] = tg.select %[[H]], %[[I]], %[[Z]]
// CHECK: tg.attention %{{.*}}, %{{.*}}, %{{.*}} bias %[[B]] :
func.func @attention_runtime_select(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>, %h: tensor<2x1x1x4xi1>) -> tensor<2x2x4x8xf32> {
  %s = tg.matmul %q, %k transpose_b : (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x4xf32>
  %c = tg.constant dense<0.353553385> : tensor<2x2x4x4xf32>
  %y = tg.mul %s, %c : tensor<2x2x4x4xf32>
  %hb = tg.broadcast_in_dim %h dims = [0, 1, 2, 3] : tensor<2x1x1x4xi1> -> tensor<2x2x4x4xi1>
  %fill = tg.constant dense<0xFF800000> : tensor<2x2x4x4xf32>
  %z = tg.select %hb, %fill, %y : tensor<2x2x4x4xi1>, tensor<2x2x4x4xf32>
  %p = tg.softmax %z dim = 3 : tensor<2x2x4x4xf32>
  %o = tg.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// masked_fill with -1e4 at a run-time predicate stays: a score plus -1e4
// is not -1e4, so no bias computes what the select does.
// CHECK-LABEL: func.func @attention_runtime_select_small_fill
// CHECK-NOT: tg.attention
// CHECK: tg.softmax
func.func @attention_runtime_select_small_fill(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>, %h: tensor<2x2x4x4xi1>) -> tensor<2x2x4x8xf32> {
  %s = tg.matmul %q, %k transpose_b : (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x4xf32>
  %fill = tg.constant dense<-1.0e4> : tensor<2x2x4x4xf32>
  %z = tg.select %h, %fill, %s : tensor<2x2x4x4xi1>, tensor<2x2x4x4xf32>
  %p = tg.softmax %z dim = 3 : tensor<2x2x4x4xf32>
  %o = tg.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// A causal mask of -inf inside a run-time padding mask: the causal flag
// and the padding mask as the bias.
// CHECK-LABEL: func.func @attention_causal_inf_and_padding
// CHECK-SAME: %[[M:[^:]*]]: tensor<2x4xf32>
// CHECK: %[[B:.*]] = tg.reshape %[[M]] : tensor<2x4xf32> -> tensor<2x1x1x4xf32>
// CHECK: tg.attention %{{.*}}, %{{.*}}, %{{.*}} bias %[[B]] causal scale = 1.000000e+00 :
func.func @attention_causal_inf_and_padding(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>, %m: tensor<2x4xf32>) -> tensor<2x2x4x8xf32> {
  %s = tg.matmul %q, %k transpose_b : (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x4xf32>
  %keep = tg.constant dense<[[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]> : tensor<4x4xi1>
  %kb = tg.broadcast_in_dim %keep dims = [2, 3] : tensor<4x4xi1> -> tensor<2x2x4x4xi1>
  %fill = tg.constant dense<0xFF800000> : tensor<2x2x4x4xf32>
  %z = tg.select %kb, %s, %fill : tensor<2x2x4x4xi1>, tensor<2x2x4x4xf32>
  %mb = tg.broadcast_in_dim %m dims = [0, 3] : tensor<2x4xf32> -> tensor<2x2x4x4xf32>
  %w = tg.add %z, %mb : tensor<2x2x4x4xf32>
  %p = tg.softmax %w dim = 3 : tensor<2x2x4x4xf32>
  %o = tg.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// A causal mask of f32's lowest value inside a run-time padding mask (Hugging
// Face's GPT-2): a hidden score is that value plus the padding's, which
// no causal flag gives (a row every key of which is hidden keeps its
// softmax over those sums), so both join the bias, and no causal flag.
// CHECK-LABEL: func.func @attention_causal_min_and_padding
// CHECK-SAME: %[[M:[^:]*]]: tensor<2x4xf32>
// CHECK-DAG: %[[R:.*]] = tg.reshape %[[M]] : tensor<2x4xf32> -> tensor<2x1x1x4xf32>
// CHECK-DAG: %[[C:.*]] = tg.select %{{.*}}, %{{.*}}, %{{.*}} : tensor<1x1x4x4xi1>, tensor<1x1x4x4xf32>
// CHECK-DAG: %[[RW:.*]] = tg.broadcast_in_dim %[[R]] dims = [0, 1, 2, 3] : tensor<2x1x1x4xf32> -> tensor<2x1x4x4xf32>
// CHECK-DAG: %[[CW:.*]] = tg.broadcast_in_dim %[[C]] dims = [0, 1, 2, 3] : tensor<1x1x4x4xf32> -> tensor<2x1x4x4xf32>
// CHECK: %[[B:.*]] = tg.add %[[RW]], %[[CW]] : tensor<2x1x4x4xf32>
// CHECK: tg.attention %{{.*}}, %{{.*}}, %{{.*}} bias %[[B]] scale = 1.000000e+00 :
func.func @attention_causal_min_and_padding(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>, %m: tensor<2x4xf32>) -> tensor<2x2x4x8xf32> {
  %s = tg.matmul %q, %k transpose_b : (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x4xf32>
  %keep = tg.constant dense<[[[[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]]]> : tensor<1x1x4x4xi1>
  %kb = tg.broadcast_in_dim %keep dims = [0, 1, 2, 3] : tensor<1x1x4x4xi1> -> tensor<2x2x4x4xi1>
  %fill = tg.constant dense<-3.40282347E+38> : tensor<2x2x4x4xf32>
  %z = tg.select %kb, %s, %fill : tensor<2x2x4x4xi1>, tensor<2x2x4x4xf32>
  %mb = tg.broadcast_in_dim %m dims = [0, 3] : tensor<2x4xf32> -> tensor<2x2x4x4xf32>
  %w = tg.add %z, %mb : tensor<2x2x4x4xf32>
  %p = tg.softmax %w dim = 3 : tensor<2x2x4x4xf32>
  %o = tg.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// A causal mask of -1e4 inside a run-time padding mask stays: a hidden
// score is -1e4 plus the padding's, and a score plus -1e4 is not -1e4.
// CHECK-LABEL: func.func @attention_causal_1e4_and_padding
// CHECK-NOT: tg.attention
// CHECK: tg.softmax
func.func @attention_causal_1e4_and_padding(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>, %m: tensor<2x4xf32>) -> tensor<2x2x4x8xf32> {
  %s = tg.matmul %q, %k transpose_b : (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x4xf32>
  %keep = tg.constant dense<[[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]> : tensor<4x4xi1>
  %kb = tg.broadcast_in_dim %keep dims = [2, 3] : tensor<4x4xi1> -> tensor<2x2x4x4xi1>
  %fill = tg.constant dense<-1.0e4> : tensor<2x2x4x4xf32>
  %z = tg.select %kb, %s, %fill : tensor<2x2x4x4xi1>, tensor<2x2x4x4xf32>
  %mb = tg.broadcast_in_dim %m dims = [0, 3] : tensor<2x4xf32> -> tensor<2x2x4x4xf32>
  %w = tg.add %z, %mb : tensor<2x2x4x4xf32>
  %p = tg.softmax %w dim = 3 : tensor<2x2x4x4xf32>
  %o = tg.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// A causal select of f32's lowest value applied after a run-time mask
// stays: the select makes a hidden score that value, whatever the mask
// added, which adding both to the score does not give.
// CHECK-LABEL: func.func @attention_padding_then_causal_min
// CHECK-NOT: tg.attention
// CHECK: tg.softmax
func.func @attention_padding_then_causal_min(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>, %m: tensor<2x4xf32>) -> tensor<2x2x4x8xf32> {
  %s = tg.matmul %q, %k transpose_b : (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x4xf32>
  %mb = tg.broadcast_in_dim %m dims = [0, 3] : tensor<2x4xf32> -> tensor<2x2x4x4xf32>
  %w = tg.add %s, %mb : tensor<2x2x4x4xf32>
  %keep = tg.constant dense<[[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]> : tensor<4x4xi1>
  %kb = tg.broadcast_in_dim %keep dims = [2, 3] : tensor<4x4xi1> -> tensor<2x2x4x4xi1>
  %fill = tg.constant dense<-3.40282347E+38> : tensor<2x2x4x4xf32>
  %z = tg.select %kb, %w, %fill : tensor<2x2x4x4xi1>, tensor<2x2x4x4xf32>
  %p = tg.softmax %z dim = 3 : tensor<2x2x4x4xf32>
  %o = tg.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// PyTorch's safe softmax (the dynamo exporter's SDPA with a boolean mask):
// the NaN guard after the softmax is part of the pattern.
// CHECK-LABEL: func.func @attention_safe_softmax
// CHECK-NOT: tg.softmax
// CHECK-NOT: tg.compare
// CHECK: tg.attention %{{.*}}, %{{.*}}, %{{.*}} bias %{{.*}} : (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x1x1x4xf32>)
// CHECK-NOT: tg.compare
func.func @attention_safe_softmax(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>, %keep: tensor<2x1x1x4xi1>) -> tensor<2x2x4x8xf32> {
  %zero = tg.constant dense<0.0> : tensor<2x1x1x4xf32>
  %hide = tg.constant dense<0xFF800000> : tensor<2x1x1x4xf32>
  %bias = tg.select %keep, %zero, %hide : tensor<2x1x1x4xi1>, tensor<2x1x1x4xf32>
  %s = tg.matmul %q, %k transpose_b : (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x4xf32>
  %c = tg.constant dense<0.353553385> : tensor<2x2x4x4xf32>
  %y = tg.mul %s, %c : tensor<2x2x4x4xf32>
  %bb = tg.broadcast_in_dim %bias dims = [0, 1, 2, 3] : tensor<2x1x1x4xf32> -> tensor<2x2x4x4xf32>
  %z = tg.add %y, %bb : tensor<2x2x4x4xf32>
  %p = tg.softmax %z dim = 3 : tensor<2x2x4x4xf32>
  %nan = tg.compare ne, %p, %p : tensor<2x2x4x4xf32>
  %zeros = tg.constant dense<0.0> : tensor<2x2x4x4xf32>
  %safe = tg.select %nan, %zeros, %p : tensor<2x2x4x4xi1>, tensor<2x2x4x4xf32>
  %o = tg.matmul %safe, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// A select after the softmax that is not the NaN guard (here it replaces
// NaN by 1) is not attention.
// CHECK-LABEL: func.func @attention_not_safe_softmax
// CHECK-NOT: tg.attention
// CHECK: tg.softmax
func.func @attention_not_safe_softmax(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32> {
  %s = tg.matmul %q, %k transpose_b : (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x4xf32>
  %p = tg.softmax %s dim = 3 : tensor<2x2x4x4xf32>
  %nan = tg.compare ne, %p, %p : tensor<2x2x4x4xf32>
  %ones = tg.constant dense<1.0> : tensor<2x2x4x4xf32>
  %safe = tg.select %nan, %ones, %p : tensor<2x2x4x4xi1>, tensor<2x2x4x4xf32>
  %o = tg.matmul %safe, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// A constant mask other than the causal one (a sliding window of 2 keys,
// Mistral's) is the bias, one [1, 1, Sq, Sk] block for every batch and
// head.
// CHECK-LABEL: func.func @attention_sliding_window
// CHECK: %[[B:.*]] = tg.constant dense<{{\[\[\[\[}}0.000000e+00, 0xFF800000, 0xFF800000, 0xFF800000], [0.000000e+00, 0.000000e+00, 0xFF800000, 0xFF800000], [0xFF800000, 0.000000e+00, 0.000000e+00, 0xFF800000], [0xFF800000, 0xFF800000, 0.000000e+00, 0.000000e+00]]]]> : tensor<1x1x4x4xf32>
// CHECK: tg.attention %{{.*}}, %{{.*}}, %{{.*}} bias %[[B]] :
func.func @attention_sliding_window(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32> {
  %s = tg.matmul %q, %k transpose_b : (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x4xf32>
  %c = tg.constant dense<0.353553385> : tensor<2x2x4x4xf32>
  %y = tg.mul %s, %c : tensor<2x2x4x4xf32>
  %mask = tg.constant dense<[[0.0, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0xFF800000, 0xFF800000], [0xFF800000, 0.0, 0.0, 0xFF800000], [0xFF800000, 0xFF800000, 0.0, 0.0]]> : tensor<4x4xf32>
  %mb = tg.broadcast_in_dim %mask dims = [2, 3] : tensor<4x4xf32> -> tensor<2x2x4x4xf32>
  %z = tg.add %y, %mb : tensor<2x2x4x4xf32>
  %p = tg.softmax %z dim = 3 : tensor<2x2x4x4xf32>
  %o = tg.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// A constant bias per head (ALiBi's slopes, causal by -inf): read through
// its broadcast over the batch, [1, H, Sq, Sk].
// CHECK-LABEL: func.func @attention_alibi
// CHECK-SAME: (%{{[^:]*}}: tensor<2x2x3x8xf32>
// CHECK: %[[A:.*]] = tg.constant dense<{{.*}}> : tensor<1x2x3x3xf32>
// CHECK: tg.attention %{{.*}}, %{{.*}}, %{{.*}} bias %[[A]] :
func.func @attention_alibi(%q: tensor<2x2x3x8xf32>, %k: tensor<2x2x3x8xf32>, %v: tensor<2x2x3x8xf32>) -> tensor<2x2x3x8xf32> {
  %s = tg.matmul %q, %k transpose_b : (tensor<2x2x3x8xf32>, tensor<2x2x3x8xf32>) -> tensor<2x2x3x3xf32>
  %c = tg.constant dense<0.353553385> : tensor<2x2x3x3xf32>
  %y = tg.mul %s, %c : tensor<2x2x3x3xf32>
  %alibi = tg.constant dense<[[[[0.0, 0xFF800000, 0xFF800000], [-0.5, 0.0, 0xFF800000], [-1.0, -0.5, 0.0]], [[0.0, 0xFF800000, 0xFF800000], [-0.25, 0.0, 0xFF800000], [-0.5, -0.25, 0.0]]]]> : tensor<1x2x3x3xf32>
  %ab = tg.broadcast_in_dim %alibi dims = [0, 1, 2, 3] : tensor<1x2x3x3xf32> -> tensor<2x2x3x3xf32>
  %z = tg.add %y, %ab : tensor<2x2x3x3xf32>
  %p = tg.softmax %z dim = 3 : tensor<2x2x3x3xf32>
  %o = tg.matmul %p, %v : (tensor<2x2x3x3xf32>, tensor<2x2x3x8xf32>) -> tensor<2x2x3x8xf32>
  return %o : tensor<2x2x3x8xf32>
}

// -----

// The same with the second head's first row hidden whole by -inf (NaN in
// the decomposition): it stays.
// CHECK-LABEL: func.func @attention_alibi_hidden_row
// CHECK-NOT: tg.attention
// CHECK: tg.softmax
func.func @attention_alibi_hidden_row(%q: tensor<2x2x3x8xf32>, %k: tensor<2x2x3x8xf32>, %v: tensor<2x2x3x8xf32>) -> tensor<2x2x3x8xf32> {
  %s = tg.matmul %q, %k transpose_b : (tensor<2x2x3x8xf32>, tensor<2x2x3x8xf32>) -> tensor<2x2x3x3xf32>
  %alibi = tg.constant dense<[[[[0.0, 0xFF800000, 0xFF800000], [-0.5, 0.0, 0xFF800000], [-1.0, -0.5, 0.0]], [[0xFF800000, 0xFF800000, 0xFF800000], [-0.25, 0.0, 0xFF800000], [-0.5, -0.25, 0.0]]]]> : tensor<1x2x3x3xf32>
  %ab = tg.broadcast_in_dim %alibi dims = [0, 1, 2, 3] : tensor<1x2x3x3xf32> -> tensor<2x2x3x3xf32>
  %z = tg.add %s, %ab : tensor<2x2x3x3xf32>
  %p = tg.softmax %z dim = 3 : tensor<2x2x3x3xf32>
  %o = tg.matmul %p, %v : (tensor<2x2x3x3xf32>, tensor<2x2x3x8xf32>) -> tensor<2x2x3x8xf32>
  return %o : tensor<2x2x3x8xf32>
}

// -----

// Gemma 2's eager attention: the scaled scores soft-capped
// (`c * tanh(s / c)`, c = 50) before its causal mask and a run-time
// padding mask are added: one tg.attention with the soft cap, the causal
// flag and the padding as the bias; the scale is the one inside the cap.
// CHECK-LABEL: func.func @attention_softcap
// CHECK-SAME: %[[M:[^:]*]]: tensor<2x4xf32>
// CHECK: %[[B:.*]] = tg.reshape %[[M]] : tensor<2x4xf32> -> tensor<2x1x1x4xf32>
// CHECK: tg.attention %{{.*}}, %{{.*}}, %{{.*}} bias %[[B]] causal scale = 1.250000e-01 softcap = 5.000000e+01 :
// CHECK-NOT: tg.tanh
func.func @attention_softcap(%q: tensor<2x2x4x16xf32>, %k: tensor<2x2x4x16xf32>, %v: tensor<2x2x4x8xf32>, %m: tensor<2x4xf32>) -> tensor<2x2x4x8xf32> {
  %s = tg.matmul %q, %k transpose_b : (tensor<2x2x4x16xf32>, tensor<2x2x4x16xf32>) -> tensor<2x2x4x4xf32>
  %scale = tg.constant dense<1.250000e-01> : tensor<2x2x4x4xf32>
  %ss = tg.mul %s, %scale : tensor<2x2x4x4xf32>
  %cap = tg.constant dense<5.000000e+01> : tensor<2x2x4x4xf32>
  %d = tg.div %ss, %cap : tensor<2x2x4x4xf32>
  %t = tg.tanh %d : tensor<2x2x4x4xf32>
  %c = tg.mul %t, %cap : tensor<2x2x4x4xf32>
  %keep = tg.constant dense<[[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]> : tensor<4x4xi1>
  %kb = tg.broadcast_in_dim %keep dims = [2, 3] : tensor<4x4xi1> -> tensor<2x2x4x4xi1>
  %fill = tg.constant dense<0xFF800000> : tensor<2x2x4x4xf32>
  %z = tg.select %kb, %c, %fill : tensor<2x2x4x4xi1>, tensor<2x2x4x4xf32>
  %mb = tg.broadcast_in_dim %m dims = [0, 3] : tensor<2x4xf32> -> tensor<2x2x4x4xf32>
  %w = tg.add %z, %mb : tensor<2x2x4x4xf32>
  %p = tg.softmax %w dim = 3 : tensor<2x2x4x4xf32>
  %o = tg.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// A mask applied before the cap is capped with the scores (its -inf
// becomes -c): not the attention's bias, which comes after the cap.
// CHECK-LABEL: func.func @attention_mask_inside_softcap
// CHECK-NOT: tg.attention
// CHECK: tg.tanh
func.func @attention_mask_inside_softcap(%q: tensor<2x2x4x16xf32>, %k: tensor<2x2x4x16xf32>, %v: tensor<2x2x4x8xf32>, %m: tensor<2x2x4x4xf32>) -> tensor<2x2x4x8xf32> {
  %s = tg.matmul %q, %k transpose_b : (tensor<2x2x4x16xf32>, tensor<2x2x4x16xf32>) -> tensor<2x2x4x4xf32>
  %a = tg.add %s, %m : tensor<2x2x4x4xf32>
  %cap = tg.constant dense<3.000000e+01> : tensor<2x2x4x4xf32>
  %d = tg.div %a, %cap : tensor<2x2x4x4xf32>
  %t = tg.tanh %d : tensor<2x2x4x4xf32>
  %c = tg.mul %t, %cap : tensor<2x2x4x4xf32>
  %p = tg.softmax %c dim = 3 : tensor<2x2x4x4xf32>
  %o = tg.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// Two caps in a row are not one.
// CHECK-LABEL: func.func @attention_two_softcaps
// CHECK-NOT: tg.attention
func.func @attention_two_softcaps(%q: tensor<1x2x4x16xf32>, %k: tensor<1x2x4x16xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %s = tg.matmul %q, %k transpose_b : (tensor<1x2x4x16xf32>, tensor<1x2x4x16xf32>) -> tensor<1x2x4x4xf32>
  %cap = tg.constant dense<3.000000e+01> : tensor<1x2x4x4xf32>
  %d = tg.div %s, %cap : tensor<1x2x4x4xf32>
  %t = tg.tanh %d : tensor<1x2x4x4xf32>
  %c = tg.mul %t, %cap : tensor<1x2x4x4xf32>
  %d2 = tg.div %c, %cap : tensor<1x2x4x4xf32>
  %t2 = tg.tanh %d2 : tensor<1x2x4x4xf32>
  %c2 = tg.mul %t2, %cap : tensor<1x2x4x4xf32>
  %p = tg.softmax %c2 dim = 3 : tensor<1x2x4x4xf32>
  %o = tg.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Scores with no heads and a constant added to them (a fuzzed
// FlexAttention): the empty constant holds no [Sq, Sk] block to read.
// CHECK-LABEL: func.func @attention_no_heads_constant_bias
func.func @attention_no_heads_constant_bias(%q: tensor<1x0x3x4xf32>, %k: tensor<1x0x3x4xf32>, %v: tensor<1x0x3x4xf32>) -> tensor<1x0x3x4xf32> {
  %s = tg.matmul %q, %k transpose_b : (tensor<1x0x3x4xf32>, tensor<1x0x3x4xf32>) -> tensor<1x0x3x3xf32>
  %b = tg.constant dense<> : tensor<1x0x3x3xf32>
  %a = tg.add %s, %b : tensor<1x0x3x3xf32>
  %p = tg.softmax %a dim = 3 : tensor<1x0x3x3xf32>
  %o = tg.matmul %p, %v : (tensor<1x0x3x3xf32>, tensor<1x0x3x4xf32>) -> tensor<1x0x3x4xf32>
  return %o : tensor<1x0x3x4xf32>
}

// -----

// T5's decoder: a run-time position bias added to the (unscaled) scores,
// then a causal mask of f32's lowest value added after it. Both added: the
// decomposition's hidden score is the score plus both, which the bias
// (their sum) gives too, so both join the bias, without the causal flag.
// CHECK-LABEL: func.func @attention_position_bias_then_causal_min
// CHECK-SAME: %[[P:[^:]*]]: tensor<1x2x4x4xf32>
// CHECK: %[[C:.*]] = tg.constant {{.*}} : tensor<1x1x4x4xf32>
// CHECK: %[[CW:.*]] = tg.broadcast_in_dim %[[C]] dims = [0, 1, 2, 3] : tensor<1x1x4x4xf32> -> tensor<1x2x4x4xf32>
// CHECK: %[[B:.*]] = tg.add %[[P]], %[[CW]] : tensor<1x2x4x4xf32>
// CHECK: tg.attention %{{.*}}, %{{.*}}, %{{.*}} bias %[[B]] scale = 1.000000e+00 :
func.func @attention_position_bias_then_causal_min(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>, %pos: tensor<1x2x4x4xf32>) -> tensor<2x2x4x8xf32> {
  %s = tg.matmul %q, %k transpose_b : (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x4xf32>
  %pb = tg.broadcast_in_dim %pos dims = [0, 1, 2, 3] : tensor<1x2x4x4xf32> -> tensor<2x2x4x4xf32>
  %w = tg.add %s, %pb : tensor<2x2x4x4xf32>
  %causal = tg.constant dense<[[[[0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0]]]]> : tensor<1x1x4x4xf32>
  %cb = tg.broadcast_in_dim %causal dims = [0, 1, 2, 3] : tensor<1x1x4x4xf32> -> tensor<2x2x4x4xf32>
  %z = tg.add %w, %cb : tensor<2x2x4x4xf32>
  %p = tg.softmax %z dim = 3 : tensor<2x2x4x4xf32>
  %o = tg.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// Zeros added to the scores, twice (T5's cross-attention position bias
// without a mask, as the dynamo exporter writes it): they change no
// softmax, so they neither count as a mask nor make a bias.
// CHECK-LABEL: func.func @attention_zeros_added
// CHECK-NOT: tg.softmax
// CHECK: tg.attention %{{[^,]*}}, %{{[^,]*}}, %{{[^ ]*}} scale = 1.000000e+00 : (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>) ->
func.func @attention_zeros_added(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32> {
  %s = tg.matmul %q, %k transpose_b : (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x4xf32>
  %zero = tg.constant dense<0.0> : tensor<2x2x4x4xf32>
  %a = tg.add %s, %zero : tensor<2x2x4x4xf32>
  %b = tg.add %a, %zero : tensor<2x2x4x4xf32>
  %p = tg.softmax %b dim = 3 : tensor<2x2x4x4xf32>
  %o = tg.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %o : tensor<2x2x4x8xf32>
}

// -----

// BLOOM's attention: q, k and v views of [B, H, S, D] merged to
// [B * H, S, D], the scores baddbmm's scaled product plus ALiBi (a constant
// here, as the causal mask), viewed as [B, H, S, S] for the mask and the
// softmax, and the probabilities viewed back for the product with the
// values. The views
// move to the operands' 4-D forms and the attention is raised, the scale
// its own and ALiBi and the mask its bias.
// CHECK-LABEL: func.func @attention_merged_heads
// CHECK-SAME:    (%[[Q:[^:]+]]: tensor<1x2x4x8xf32>, %[[K:[^:]+]]: tensor<1x2x4x8xf32>, %[[V:[^:]+]]: tensor<1x2x4x8xf32>)
// CHECK-NOT:     tg.softmax
// CHECK:         %[[O:.*]], %{{.*}} = tg.attention %[[Q]], %[[K]], %[[V]] bias %{{.*}} scale = 5.000000e-01 : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>)
// CHECK:         return %[[O]]
func.func @attention_merged_heads(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %q3 = tg.reshape %q : tensor<1x2x4x8xf32> -> tensor<2x4x8xf32>
  %k3 = tg.reshape %k : tensor<1x2x4x8xf32> -> tensor<2x4x8xf32>
  %kt = tg.transpose %k3 perm = [0, 2, 1] : tensor<2x4x8xf32> -> tensor<2x8x4xf32>
  %v3 = tg.reshape %v : tensor<1x2x4x8xf32> -> tensor<2x4x8xf32>
  %s = tg.matmul %q3, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %alpha = tg.constant dense<0.5> : tensor<2x4x4xf32>
  %scaled = tg.mul %s, %alpha : tensor<2x4x4xf32>
  %alibi = tg.constant dense<[[[0.0, 0.25, 0.5, 0.75], [0.0, 0.25, 0.5, 0.75], [0.0, 0.25, 0.5, 0.75], [0.0, 0.25, 0.5, 0.75]], [[0.0, 0.5, 1.0, 1.5], [0.0, 0.5, 1.0, 1.5], [0.0, 0.5, 1.0, 1.5], [0.0, 0.5, 1.0, 1.5]]]> : tensor<2x4x4xf32>
  %biased = tg.add %scaled, %alibi : tensor<2x4x4xf32>
  %s4 = tg.reshape %biased : tensor<2x4x4xf32> -> tensor<1x2x4x4xf32>
  %mask = tg.constant dense<[[[[0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0]]]]> : tensor<1x1x4x4xf32>
  %mb = tg.broadcast_in_dim %mask dims = [0, 1, 2, 3] : tensor<1x1x4x4xf32> -> tensor<1x2x4x4xf32>
  %masked = tg.add %s4, %mb : tensor<1x2x4x4xf32>
  %p = tg.softmax %masked dim = 3 : tensor<1x2x4x4xf32>
  %p3 = tg.reshape %p : tensor<1x2x4x4xf32> -> tensor<2x4x4xf32>
  %o = tg.matmul %p3, %v3 : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %o4 = tg.reshape %o : tensor<2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %o4 : tensor<1x2x4x8xf32>
}

// -----

// Two masks computed at run time added to the scores (BLOOM's ALiBi from
// the padding mask's positions, then the padding mask): the bias sums
// them, each times the scales applied after it.
// CHECK-LABEL: func.func @attention_two_added_masks
// CHECK-SAME:    (%[[Q:[^:]+]]: tensor<1x2x4x8xf32>, %[[K:[^:]+]]: tensor<1x2x4x8xf32>, %[[V:[^:]+]]: tensor<1x2x4x8xf32>, %[[A:[^:]+]]: tensor<1x2x1x4xf32>, %[[M:[^:]+]]: tensor<1x1x1x4xf32>)
// CHECK:         %[[AS:.*]] = tg.mul %[[A]], %{{.*}} : tensor<1x2x1x4xf32>
// CHECK:         %[[MB:.*]] = tg.broadcast_in_dim %[[M]] dims = [0, 1, 2, 3] : tensor<1x1x1x4xf32> -> tensor<1x2x1x4xf32>
// CHECK:         %[[BIAS:.*]] = tg.add %[[MB]], %[[AS]] : tensor<1x2x1x4xf32>
// CHECK:         tg.attention %[[Q]], %[[K]], %[[V]] bias %[[BIAS]] scale = 5.000000e-01 : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x1x4xf32>)
func.func @attention_two_added_masks(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %alibi: tensor<1x2x1x4xf32>, %pad: tensor<1x1x1x4xf32>) -> tensor<1x2x4x8xf32> {
  %s = tg.matmul %q, %k transpose_b : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %ab = tg.broadcast_in_dim %alibi dims = [0, 1, 2, 3] : tensor<1x2x1x4xf32> -> tensor<1x2x4x4xf32>
  %a = tg.add %s, %ab : tensor<1x2x4x4xf32>
  %half = tg.constant dense<0.5> : tensor<1x2x4x4xf32>
  %scaled = tg.mul %a, %half : tensor<1x2x4x4xf32>
  %mb = tg.broadcast_in_dim %pad dims = [0, 1, 2, 3] : tensor<1x1x1x4xf32> -> tensor<1x2x4x4xf32>
  %b = tg.add %scaled, %mb : tensor<1x2x4x4xf32>
  %p = tg.softmax %b dim = 3 : tensor<1x2x4x4xf32>
  %o = tg.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// A product of merged heads whose operands are arguments (no 4-D views to
// read) keeps its reshapes.
// CHECK-LABEL: func.func @merged_heads_arguments
// CHECK:         tg.matmul {{.*}} : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
// CHECK-NOT:     tg.attention
func.func @merged_heads_arguments(%s: tensor<2x4x4xf32>, %v3: tensor<2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %s4 = tg.reshape %s : tensor<2x4x4xf32> -> tensor<1x2x4x4xf32>
  %p = tg.softmax %s4 dim = 3 : tensor<1x2x4x4xf32>
  %p3 = tg.reshape %p : tensor<1x2x4x4xf32> -> tensor<2x4x4xf32>
  %o = tg.matmul %p3, %v3 : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %o4 = tg.reshape %o : tensor<2x4x8xf32> -> tensor<1x2x4x8xf32>
  return %o4 : tensor<1x2x4x8xf32>
}

// -----

// Transformers' batched_mm experts: each (token, expert) pair's matrix
// gathered from the experts' table by the router's top-k, the importer's
// wrapping of negative ids, then one product per pair. Raised to one
// grouped product of each pair's vector with its expert's matrix, read in
// place from the table ([E, O, H], applied transposed), at the same ids.
// CHECK-LABEL: func.func @experts_left
// CHECK-SAME:    (%{{[^:]+}}: tensor<3x4xf32>, %[[W:[^:]+]]: tensor<4x10x16xf32>, %[[X:[^:]+]]: tensor<6x16x1xf32>)
// CHECK-NOT:     tg.embedding
// CHECK:         %[[IDS:.*]] = tg.select
// CHECK:         %[[T:.*]] = tg.reshape %[[W]] : tensor<4x10x16xf32> -> tensor<4x160xf32>
// CHECK:         %[[V:.*]] = tg.reshape %[[X]] : tensor<6x16x1xf32> -> tensor<6x16xf32>
// CHECK:         %[[M:.*]] = tg.reshape %[[T]] : tensor<4x160xf32> -> tensor<4x10x16xf32>
// CHECK:         %[[Y:.*]] = tg.expert_matmul %[[V]], %[[M]][%[[IDS]]] transpose_b : (tensor<6x16xf32>, tensor<4x10x16xf32>, tensor<6xi64>) -> tensor<6x10xf32>
// CHECK:         %[[R:.*]] = tg.reshape %[[Y]] : tensor<6x10xf32> -> tensor<6x10x1xf32>
// CHECK:         return %[[R]]
func.func @experts_left(%router: tensor<3x4xf32>, %w: tensor<4x10x16xf32>, %x: tensor<6x16x1xf32>) -> tensor<6x10x1xf32> {
  %v, %i = tg.top_k %router k = 2 : tensor<3x4xf32> -> tensor<3x2xf32>, tensor<3x2xi64>
  %flat = tg.reshape %i : tensor<3x2xi64> -> tensor<6xi64>
  %zero = tg.constant dense<0> : tensor<6xi64>
  %four = tg.constant dense<4> : tensor<6xi64>
  %neg = tg.compare lt, %flat, %zero : tensor<6xi64>
  %wrapped = tg.add %flat, %four : tensor<6xi64>
  %ids = tg.select %neg, %wrapped, %flat : tensor<6xi1>, tensor<6xi64>
  %table = tg.reshape %w : tensor<4x10x16xf32> -> tensor<4x160xf32>
  %g = tg.embedding %table[%ids] : (tensor<4x160xf32>, tensor<6xi64>) -> tensor<6x160xf32>
  %m = tg.reshape %g : tensor<6x160xf32> -> tensor<6x10x16xf32>
  %y = tg.matmul %m, %x : (tensor<6x10x16xf32>, tensor<6x16x1xf32>) -> tensor<6x10x1xf32>
  return %y : tensor<6x10x1xf32>
}

// -----

// Vectors times [H, O] matrices: the table viewed as [E, H, O], not
// transposed. Ids of any origin (an argument here): the grouped product
// reports an id outside [0, E) as the embedding did. A bf16 product with an
// f32 result keeps its result type.
// CHECK-LABEL: func.func @experts_right
// CHECK-NOT:     tg.embedding
// CHECK:         tg.expert_matmul %{{.*}}, %{{.*}}[%{{.*}}] : (tensor<6x16xbf16>, tensor<4x16x10xbf16>, tensor<6xi32>) -> tensor<6x10xf32>
func.func @experts_right(%ids: tensor<6xi32>, %w: tensor<4x160xbf16>, %x: tensor<6x1x16xbf16>) -> tensor<6x1x10xf32> {
  %g = tg.embedding %w[%ids] : (tensor<4x160xbf16>, tensor<6xi32>) -> tensor<6x160xbf16>
  %m = tg.reshape %g : tensor<6x160xbf16> -> tensor<6x16x10xbf16>
  %y = tg.matmul %x, %m : (tensor<6x1x16xbf16>, tensor<6x16x10xbf16>) -> tensor<6x1x10xf32>
  return %y : tensor<6x1x10xf32>
}

// -----

// Gathered matrices read elsewhere too (the embedding must stay), and a
// product of them that transposes the vectors, stay as they are.
// CHECK-LABEL: func.func @experts_gathered_used
// CHECK:         tg.embedding
// CHECK-NOT:     tg.expert_matmul
// CHECK-LABEL: func.func @experts_transposed
// CHECK:         tg.embedding
// CHECK-NOT:     tg.expert_matmul
func.func @experts_gathered_used(%ids: tensor<6xi64>, %w: tensor<4x160xf32>, %x: tensor<6x16x1xf32>) -> (tensor<6x10x1xf32>, tensor<6x160xf32>) {
  %g = tg.embedding %w[%ids] : (tensor<4x160xf32>, tensor<6xi64>) -> tensor<6x160xf32>
  %m = tg.reshape %g : tensor<6x160xf32> -> tensor<6x10x16xf32>
  %y = tg.matmul %m, %x : (tensor<6x10x16xf32>, tensor<6x16x1xf32>) -> tensor<6x10x1xf32>
  return %y, %g : tensor<6x10x1xf32>, tensor<6x160xf32>
}
func.func @experts_transposed(%ids: tensor<6xi64>, %w: tensor<4x160xf32>, %x: tensor<6x1x16xf32>) -> tensor<6x10x1xf32> {
  %g = tg.embedding %w[%ids] : (tensor<4x160xf32>, tensor<6xi64>) -> tensor<6x160xf32>
  %m = tg.reshape %g : tensor<6x160xf32> -> tensor<6x10x16xf32>
  %y = tg.matmul %m, %x transpose_b : (tensor<6x10x16xf32>, tensor<6x1x16xf32>) -> tensor<6x10x1xf32>
  return %y : tensor<6x10x1xf32>
}

// -----

// Attention sinks (GPT-OSS): a logit per head joins each row of scores, the
// row maximum is subtracted, the sink's probability dropped after the
// softmax. Raised as one more key in front, of zero key and value, whose
// score is the sink through the bias; the causal mask stays the flag.
// CHECK-LABEL: func.func @attention_sinks
// CHECK-SAME:    (%[[Q:[^:]+]]: tensor<1x2x4x8xf32>, %[[K:[^:]+]]: tensor<1x2x4x8xf32>, %[[V:[^:]+]]: tensor<1x2x4x8xf32>, %[[S:[^:]+]]: tensor<2xf32>)
// CHECK:         %[[COL:.*]] = tg.reshape %[[S]] : tensor<2xf32> -> tensor<1x2x1x1xf32>
// CHECK:         %[[BIAS:.*]] = tg.concat %[[COL]], %{{.*}} dim = 3 : (tensor<1x2x1x1xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x1x5xf32>
// CHECK:         %[[K2:.*]] = tg.concat %{{.*}}, %[[K]] dim = 2
// CHECK:         %[[V2:.*]] = tg.concat %{{.*}}, %[[V]] dim = 2
// CHECK:         %[[O:.*]], %{{.*}} = tg.attention %[[Q]], %[[K2]], %[[V2]] bias %[[BIAS]] causal
// CHECK:         return %[[O]]
func.func @attention_sinks(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %sink: tensor<2xf32>) -> tensor<1x2x4x8xf32> {
  %kt = tg.transpose %k perm = [0, 1, 3, 2] : tensor<1x2x4x8xf32> -> tensor<1x2x8x4xf32>
  %s = tg.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %c = tg.constant dense<0.353553385> : tensor<1x2x4x4xf32>
  %y = tg.mul %s, %c : tensor<1x2x4x4xf32>
  %mask = tg.constant dense<[[[[0.0, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0xFF800000], [0.0, 0.0, 0.0, 0.0]]]]> : tensor<1x1x4x4xf32>
  %mb = tg.broadcast_in_dim %mask dims = [0, 1, 2, 3] : tensor<1x1x4x4xf32> -> tensor<1x2x4x4xf32>
  %z = tg.add %y, %mb : tensor<1x2x4x4xf32>
  %sr = tg.reshape %sink : tensor<2xf32> -> tensor<1x2x1x1xf32>
  %sb = tg.broadcast_in_dim %sr dims = [0, 1, 2, 3] : tensor<1x2x1x1xf32> -> tensor<1x2x4x1xf32>
  %x = tg.concat %z, %sb dim = 3 : (tensor<1x2x4x4xf32>, tensor<1x2x4x1xf32>) -> tensor<1x2x4x5xf32>
  %mx = tg.reduce max %x dims = [3] : tensor<1x2x4x5xf32> -> tensor<1x2x4xf32>
  %mr = tg.reshape %mx : tensor<1x2x4xf32> -> tensor<1x2x4x1xf32>
  %mxb = tg.broadcast_in_dim %mr dims = [0, 1, 2, 3] : tensor<1x2x4x1xf32> -> tensor<1x2x4x5xf32>
  %d = tg.sub %x, %mxb : tensor<1x2x4x5xf32>
  %p = tg.softmax %d dim = 3 : tensor<1x2x4x5xf32>
  %ps = tg.slice %p [0:1, 0:2, 0:4, 0:4] : tensor<1x2x4x5xf32> -> tensor<1x2x4x4xf32>
  %o = tg.matmul %ps, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// A softmax whose first column is dropped (not a sink's last), and one whose
// dropped column is a slice of the scores themselves: both stay.
// CHECK-LABEL: func.func @sinks_first_column
// CHECK:         tg.softmax
// CHECK-LABEL: func.func @sinks_of_scores
// CHECK:         tg.softmax
func.func @sinks_first_column(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %sink: tensor<1x2x4x1xf32>) -> tensor<1x2x4x8xf32> {
  %kt = tg.transpose %k perm = [0, 1, 3, 2] : tensor<1x2x4x8xf32> -> tensor<1x2x8x4xf32>
  %s = tg.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %x = tg.concat %sink, %s dim = 3 : (tensor<1x2x4x1xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x5xf32>
  %p = tg.softmax %x dim = 3 : tensor<1x2x4x5xf32>
  %ps = tg.slice %p [0:1, 0:2, 0:4, 1:5] : tensor<1x2x4x5xf32> -> tensor<1x2x4x4xf32>
  %o = tg.matmul %ps, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}
func.func @sinks_of_scores(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %kt = tg.transpose %k perm = [0, 1, 3, 2] : tensor<1x2x4x8xf32> -> tensor<1x2x8x4xf32>
  %s = tg.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %p = tg.softmax %s dim = 3 : tensor<1x2x4x4xf32>
  %ps = tg.slice %p [0:1, 0:2, 0:4, 0:3] : tensor<1x2x4x4xf32> -> tensor<1x2x4x3xf32>
  %vs = tg.slice %v [0:1, 0:2, 0:3, 0:8] : tensor<1x2x4x8xf32> -> tensor<1x2x3x8xf32>
  %o = tg.matmul %ps, %vs : (tensor<1x2x4x3xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}
