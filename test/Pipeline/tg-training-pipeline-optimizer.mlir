// optimizer=KIND (tgc compile --optimizer KIND) differentiates and updates:
// the step returns the loss and the new parameters, not the gradients.
// RUN: tgc-opt %s --pass-pipeline='builtin.module(tg-training-pipeline{optimizer=sgd lr=0.5 no-memory-plan=1})' | FileCheck %s
// RUN: tgc compile %s --optimizer sgd --lr 0.5 --no-memory-plan | FileCheck %s
// The pipeline ends with tg-schedule and tg-memory-plan (tgc compile's
// default): the update is written in place into the parameter's buffer.
// RUN: tgc compile %s --optimizer sgd --lr 0.5 | FileCheck %s --check-prefix=PLAN
// PLAN: func.func @step(%arg0: tensor<4xf32> {tg.name = "p", tg.offset = [[P:[0-9]+]] : i64
// PLAN: tg.sgd %arg0, {{.*}}tg.offsets = array<i64: [[P]]>
// RUN: not tgc compile %s --optimizer bogus -o %t.out 2>&1 | FileCheck %s --check-prefix=BOGUS
// RUN: test ! -e %t.out
// The optimizer's momentum, weight decay and clipping are pipeline options.
// RUN: tgc-opt %s --pass-pipeline='builtin.module(tg-training-pipeline{optimizer=sgd momentum=0.9 weight-decay=0.1 clip-norm=1.0})' | FileCheck %s --check-prefix=OPTS
// OPTS: tg.sqrt
// OPTS: tg.sgd %arg0, {{.*}} momentum = 9.000000e-01 weight_decay = 1.000000e-01
// A frozen parameter is not updated (frozen=, tgc compile --freeze).
// RUN: tgc-opt %s --pass-pipeline='builtin.module(tg-training-pipeline{optimizer=sgd freeze=p})' | FileCheck %s --check-prefix=FROZEN
// RUN: tgc compile %s --optimizer sgd --freeze p | FileCheck %s --check-prefix=FROZEN
// A --trainable glob that matches no parameter is an error, not a frozen step.
// RUN: not tgc compile %s --optimizer sgd --trainable q 2>&1 | FileCheck %s --check-prefix=NOMATCH
// NOMATCH: error: tg-autodiff: the trainable glob 'q' (--trainable) matches no parameter
// FROZEN-LABEL: func.func @step
// FROZEN-SAME: -> (tensor<f32> {tg.role = "loss"})
// FROZEN-NOT: tg.sgd

// CHECK-LABEL: func.func @step
// CHECK-SAME: {tg.default = 5.000000e-01 : f32, tg.name = "lr", tg.role = "hyper"}
// CHECK-SAME: -> (tensor<f32> {tg.role = "loss"}, tensor<4xf32> {tg.aliases = 0 : i64, tg.name = "p", tg.role = "param"})
// CHECK: tg.sgd %arg0
// BOGUS: for the --optimizer option: Cannot find option named 'bogus'!
func.func @step(%p: tensor<4xf32> {tg.role = "param", tg.name = "p"}) -> (tensor<f32> {tg.role = "loss"}) {
  %e = tg.exp %p : tensor<4xf32>
  %loss = tg.reduce sum %e dims = [0] : tensor<4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}
