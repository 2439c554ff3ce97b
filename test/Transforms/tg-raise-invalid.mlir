// RUN: not tgc-opt %s --tg-raise='patterns=gelu,softmax' 2>&1 | FileCheck %s --check-prefix=PATTERN
// RUN: not tgc-opt %s --tg-raise='mask-threshold=-100' 2>&1 | FileCheck %s --check-prefix=THRESHOLD
// PATTERN: error: tg-raise: unknown pattern 'softmax'; expected one of cross_entropy, attention, layer_norm, rms_norm, gelu, silu, experts
// THRESHOLD: error: tg-raise: mask-threshold must be at most -1e4, so that a hidden key's probability underflows to 0; got -1.000000e+02

// Raising finds nothing to complain about in a valid function: patterns that
// do not match are left alone without a diagnostic.
// RUN: tgc-opt %s --tg-raise --verify-diagnostics | FileCheck %s
// CHECK-LABEL: func.func @near_miss
// CHECK: tg.erf
func.func @near_miss(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = tg.constant dense<2.0> : tensor<4xf32>
  %0 = tg.div %x, %c : tensor<4xf32>
  %1 = tg.erf %0 : tensor<4xf32>
  %h = tg.constant dense<0.5> : tensor<4xf32>
  %y = tg.mul %1, %h : tensor<4xf32>
  return %y : tensor<4xf32>
}
