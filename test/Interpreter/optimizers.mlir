// The optimizer kernels against values computed by hand.
// RUN: tgc run %s --entry sgd --print-values | FileCheck %s --check-prefix=SGD
// RUN: tgc run %s --entry adamw --print-values | FileCheck %s --check-prefix=ADAMW
// RUN: tgc run %s --entry lamb --print-values | FileCheck %s --check-prefix=LAMB
// RUN: tgc run %s --entry adafactor_factored --print-values | FileCheck %s --check-prefix=FACTORED
// RUN: tgc run %s --entry adafactor_unfactored --print-values | FileCheck %s --check-prefix=UNFACTORED
// RUN: not tgc run %s --entry adafactor_step_zero 2>&1 | FileCheck %s --check-prefix=STEP
// RUN: tgc run %s --entry adafactor_zero_gradient --print-values | FileCheck %s --check-prefix=ZEROGRAD

// p = [1, 2], g = [0.5, -1], lr = 0.1, decay 0.1, momentum 0.9, buffer [1, 1]:
// d = g + 0.1 p = [0.6, -0.8]; plain: p - 0.1 d = [0.94, 2.08];
// buffer' = 0.9 * 1 + d = [1.5, 0.1]; p - 0.1 buffer' = [0.85, 1.99];
// nesterov: d + 0.9 buffer' = [1.95, -0.71]; p - 0.1 * that = [0.805, 2.071]
// (the last digits are f32 rounding).
// SGD: 0: tensor<2xf32>
// SGD-NEXT: [0.939999998, 2.07999992]
// SGD: 1: tensor<2xf32>
// SGD-NEXT: [0.850000024, 1.99000001]
// SGD: 2: tensor<2xf32>
// SGD-NEXT: [1.5, 0.0999999642]
// SGD: 3: tensor<2xf32>
// SGD-NEXT: [0.805000007, 2.0710001]
func.func @sgd() -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %p = tg.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %g = tg.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %b = tg.constant dense<1.0> : tensor<2xf32>
  %lr = tg.constant dense<0.1> : tensor<f32>
  %0 = tg.sgd %p, %g, %lr momentum = 0.0 weight_decay = 0.1 : tensor<2xf32>, tensor<f32>
  %1, %2 = tg.sgd %p, %g, %lr, %b momentum = 0.9 weight_decay = 0.1 : tensor<2xf32>, tensor<f32>, tensor<2xf32>
  %3, %4 = tg.sgd %p, %g, %lr, %b momentum = 0.9 weight_decay = 0.1 nesterov : tensor<2xf32>, tensor<f32>, tensor<2xf32>
  return %0, %1, %2, %3 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// The first AdamW step from zero moments moves each weight by lr * sign(g)
// (m_hat = g, v_hat = g^2), minus lr * decay * p: p = [1, -2], g = [0.5, -3],
// lr = 0.01, decay 0.1: [1 - 0.01 - 0.001, -2 + 0.01 + 0.002] (eps 0).
// m' = 0.1 g = [0.05, -0.3]; v' = 0.001 g^2 = [0.00025, 0.009].
// ADAMW: 0: tensor<2xf32>
// ADAMW-NEXT: [0.989000022, -1.98800004]
// ADAMW: 1: tensor<2xf32>
// ADAMW-NEXT: [0.0500000007, -0.300000012]
// ADAMW: 2: tensor<2xf32>
// ADAMW-NEXT: [0.000250000012, 0.00899999961]
func.func @adamw() -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %p = tg.constant dense<[1.0, -2.0]> : tensor<2xf32>
  %g = tg.constant dense<[0.5, -3.0]> : tensor<2xf32>
  %z = tg.constant dense<0.0> : tensor<2xf32>
  %lr = tg.constant dense<0.01> : tensor<f32>
  %t = tg.constant dense<1> : tensor<i64>
  %0:3 = tg.adamw %p, %g, %z, %z, %lr, %t betas = (0.9, 0.999) epsilon = 1.0e-30 weight_decay = 0.1 : tensor<2xf32>, tensor<f32>, tensor<i64>
  return %0#0, %0#1, %0#2 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// LAMB scales the same first-step direction r = sign(g) = [1, -1] (no decay)
// by |p| / |r| = sqrt(5) / sqrt(2): p - 0.01 * 1.5811388 * r.
// LAMB: 0: tensor<2xf32>
// LAMB-NEXT: [0.984188616, -1.98418856]
func.func @lamb() -> tensor<2xf32> {
  %p = tg.constant dense<[1.0, -2.0]> : tensor<2xf32>
  %g = tg.constant dense<[0.5, -3.0]> : tensor<2xf32>
  %z = tg.constant dense<0.0> : tensor<2xf32>
  %lr = tg.constant dense<0.01> : tensor<f32>
  %t = tg.constant dense<1> : tensor<i64>
  %0:3 = tg.lamb %p, %g, %z, %z, %lr, %t betas = (0.9, 0.999) epsilon = 1.0e-30 weight_decay = 0.0 : tensor<2xf32>, tensor<f32>, tensor<i64>
  return %0#0 : tensor<2xf32>
}

// Adafactor on a 2x3 matrix at step 2 with decay_rate = -1, so
// b = 1 - 2^-1 = 0.5; p = [[1, 2, 3], [-1, 0, 1]], g = [[2, 1, -2], [0, 3, 0]],
// R = [1, 5], C = [2, 1, 4], lr = 0.1, weight decay 0.1 (eps1 is negligible).
// g2 = [[4, 1, 4], [0, 9, 0]]: row means [3, 3], column means [2, 5, 2];
// R' = 0.5 R + 0.5 [3, 3] = [2, 4]; C' = 0.5 C + 0.5 [2, 5, 2] = [2, 3, 3];
// V = R' C'^T / mean(R') = [[4/3, 2, 2], [8/3, 4, 4]];
// U = g / sqrt(V) = [[sqrt(3), 1/sqrt(2), -sqrt(2)], [0, 1.5, 0]];
// RMS(U) = sqrt((3 + 0.5 + 2 + 2.25) / 6) = sqrt(7.75 / 6) = 1.1365151 > 1,
// so U' = U / 1.1365151 = [[1.5240015, 0.6221710, -1.2443421], [0, 1.3198240, 0]];
// p - 0.1 (U' + 0.1 p) = [[0.8375999, 1.9177829, 3.0944342],
//                         [-0.99, -0.1319824, 0.99]] (f32 rounding in the
// last digits).
// FACTORED: 0: tensor<2x3xf32>
// FACTORED-NEXT: [0.837599814, 1.9177829, 3.09443426, -0.99000001, -0.131982416, 0.99000001]
// FACTORED: 1: tensor<2xf32>
// FACTORED-NEXT: [2, 4]
// FACTORED: 2: tensor<3xf32>
// FACTORED-NEXT: [2, 3, 3]
func.func @adafactor_factored() -> (tensor<2x3xf32>, tensor<2xf32>, tensor<3xf32>) {
  %p = tg.constant dense<[[1.0, 2.0, 3.0], [-1.0, 0.0, 1.0]]> : tensor<2x3xf32>
  %g = tg.constant dense<[[2.0, 1.0, -2.0], [0.0, 3.0, 0.0]]> : tensor<2x3xf32>
  %r = tg.constant dense<[1.0, 5.0]> : tensor<2xf32>
  %c = tg.constant dense<[2.0, 1.0, 4.0]> : tensor<3xf32>
  %lr = tg.constant dense<0.1> : tensor<f32>
  %t = tg.constant dense<2> : tensor<i64>
  %0:3 = tg.adafactor %p, %g, [%r, %c], %lr, %t decay_rate = -1.0 epsilon1 = 1.0e-30 clip_threshold = 1.0 weight_decay = 0.1 : tensor<2x3xf32>, [tensor<2xf32>, tensor<3xf32>], tensor<f32>, tensor<i64>
  return %0#0, %0#1, %0#2 : tensor<2x3xf32>, tensor<2xf32>, tensor<3xf32>
}

// A vector's second moment is not factored. At step 1, b = 1 - 1^-0.8 = 0:
// the state is ignored, V' = g^2 + eps1 and U = g / |g| = sign(g) (0 where
// g = 0: 0 / sqrt(1e-30)). p = [1, 2, 3, 4], g = [3, -4, 0, 1], lr = 0.01:
// U = [1, -1, 0, 1], RMS(U) = sqrt(3/4) = 0.8660254 < 1, not clipped:
// p - 0.01 U = [0.99, 2.01, 3, 3.99]. With clip_threshold = 0.5,
// U' = U / (0.8660254 / 0.5) = 0.5773503 U: [0.9942265, 2.0057735, 3, 3.9942265].
// UNFACTORED: 0: tensor<4xf32>
// UNFACTORED-NEXT: [0.99000001, 2.00999999, 3, 3.99000001]
// UNFACTORED: 1: tensor<4xf32>
// UNFACTORED-NEXT: [9, 16, 1e-30, 1]
// UNFACTORED: 2: tensor<4xf32>
// UNFACTORED-NEXT: [0.994226515, 2.00577354, 3, 3.99422646]
func.func @adafactor_unfactored() -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %p = tg.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %g = tg.constant dense<[3.0, -4.0, 0.0, 1.0]> : tensor<4xf32>
  %v = tg.constant dense<7.0> : tensor<4xf32>
  %lr = tg.constant dense<0.01> : tensor<f32>
  %t = tg.constant dense<1> : tensor<i64>
  %0:2 = tg.adafactor %p, %g, [%v], %lr, %t decay_rate = -0.8 epsilon1 = 1.0e-30 clip_threshold = 1.0 weight_decay = 0.0 : tensor<4xf32>, [tensor<4xf32>], tensor<f32>, tensor<i64>
  %1:2 = tg.adafactor %p, %g, [%v], %lr, %t decay_rate = -0.8 epsilon1 = 1.0e-30 clip_threshold = 0.5 weight_decay = 0.0 : tensor<4xf32>, [tensor<4xf32>], tensor<f32>, tensor<i64>
  return %0#0, %0#1, %1#0 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// The first step is 1: t^decay_rate is not defined at 0.
// STEP: error: 'tg.adafactor' op step must be at least 1 (the first step is 1), got 0
func.func @adafactor_step_zero() -> tensor<4xf32> {
  %p = tg.constant dense<1.0> : tensor<4xf32>
  %lr = tg.constant dense<0.01> : tensor<f32>
  %t = tg.constant dense<0> : tensor<i64>
  %0:2 = tg.adafactor %p, %p, [%p], %lr, %t decay_rate = -0.8 epsilon1 = 1.0e-30 clip_threshold = 1.0 weight_decay = 0.0 : tensor<4xf32>, [tensor<4xf32>], tensor<f32>, tensor<i64>
  return %0#0 : tensor<4xf32>
}

// A factored parameter whose gradient is zero (a projection that does not
// reach the loss yet): R' and C' are epsilon1 alone (1e-30), and their
// product, 1e-60, is 0 in f32. Taken as two factors,
// U = g / (sqrt(R'/mean(R')) sqrt(C')) = 0 / (1 * 1e-15) = 0, and the
// parameter does not move; computed as g / sqrt(R' C' / mean(R')) it was
// 0/0, NaN from the first step.
// ZEROGRAD: 0: tensor<2x3xf32>
// ZEROGRAD-NEXT: [1, 2, 3, -1, 0, 1]
// ZEROGRAD: 1: tensor<2xf32>
// ZEROGRAD-NEXT: [1e-30, 1e-30]
func.func @adafactor_zero_gradient() -> (tensor<2x3xf32>, tensor<2xf32>, tensor<3xf32>) {
  %p = tg.constant dense<[[1.0, 2.0, 3.0], [-1.0, 0.0, 1.0]]> : tensor<2x3xf32>
  %g = tg.constant dense<0.0> : tensor<2x3xf32>
  %r = tg.constant dense<0.0> : tensor<2xf32>
  %c = tg.constant dense<0.0> : tensor<3xf32>
  %lr = tg.constant dense<0.1> : tensor<f32>
  %t = tg.constant dense<1> : tensor<i64>
  %0:3 = tg.adafactor %p, %g, [%r, %c], %lr, %t decay_rate = -0.8 epsilon1 = 1.0e-30 clip_threshold = 1.0 weight_decay = 0.0 : tensor<2x3xf32>, [tensor<2xf32>, tensor<3xf32>], tensor<f32>, tensor<i64>
  return %0#0, %0#1, %0#2 : tensor<2x3xf32>, tensor<2xf32>, tensor<3xf32>
}
