// Frozen parameters get no gradient and no backward work of their own.
// RUN: tgc-opt %s --tg-autodiff='frozen=fc1.*' | FileCheck %s --check-prefix=FROZEN
// RUN: tgc-opt %s --tg-autodiff='trainable=fc2.*' | FileCheck %s --check-prefix=FROZEN
// RUN: tgc-opt %s --tg-autodiff='trainable=fc*.weight frozen=fc2.*' | FileCheck %s --check-prefix=ONLY
// RUN: not tgc-opt %s --tg-autodiff='frozen=[' 2>&1 | FileCheck %s --check-prefix=GLOB
// Globs that would silently train nothing (issue 21, class 7) are errors.
// RUN: not tgc-opt %s --tg-autodiff='trainable=fc3.*' 2>&1 | FileCheck %s --check-prefix=NOMATCH
// RUN: not tgc-opt %s --tg-autodiff='trainable=fc2.* frozen=fc2.*' 2>&1 | FileCheck %s --check-prefix=CONFLICT
// RUN: not tgc-opt %s --tg-autodiff='trainable=fc1.weight,fc2.weight frozen=fc2.*' 2>&1 | FileCheck %s --check-prefix=CONFLICT
// RUN: tgc-opt %s --tg-autodiff='frozen=fc*' 2>&1 >/dev/null | FileCheck %s --check-prefix=NONE

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
// NOMATCH: error: tg-autodiff: the trainable glob 'fc3.*' (--trainable) matches no parameter
// CONFLICT: error: tg-autodiff: every parameter that the trainable glob '{{fc2.\*|fc2.weight}}' (--trainable) matches is frozen by 'fc2.*' (--freeze), e.g. 'fc2.weight'
// NONE: warning: tg-autodiff: --freeze/--trainable leave no parameter trainable (of 2): the step computes no gradient
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
