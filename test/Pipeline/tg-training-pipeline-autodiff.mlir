// With autodiff=true (tgc compile --autodiff) the pipeline differentiates,
// then canonicalizes: x * 1 is gone from the forward and the backward.
// RUN: tgc-opt %s --pass-pipeline='builtin.module(tg-training-pipeline{autodiff=true})' | FileCheck %s
// RUN: tgc compile %s --autodiff | FileCheck %s
// RUN: tgc compile %s | FileCheck %s --check-prefix=FORWARD

// CHECK-LABEL: func.func @step
// CHECK-SAME: -> (tensor<f32> {tg.role = "loss"}, tensor<4xf32> {tg.name = "p.grad", tg.role = "grad"})
// CHECK-NOT: tg.mul
// CHECK: %[[E:.*]] = tg.exp %arg0
// CHECK: return %{{.*}}, %[[E]]
// FORWARD-LABEL: func.func @step
// FORWARD-SAME: -> (tensor<f32> {tg.role = "loss"})
func.func @step(%p: tensor<4xf32> {tg.role = "param", tg.name = "p"}) -> (tensor<f32> {tg.role = "loss"}) {
  %one = tg.constant dense<1.0> : tensor<4xf32>
  %x = tg.mul %p, %one : tensor<4xf32>
  %e = tg.exp %x : tensor<4xf32>
  %loss = tg.reduce sum %e dims = [0] : tensor<4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}
