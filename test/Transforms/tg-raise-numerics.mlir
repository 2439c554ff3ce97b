// tg-raise keeps the numbers: each function is run on the interpreter before
// and after raising, on the same random inputs, and the results must agree
// within float32 rounding of the different evaluation orders.
// RUN: tgc-opt %s --tg-raise -o %t.mlir
// RUN: FileCheck %s --check-prefix=RAISED < %t.mlir
// RUN: tgc run --compare %s %t.mlir --entry layer_norm --random-inputs 1 --rtol 1e-5 --atol 1e-5 | FileCheck %s
// RUN: tgc run --compare %s %t.mlir --entry rms_norm --random-inputs 2 --rtol 1e-5 --atol 1e-5 | FileCheck %s
// RUN: tgc run --compare %s %t.mlir --entry gelu_erf --random-inputs 3 --rtol 1e-5 --atol 1e-6 | FileCheck %s
// RUN: tgc run --compare %s %t.mlir --entry gelu_tanh --random-inputs 4 --rtol 1e-5 --atol 1e-6 | FileCheck %s
// RUN: tgc run --compare %s %t.mlir --entry silu --random-inputs 5 --rtol 1e-5 --atol 1e-6 | FileCheck %s
// CHECK: y: max abs error {{.*}} ok

// RAISED-LABEL: func.func @layer_norm
// RAISED: tg.layer_norm
// RAISED-LABEL: func.func @rms_norm
// RAISED: tg.rms_norm
// RAISED-LABEL: func.func @gelu_erf
// RAISED: tg.gelu erf
// RAISED-LABEL: func.func @gelu_tanh
// RAISED: tg.gelu tanh
// RAISED-LABEL: func.func @silu
// RAISED: tg.silu

func.func @layer_norm(%x: tensor<2x5x16xf32> {tg.role = "input", tg.name = "x"},
                      %g: tensor<16xf32> {tg.role = "input", tg.name = "g"},
                      %b: tensor<16xf32> {tg.role = "input", tg.name = "b"})
    -> (tensor<2x5x16xf32> {tg.name = "y"}) {
  %m = tg.reduce mean %x dims = [2] : tensor<2x5x16xf32> -> tensor<2x5xf32>
  %mk = tg.reshape %m : tensor<2x5xf32> -> tensor<2x5x1xf32>
  %mb = tg.broadcast_in_dim %mk dims = [0, 1, 2] : tensor<2x5x1xf32> -> tensor<2x5x16xf32>
  %d = tg.sub %x, %mb : tensor<2x5x16xf32>
  %two = tg.constant dense<2.0> : tensor<f32>
  %twob = tg.broadcast_in_dim %two dims = [] : tensor<f32> -> tensor<2x5x16xf32>
  %sq = tg.pow %d, %twob : tensor<2x5x16xf32>
  %v = tg.reduce mean %sq dims = [2] : tensor<2x5x16xf32> -> tensor<2x5xf32>
  %vk = tg.reshape %v : tensor<2x5xf32> -> tensor<2x5x1xf32>
  %eps = tg.constant dense<9.99999974E-6> : tensor<f32>
  %epsb = tg.broadcast_in_dim %eps dims = [] : tensor<f32> -> tensor<2x5x1xf32>
  %ve = tg.add %vk, %epsb : tensor<2x5x1xf32>
  %s = tg.sqrt %ve : tensor<2x5x1xf32>
  %sb = tg.broadcast_in_dim %s dims = [0, 1, 2] : tensor<2x5x1xf32> -> tensor<2x5x16xf32>
  %n = tg.div %d, %sb : tensor<2x5x16xf32>
  %gb = tg.broadcast_in_dim %g dims = [2] : tensor<16xf32> -> tensor<2x5x16xf32>
  %y0 = tg.mul %n, %gb : tensor<2x5x16xf32>
  %bb = tg.broadcast_in_dim %b dims = [2] : tensor<16xf32> -> tensor<2x5x16xf32>
  %y = tg.add %y0, %bb : tensor<2x5x16xf32>
  return %y : tensor<2x5x16xf32>
}

func.func @rms_norm(%x: tensor<2x5x16xf32> {tg.role = "input", tg.name = "x"},
                    %w: tensor<16xf32> {tg.role = "input", tg.name = "w"})
    -> (tensor<2x5x16xf32> {tg.name = "y"}) {
  %two = tg.constant dense<2.0> : tensor<f32>
  %twob = tg.broadcast_in_dim %two dims = [] : tensor<f32> -> tensor<2x5x16xf32>
  %sq = tg.pow %x, %twob : tensor<2x5x16xf32>
  %v = tg.reduce mean %sq dims = [2] : tensor<2x5x16xf32> -> tensor<2x5xf32>
  %vk = tg.reshape %v : tensor<2x5xf32> -> tensor<2x5x1xf32>
  %eps = tg.constant dense<9.99999997E-7> : tensor<f32>
  %epsb = tg.broadcast_in_dim %eps dims = [] : tensor<f32> -> tensor<2x5x1xf32>
  %ve = tg.add %vk, %epsb : tensor<2x5x1xf32>
  %s = tg.sqrt %ve : tensor<2x5x1xf32>
  %one = tg.constant dense<1.0> : tensor<f32>
  %oneb = tg.broadcast_in_dim %one dims = [] : tensor<f32> -> tensor<2x5x1xf32>
  %r = tg.div %oneb, %s : tensor<2x5x1xf32>
  %rb = tg.broadcast_in_dim %r dims = [0, 1, 2] : tensor<2x5x1xf32> -> tensor<2x5x16xf32>
  %n = tg.mul %x, %rb : tensor<2x5x16xf32>
  %wb = tg.broadcast_in_dim %w dims = [2] : tensor<16xf32> -> tensor<2x5x16xf32>
  %y = tg.mul %n, %wb : tensor<2x5x16xf32>
  return %y : tensor<2x5x16xf32>
}

func.func @gelu_erf(%x: tensor<4x32xf32> {tg.role = "input", tg.name = "x"})
    -> (tensor<4x32xf32> {tg.name = "y"}) {
  %c = tg.constant dense<1.41421354> : tensor<f32>
  %cb = tg.broadcast_in_dim %c dims = [] : tensor<f32> -> tensor<4x32xf32>
  %0 = tg.div %x, %cb : tensor<4x32xf32>
  %1 = tg.erf %0 : tensor<4x32xf32>
  %one = tg.constant dense<1.0> : tensor<f32>
  %oneb = tg.broadcast_in_dim %one dims = [] : tensor<f32> -> tensor<4x32xf32>
  %2 = tg.add %1, %oneb : tensor<4x32xf32>
  %3 = tg.mul %x, %2 : tensor<4x32xf32>
  %h = tg.constant dense<0.5> : tensor<f32>
  %hb = tg.broadcast_in_dim %h dims = [] : tensor<f32> -> tensor<4x32xf32>
  %y = tg.mul %3, %hb : tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}

func.func @gelu_tanh(%x: tensor<4x32xf32> {tg.role = "input", tg.name = "x"})
    -> (tensor<4x32xf32> {tg.name = "y"}) {
  %0 = tg.mul %x, %x : tensor<4x32xf32>
  %1 = tg.mul %x, %0 : tensor<4x32xf32>
  %c0 = tg.constant dense<0.0447149985> : tensor<f32>
  %c0b = tg.broadcast_in_dim %c0 dims = [] : tensor<f32> -> tensor<4x32xf32>
  %2 = tg.mul %c0b, %1 : tensor<4x32xf32>
  %3 = tg.add %x, %2 : tensor<4x32xf32>
  %c1 = tg.constant dense<0.797884583> : tensor<f32>
  %c1b = tg.broadcast_in_dim %c1 dims = [] : tensor<f32> -> tensor<4x32xf32>
  %4 = tg.mul %c1b, %3 : tensor<4x32xf32>
  %5 = tg.tanh %4 : tensor<4x32xf32>
  %one = tg.constant dense<1.0> : tensor<f32>
  %oneb = tg.broadcast_in_dim %one dims = [] : tensor<f32> -> tensor<4x32xf32>
  %6 = tg.add %oneb, %5 : tensor<4x32xf32>
  %7 = tg.mul %x, %6 : tensor<4x32xf32>
  %h = tg.constant dense<0.5> : tensor<f32>
  %hb = tg.broadcast_in_dim %h dims = [] : tensor<f32> -> tensor<4x32xf32>
  %y = tg.mul %hb, %7 : tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}

func.func @silu(%x: tensor<4x32xf32> {tg.role = "input", tg.name = "x"})
    -> (tensor<4x32xf32> {tg.name = "y"}) {
  %0 = tg.sigmoid %x : tensor<4x32xf32>
  %y = tg.mul %x, %0 : tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}
