// The training pipeline canonicalizes and CSEs the step; with
// canonicalize=false it leaves the step as it is.
// RUN: tgc-opt %s --tg-training-pipeline | FileCheck %s
// RUN: tgc-opt %s --pass-pipeline='builtin.module(tg-training-pipeline)' | FileCheck %s
// RUN: tgc-opt %s --pass-pipeline='builtin.module(tg-training-pipeline{no-canonicalize=1})' | FileCheck %s --check-prefix=NOCANON

// CHECK-LABEL: func.func @step
// CHECK-NEXT: %[[T:.*]] = tg.tanh %arg0
// CHECK-NEXT: return %[[T]], %[[T]]
// NOCANON-LABEL: func.func @step
// NOCANON: tg.transpose
// NOCANON: tg.transpose
// NOCANON: tg.tanh
// NOCANON: tg.tanh
func.func @step(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = tg.transpose %x perm = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  %1 = tg.transpose %0 perm = [1, 0] : tensor<3x2xf32> -> tensor<2x3xf32>
  %2 = tg.tanh %1 : tensor<2x3xf32>
  %3 = tg.tanh %1 : tensor<2x3xf32>
  return %2, %3 : tensor<2x3xf32>, tensor<2x3xf32>
}

