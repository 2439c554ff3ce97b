// RUN: tgc-opt %s --split-input-file --tg-raise | FileCheck %s

// LayerNormalization as torch.onnx.export (opset 14) writes it and an
// importer translates it: keepdims means as reshapes, scalars broadcast.
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
