// RUN: tgc-opt %s --split-input-file | tgc-opt --split-input-file | FileCheck %s
// RUN: tgc-opt %s --split-input-file --mlir-print-op-generic | tgc-opt --split-input-file | FileCheck %s

// Plain SGD, and SGD with a (Nesterov) momentum buffer.
// CHECK-LABEL: func.func @sgd
// CHECK: tg.sgd %arg0, %arg1, %arg2 momentum = 0.000000e+00 weight_decay = 0.000000e+00 : tensor<4xf32>, tensor<f32>
// CHECK: tg.sgd %arg0, %arg1, %arg2, %arg3 momentum = 9.000000e-01 weight_decay = 1.000000e-04 nesterov : tensor<4xf32>, tensor<f32>, tensor<4xf32>
func.func @sgd(%p: tensor<4xf32>, %g: tensor<4xf32>, %lr: tensor<f32>, %buf: tensor<4xf32>) {
  %0 = tg.sgd %p, %g, %lr momentum = 0.0 weight_decay = 0.0 : tensor<4xf32>, tensor<f32>
  %1, %2 = tg.sgd %p, %g, %lr, %buf momentum = 0.9 weight_decay = 1.0e-4 nesterov : tensor<4xf32>, tensor<f32>, tensor<4xf32>
  return
}

// -----

// AdamW and LAMB update a parameter and its two moments.
// CHECK-LABEL: func.func @adam
// CHECK: tg.adamw %arg0, %arg1, %arg2, %arg3, %arg4, %arg5 betas = (9.000000e-01, 0.99899999999999999) epsilon = 1.000000e-08 weight_decay = 0.000000e+00 : tensor<2x3xf32>, tensor<f32>, tensor<i64>
// CHECK: tg.lamb %arg0, %arg1, %arg2, %arg3, %arg4, %arg5 betas = (9.000000e-01, 0.99899999999999999) epsilon = 9.9999999999999995E-7 weight_decay = 1.000000e-02 : tensor<2x3xf32>, tensor<f32>, tensor<i64>
func.func @adam(%p: tensor<2x3xf32>, %g: tensor<2x3xf32>, %m: tensor<2x3xf32>, %v: tensor<2x3xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  %0:3 = tg.adamw %p, %g, %m, %v, %lr, %t betas = (0.9, 0.999) epsilon = 1.0e-8 weight_decay = 0.0 : tensor<2x3xf32>, tensor<f32>, tensor<i64>
  %1:3 = tg.lamb %p, %g, %m, %v, %lr, %t betas = (0.9, 0.999) epsilon = 1.0e-6 weight_decay = 0.01 : tensor<2x3xf32>, tensor<f32>, tensor<i64>
  return
}

// -----

// Adafactor factors the second moment of a matrix (row and column states),
// over the last two dimensions of a batch of matrices, and keeps one
// unfactored state for a vector or a scalar.
// CHECK-LABEL: func.func @adafactor
// CHECK: tg.adafactor %arg0, %arg1, [%arg2, %arg3], %arg4, %arg5 decay_rate = -8.000000e-01 epsilon1 = 1.000000e-30 clip_threshold = 1.000000e+00 weight_decay = 0.000000e+00 : tensor<2x3xf32>, [tensor<2xf32>, tensor<3xf32>], tensor<f32>, tensor<i64>
// CHECK: tg.adafactor %arg6, %arg6, [%arg7, %arg8], %arg4, %arg5 decay_rate = -5.000000e-01 epsilon1 = 1.000000e-03 clip_threshold = 2.000000e+00 weight_decay = 1.000000e-02 : tensor<4x2x3xf64>, [tensor<4x2xf64>, tensor<4x3xf64>], tensor<f32>, tensor<i64>
// CHECK: tg.adafactor %arg9, %arg9, [%arg10], %arg4, %arg5 decay_rate = -8.000000e-01 epsilon1 = 1.000000e-30 clip_threshold = 1.000000e+00 weight_decay = 0.000000e+00 : tensor<5xf32>, [tensor<5xf32>], tensor<f32>, tensor<i64>
// CHECK: tg.adafactor %arg11, %arg11, [%arg11], %arg4, %arg5 decay_rate = -8.000000e-01 epsilon1 = 1.000000e-30 clip_threshold = 1.000000e+00 weight_decay = 0.000000e+00 : tensor<bf16>, [tensor<bf16>], tensor<f32>, tensor<i64>
func.func @adafactor(%p: tensor<2x3xf32>, %g: tensor<2x3xf32>, %r: tensor<2xf32>, %c: tensor<3xf32>, %lr: tensor<f32>, %t: tensor<i64>,
                     %p3: tensor<4x2x3xf64>, %r3: tensor<4x2xf64>, %c3: tensor<4x3xf64>,
                     %b: tensor<5xf32>, %v: tensor<5xf32>, %s: tensor<bf16>) {
  %0:3 = tg.adafactor %p, %g, [%r, %c], %lr, %t decay_rate = -0.8 epsilon1 = 1.0e-30 clip_threshold = 1.0 weight_decay = 0.0 : tensor<2x3xf32>, [tensor<2xf32>, tensor<3xf32>], tensor<f32>, tensor<i64>
  %1:3 = tg.adafactor %p3, %p3, [%r3, %c3], %lr, %t decay_rate = -0.5 epsilon1 = 1.0e-3 clip_threshold = 2.0 weight_decay = 0.01 : tensor<4x2x3xf64>, [tensor<4x2xf64>, tensor<4x3xf64>], tensor<f32>, tensor<i64>
  %2:2 = tg.adafactor %b, %b, [%v], %lr, %t decay_rate = -0.8 epsilon1 = 1.0e-30 clip_threshold = 1.0 weight_decay = 0.0 : tensor<5xf32>, [tensor<5xf32>], tensor<f32>, tensor<i64>
  %3:2 = tg.adafactor %s, %s, [%s], %lr, %t decay_rate = -0.8 epsilon1 = 1.0e-30 clip_threshold = 1.0 weight_decay = 0.0 : tensor<bf16>, [tensor<bf16>], tensor<f32>, tensor<i64>
  return
}

// -----

// The attributes default to fairseq's values.
// CHECK-LABEL: func.func @adafactor_defaults
// CHECK: tg.adafactor %arg0, %arg0, [%arg0], %arg1, %arg2 decay_rate = -8.000000e-01 epsilon1 = 1.000000e-30 clip_threshold = 1.000000e+00 weight_decay = 0.000000e+00 : tensor<3xf32>, [tensor<3xf32>], tensor<f32>, tensor<i64>
func.func @adafactor_defaults(%p: tensor<3xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  %0:2 = "tg.adafactor"(%p, %p, %p, %lr, %t) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0>}> : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<f32>, tensor<i64>) -> (tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

// A gradient narrower than its parameter is written after the parameter's
// type: f32 updates of bf16 gradients (mixed precision), f64 of f32.
// CHECK-LABEL: func.func @narrow_grad
// CHECK: tg.sgd %arg0, %arg1, %arg4 momentum = 0.000000e+00 weight_decay = 0.000000e+00 : tensor<2x3xf32> grad tensor<2x3xbf16>, tensor<f32>
// CHECK: tg.adamw %arg0, %arg1, %arg2, %arg3, %arg4, %arg5 betas = (9.000000e-01, 0.99899999999999999) epsilon = 1.000000e-08 weight_decay = 0.000000e+00 : tensor<2x3xf32> grad tensor<2x3xbf16>, tensor<f32>, tensor<i64>
// CHECK: tg.lamb %arg0, %arg1, %arg2, %arg3, %arg4, %arg5 betas = (9.000000e-01, 0.99899999999999999) epsilon = 1.000000e-08 weight_decay = 0.000000e+00 : tensor<2x3xf32> grad tensor<2x3xbf16>, tensor<f32>, tensor<i64>
// CHECK: tg.adafactor %arg6, %arg7, [%arg8], %arg9, %arg5 {{.*}} : tensor<3xf64> grad tensor<3xf32>, [tensor<3xf64>], tensor<f64>, tensor<i64>
func.func @narrow_grad(%p: tensor<2x3xf32>, %g: tensor<2x3xbf16>, %m: tensor<2x3xf32>, %v: tensor<2x3xf32>, %lr: tensor<f32>, %t: tensor<i64>, %q: tensor<3xf64>, %gq: tensor<3xf32>, %s: tensor<3xf64>, %lr64: tensor<f64>) {
  %0 = tg.sgd %p, %g, %lr momentum = 0.0 weight_decay = 0.0 : tensor<2x3xf32> grad tensor<2x3xbf16>, tensor<f32>
  %1:3 = tg.adamw %p, %g, %m, %v, %lr, %t betas = (0.9, 0.999) epsilon = 1.0e-8 weight_decay = 0.0 : tensor<2x3xf32> grad tensor<2x3xbf16>, tensor<f32>, tensor<i64>
  %2:3 = tg.lamb %p, %g, %m, %v, %lr, %t betas = (0.9, 0.999) epsilon = 1.0e-8 weight_decay = 0.0 : tensor<2x3xf32> grad tensor<2x3xbf16>, tensor<f32>, tensor<i64>
  %3:2 = tg.adafactor %q, %gq, [%s], %lr64, %t decay_rate = -0.8 epsilon1 = 1.0e-30 clip_threshold = 1.0 weight_decay = 0.0 : tensor<3xf64> grad tensor<3xf32>, [tensor<3xf64>], tensor<f64>, tensor<i64>
  return
}

// -----

// grad_scale: the update multiplies the (widened) gradient by a scalar, the
// inverse loss scale of an fp16 step.
// CHECK-LABEL: func.func @grad_scale
// CHECK: tg.sgd %arg0, %arg1, %arg4 grad_scale %arg4 momentum = 0.000000e+00 weight_decay = 0.000000e+00 : tensor<2x3xf32> grad tensor<2x3xf16>, tensor<f32> grad_scale tensor<f32>
// CHECK: tg.sgd %arg0, %arg1, %arg4, %arg2 grad_scale %arg4 momentum = 9.000000e-01 {{.*}} : tensor<2x3xf32> grad tensor<2x3xf16>, tensor<f32>, tensor<2x3xf32> grad_scale tensor<f32>
// CHECK: tg.adamw %arg0, %arg1, %arg2, %arg3, %arg4, %arg5 grad_scale %arg4 betas = {{.*}} : tensor<2x3xf32> grad tensor<2x3xf16>, tensor<f32>, tensor<i64> grad_scale tensor<f32>
// CHECK: tg.lamb %arg0, %arg6, %arg2, %arg3, %arg4, %arg5 grad_scale %arg4 betas = {{.*}} : tensor<2x3xf32>, tensor<f32>, tensor<i64> grad_scale tensor<f32>
// CHECK: tg.adafactor %arg0, %arg1, [%arg7, %arg8], %arg4, %arg5 grad_scale %arg4 decay_rate = {{.*}} : tensor<2x3xf32> grad tensor<2x3xf16>, [tensor<2xf32>, tensor<3xf32>], tensor<f32>, tensor<i64> grad_scale tensor<f32>
func.func @grad_scale(%p: tensor<2x3xf32>, %g: tensor<2x3xf16>, %m: tensor<2x3xf32>, %v: tensor<2x3xf32>, %s: tensor<f32>, %t: tensor<i64>, %g32: tensor<2x3xf32>, %r: tensor<2xf32>, %c: tensor<3xf32>) {
  %0 = tg.sgd %p, %g, %s grad_scale %s momentum = 0.0 weight_decay = 0.0 : tensor<2x3xf32> grad tensor<2x3xf16>, tensor<f32> grad_scale tensor<f32>
  %1:2 = tg.sgd %p, %g, %s, %m grad_scale %s momentum = 0.9 weight_decay = 0.0 : tensor<2x3xf32> grad tensor<2x3xf16>, tensor<f32>, tensor<2x3xf32> grad_scale tensor<f32>
  %2:3 = tg.adamw %p, %g, %m, %v, %s, %t grad_scale %s betas = (0.9, 0.999) epsilon = 1.0e-8 weight_decay = 0.0 : tensor<2x3xf32> grad tensor<2x3xf16>, tensor<f32>, tensor<i64> grad_scale tensor<f32>
  %3:3 = tg.lamb %p, %g32, %m, %v, %s, %t grad_scale %s betas = (0.9, 0.999) epsilon = 1.0e-8 weight_decay = 0.0 : tensor<2x3xf32>, tensor<f32>, tensor<i64> grad_scale tensor<f32>
  %4:3 = tg.adafactor %p, %g, [%r, %c], %s, %t grad_scale %s decay_rate = -0.8 epsilon1 = 1.0e-30 clip_threshold = 1.0 weight_decay = 0.0 : tensor<2x3xf32> grad tensor<2x3xf16>, [tensor<2xf32>, tensor<3xf32>], tensor<f32>, tensor<i64> grad_scale tensor<f32>
  return
}
