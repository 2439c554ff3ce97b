// Frozen parameters get no gradient and no backward work of their own.
// RUN: tgc-opt %s --tg-autodiff='frozen=fc1.*' | FileCheck %s --check-prefix=FROZEN
// RUN: tgc-opt %s --tg-autodiff='trainable=fc2.*' | FileCheck %s --check-prefix=FROZEN
// RUN: tgc-opt %s --tg-autodiff='trainable=fc1.weight,fc2.weight frozen=fc2.*' | FileCheck %s --check-prefix=ONLY
// RUN: not tgc-opt %s --tg-autodiff='frozen=[' 2>&1 | FileCheck %s --check-prefix=GLOB

// With fc1 frozen: two forward matmuls and fc2's weight gradient; neither
// fc1's weight gradient nor the gradient flowing back into fc1.
// FROZEN-LABEL: func.func @mlp
// FROZEN-SAME: -> (tensor<f32> {tg.role = "loss"}, tensor<16x4xf32> {tg.name = "fc2.weight.grad", tg.role = "grad"})
// FROZEN-COUNT-3: tg.matmul
// FROZEN-NOT: tg.matmul
// FROZEN-NOT: tg.relu
// ONLY-LABEL: func.func @mlp
// ONLY-SAME: -> (tensor<f32> {tg.role = "loss"}, tensor<8x16xf32> {tg.name = "fc1.weight.grad", tg.role = "grad"})
// GLOB: error: tg-autodiff: invalid glob '[': invalid glob pattern, unmatched '['
func.func @mlp(%x: tensor<2x8xf32> {tg.role = "input"},
               %w1: tensor<8x16xf32> {tg.role = "param", tg.name = "fc1.weight"},
               %w2: tensor<16x4xf32> {tg.role = "param", tg.name = "fc2.weight"},
               %y: tensor<2xi64> {tg.role = "label"}) -> (tensor<f32> {tg.role = "loss"}) {
  %h = tg.matmul %x, %w1 : (tensor<2x8xf32>, tensor<8x16xf32>) -> tensor<2x16xf32>
  %a = tg.relu %h : tensor<2x16xf32>
  %o = tg.matmul %a, %w2 : (tensor<2x16xf32>, tensor<16x4xf32>) -> tensor<2x4xf32>
  %loss, %lse = tg.cross_entropy mean %o, %y : (tensor<2x4xf32>, tensor<2xi64>) -> (tensor<f32>, tensor<2xf32>)
  return %loss : tensor<f32>
}
