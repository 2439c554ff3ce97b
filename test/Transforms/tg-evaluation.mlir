// RUN: tgc-opt %s --split-input-file --tg-evaluation | FileCheck %s
// RUN: tgc-opt %s --split-input-file --tg-evaluation=keep-outputs=true | FileCheck %s --check-prefix=KEEP

// Dropout becomes the identity, and the function returns its loss alone:
// the running statistic's new value goes, with the ops only it reads.
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[X:arg0]]: tensor<4x8xf32> {tg.name = "x", tg.role = "input"}
// CHECK-SAME: %arg2: tensor<8xf32> {tg.buffer, tg.name = "bn.running_mean", tg.role = "state"}
// CHECK-SAME: -> (tensor<f32> {tg.name = "loss", tg.role = "loss"})
// CHECK-NOT: tg.dropout
// CHECK: %[[H:.*]] = tg.relu %[[X]]
// CHECK: %[[LOSS:.*]] = tg.reduce sum %[[H]]
// CHECK-NOT: tg.mul
// CHECK: return %[[LOSS]] : tensor<f32>
// keep-outputs (an inference): the loss and the output stay, without
// dropout; the running statistic's new value still goes.
// KEEP-LABEL: func.func @forward
// KEEP-SAME: -> (tensor<f32> {tg.name = "loss", tg.role = "loss"}, tensor<4x8xf32> {tg.name = "h", tg.role = "output"})
// KEEP-NOT: tg.dropout
// KEEP: %[[H:.*]] = tg.relu %arg0
// KEEP: %[[LOSS:.*]] = tg.reduce sum %[[H]]
// KEEP-NOT: tg.mul
// KEEP: return %[[LOSS]], %[[H]] : tensor<f32>, tensor<4x8xf32>
// KEEP-LABEL: func.func @attention
func.func @forward(%x: tensor<4x8xf32> {tg.role = "input", tg.name = "x"},
                   %seed: tensor<i64> {tg.role = "hyper", tg.name = "dropout_seed"},
                   %mean: tensor<8xf32> {tg.role = "state", tg.name = "bn.running_mean", tg.buffer})
    -> (tensor<8xf32> {tg.role = "state", tg.name = "bn.running_mean", tg.aliases = 2},
        tensor<f32> {tg.role = "loss", tg.name = "loss"},
        tensor<4x8xf32> {tg.role = "output", tg.name = "h"}) {
  %h = tg.relu %x : tensor<4x8xf32>
  %d = tg.dropout %h, %seed rate = 1.000000e-01 stream = 0 : tensor<4x8xf32>, tensor<i64>
  %loss = tg.reduce sum %d dims = [0, 1] : tensor<4x8xf32> -> tensor<f32>
  %c = tg.constant dense<0.9> : tensor<8xf32>
  %new = tg.mul %mean, %c : tensor<8xf32>
  return %new, %loss, %d : tensor<8xf32>, tensor<f32>, tensor<4x8xf32>
}

// -----

// Attention keeps its computation and loses its dropout.
// CHECK-LABEL: func.func @attention
// CHECK: tg.attention %{{.*}}, %{{.*}}, %{{.*}} causal scale = 2.500000e-01 :
// CHECK-NOT: dropout
// CHECK: return
func.func @attention(%q: tensor<1x2x4x16xf32> {tg.role = "input", tg.name = "q"},
                     %seed: tensor<i64> {tg.role = "hyper", tg.name = "dropout_seed"})
    -> (tensor<f32> {tg.role = "loss", tg.name = "loss"}) {
  %o, %lse = tg.attention %q, %q, %q causal scale = 2.500000e-01 dropout = 1.000000e-01 seed %seed stream = 1 : (tensor<1x2x4x16xf32>, tensor<1x2x4x16xf32>, tensor<1x2x4x16xf32>, tensor<i64>) -> (tensor<1x2x4x16xf32>, tensor<1x2x4xf32>)
  %loss = tg.reduce sum %o dims = [0, 1, 2, 3] : tensor<1x2x4x16xf32> -> tensor<f32>
  return %loss : tensor<f32>
}
