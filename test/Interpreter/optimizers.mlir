// The optimizer kernels against values computed by hand.
// RUN: tgc run %s --entry sgd --print-values | FileCheck %s --check-prefix=SGD
// RUN: tgc run %s --entry adamw --print-values | FileCheck %s --check-prefix=ADAMW
// RUN: tgc run %s --entry lamb --print-values | FileCheck %s --check-prefix=LAMB

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
