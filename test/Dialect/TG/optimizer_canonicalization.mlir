// RUN: tgc-opt %s --split-input-file --canonicalize | FileCheck %s

// An update of a widened gradient reads the narrow one and widens it itself:
// the f32 copy of a bf16 gradient is never stored.
// CHECK-LABEL: func.func @adamw_reads_bf16_grad
// CHECK-SAME: %[[G:arg1]]: tensor<2x3xbf16>
// CHECK-NOT: tg.convert
// CHECK: tg.adamw %arg0, %[[G]], {{.*}} : tensor<2x3xf32> grad tensor<2x3xbf16>, tensor<f32>, tensor<i64>
func.func @adamw_reads_bf16_grad(%p: tensor<2x3xf32>, %g: tensor<2x3xbf16>, %m: tensor<2x3xf32>, %v: tensor<2x3xf32>, %lr: tensor<f32>, %t: tensor<i64>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %g32 = tg.convert %g : tensor<2x3xbf16> -> tensor<2x3xf32>
  %0:3 = tg.adamw %p, %g32, %m, %v, %lr, %t betas = (0.9, 0.999) epsilon = 1.0e-8 weight_decay = 0.0 : tensor<2x3xf32>, tensor<f32>, tensor<i64>
  return %0#0, %0#1, %0#2 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Every optimizer op does it; a convert that other ops also read stays for
// them.
// CHECK-LABEL: func.func @all_updates
// CHECK: %[[W:.*]] = tg.convert %arg1
// CHECK: tg.sgd %arg0, %arg1, {{.*}} : tensor<4xf32> grad tensor<4xf16>, tensor<f32>
// CHECK: tg.lamb %arg0, %arg1, {{.*}} : tensor<4xf32> grad tensor<4xf16>, tensor<f32>, tensor<i64>
// CHECK: tg.adafactor %arg0, %arg1, {{.*}} : tensor<4xf32> grad tensor<4xf16>, [tensor<4xf32>], tensor<f32>, tensor<i64>
// CHECK: return {{.*}}, %[[W]]
func.func @all_updates(%p: tensor<4xf32>, %g: tensor<4xf16>, %m: tensor<4xf32>, %v: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<i64>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %g32 = tg.convert %g : tensor<4xf16> -> tensor<4xf32>
  %0 = tg.sgd %p, %g32, %lr momentum = 0.0 weight_decay = 0.0 : tensor<4xf32>, tensor<f32>
  %1:3 = tg.lamb %p, %g32, %m, %v, %lr, %t betas = (0.9, 0.999) epsilon = 1.0e-6 weight_decay = 0.01 : tensor<4xf32>, tensor<f32>, tensor<i64>
  %2:2 = tg.adafactor %p, %g32, [%v], %lr, %t decay_rate = -0.8 epsilon1 = 1.0e-30 clip_threshold = 1.0 weight_decay = 0.0 : tensor<4xf32>, [tensor<4xf32>], tensor<f32>, tensor<i64>
  return %0, %1#0, %2#0, %g32 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// A narrowing convert rounds: the update must read the rounded gradient.
// CHECK-LABEL: func.func @narrowing_convert_stays
// CHECK: %[[R:.*]] = tg.convert %arg1 : tensor<4xf64> -> tensor<4xf32>
// CHECK: tg.sgd %arg0, %[[R]], {{.*}} : tensor<4xf32>, tensor<f32>
func.func @narrowing_convert_stays(%p: tensor<4xf32>, %g: tensor<4xf64>, %lr: tensor<f32>) -> tensor<4xf32> {
  %g32 = tg.convert %g : tensor<4xf64> -> tensor<4xf32>
  %0 = tg.sgd %p, %g32, %lr momentum = 0.0 weight_decay = 0.0 : tensor<4xf32>, tensor<f32>
  return %0 : tensor<4xf32>
}

// -----

// The unscaling of an fp16 step, x * broadcast(1/S), folds into the update's
// grad_scale, and then the widening convert: the update reads the f16
// gradient.
// CHECK-LABEL: func.func @adamw_unscales
// CHECK-SAME: %[[G:arg1]]: tensor<4xf16>
// CHECK-SAME: %[[S:arg6]]: tensor<f32>
// CHECK-NOT: tg.mul
// CHECK: tg.adamw %arg0, %[[G]], %arg2, %arg3, %arg4, %arg5 grad_scale %[[S]] {{.*}} : tensor<4xf32> grad tensor<4xf16>, tensor<f32>, tensor<i64> grad_scale tensor<f32>
func.func @adamw_unscales(%p: tensor<4xf32>, %g: tensor<4xf16>, %m: tensor<4xf32>, %v: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<i64>, %inv: tensor<f32>) -> tensor<4xf32> {
  %g32 = tg.convert %g : tensor<4xf16> -> tensor<4xf32>
  %b = tg.broadcast_in_dim %inv dims = [] : tensor<f32> -> tensor<4xf32>
  %u = tg.mul %b, %g32 : tensor<4xf32>
  %0:3 = tg.adamw %p, %u, %m, %v, %lr, %t betas = (0.9, 0.999) epsilon = 1.0e-8 weight_decay = 0.0 : tensor<4xf32>, tensor<f32>, tensor<i64>
  return %0#0 : tensor<4xf32>
}

// -----

// Only one scale: a second product stays (two scales multiplied first would
// round differently); a product by a non-scalar stays too.
// CHECK-LABEL: func.func @one_scale
// CHECK: %[[U:.*]] = tg.mul
// CHECK: tg.sgd %arg0, %[[U]], %arg2 grad_scale %arg3
// CHECK: %[[W:.*]] = tg.mul %arg1, %arg1
// CHECK: tg.sgd %arg0, %[[W]], %arg2 momentum
func.func @one_scale(%p: tensor<4xf32>, %g: tensor<4xf32>, %lr: tensor<f32>, %s: tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %b = tg.broadcast_in_dim %s dims = [] : tensor<f32> -> tensor<4xf32>
  %u = tg.mul %g, %b : tensor<4xf32>
  %0 = tg.sgd %p, %u, %lr grad_scale %s momentum = 0.0 weight_decay = 0.0 : tensor<4xf32>, tensor<f32> grad_scale tensor<f32>
  %w = tg.mul %g, %g : tensor<4xf32>
  %1 = tg.sgd %p, %w, %lr momentum = 0.0 weight_decay = 0.0 : tensor<4xf32>, tensor<f32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// A product rounded to bf16 stays: the update would compute it in f32.
// CHECK-LABEL: func.func @bf16_product_stays
// CHECK: %[[U:.*]] = tg.mul
// CHECK: tg.adamw %arg0, %[[U]], {{.*}} : tensor<4xbf16>, tensor<f32>, tensor<i64>
func.func @bf16_product_stays(%p: tensor<4xbf16>, %g: tensor<4xbf16>, %m: tensor<4xbf16>, %v: tensor<4xbf16>, %lr: tensor<f32>, %t: tensor<i64>, %s: tensor<bf16>) -> tensor<4xbf16> {
  %b = tg.broadcast_in_dim %s dims = [] : tensor<bf16> -> tensor<4xbf16>
  %u = tg.mul %g, %b : tensor<4xbf16>
  %0:3 = tg.adamw %p, %u, %m, %v, %lr, %t betas = (0.9, 0.999) epsilon = 1.0e-8 weight_decay = 0.0 : tensor<4xbf16>, tensor<f32>, tensor<i64>
  return %0#0 : tensor<4xbf16>
}
