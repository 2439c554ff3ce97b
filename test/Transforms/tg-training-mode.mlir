// RUN: tgc-opt %s --split-input-file --tg-training-mode | FileCheck %s
// RUN: tgc-opt %s --split-input-file --tg-evaluation | FileCheck %s --check-prefix=EVAL

// A training-mode BatchNormalization's statistics as the importer builds
// them: the batch's in training, the running ones in evaluation.
// tg-training-mode keeps the batch's and erases the running statistic's
// reshape, read by nothing else; the running statistic's update stays.
// CHECK-LABEL: func.func @batch_norm
// CHECK-NOT: tg.mode_select
// CHECK-NOT: tg.reshape %arg1
// CHECK: %[[BATCH:.*]] = tg.reduce mean %arg0 dims = [0]
// CHECK: %[[MEAN:.*]] = tg.reshape %[[BATCH]]
// CHECK: %[[SPREAD:.*]] = tg.broadcast_in_dim %[[MEAN]]
// CHECK: tg.sub %arg0, %[[SPREAD]]
// CHECK: tg.mul %[[BATCH]]
// EVAL-LABEL: func.func @batch_norm
// EVAL-SAME: -> (tensor<f32> {tg.name = "loss", tg.role = "loss"})
// EVAL-NOT: tg.mode_select
// EVAL-NOT: tg.reduce mean
// EVAL: %[[STAT:.*]] = tg.reshape %arg1 : tensor<4xf32> -> tensor<1x4xf32>
// EVAL: %[[SPREAD:.*]] = tg.broadcast_in_dim %[[STAT]]
// EVAL: tg.sub %arg0, %[[SPREAD]]
// EVAL-NOT: tg.mul
func.func @batch_norm(%x: tensor<8x4xf32> {tg.role = "input", tg.name = "x"},
                      %running: tensor<4xf32> {tg.role = "state", tg.name = "bn.running_mean", tg.buffer})
    -> (tensor<f32> {tg.role = "loss", tg.name = "loss"},
        tensor<4xf32> {tg.role = "state", tg.name = "bn.running_mean", tg.aliases = 1}) {
  %batch = tg.reduce mean %x dims = [0] : tensor<8x4xf32> -> tensor<4xf32>
  %mean = tg.reshape %batch : tensor<4xf32> -> tensor<1x4xf32>
  %r = tg.reshape %running : tensor<4xf32> -> tensor<1x4xf32>
  %m = tg.mode_select training %mean evaluation %r : tensor<1x4xf32>
  %spread = tg.broadcast_in_dim %m dims = [0, 1] : tensor<1x4xf32> -> tensor<8x4xf32>
  %centered = tg.sub %x, %spread : tensor<8x4xf32>
  %loss = tg.reduce sum %centered dims = [0, 1] : tensor<8x4xf32> -> tensor<f32>
  %c = tg.constant dense<0.9> : tensor<4xf32>
  %next = tg.mul %batch, %c : tensor<4xf32>
  return %loss, %next : tensor<f32>, tensor<4xf32>
}

// -----

// The value not taken stays where something else reads it; a chain of ops
// read by the other value alone goes as a whole.
// CHECK-LABEL: func.func @shared
// CHECK-NOT: tg.mode_select
// CHECK-NOT: tg.exp
// CHECK: %[[N:.*]] = tg.neg %arg1
// CHECK: %[[S:.*]] = tg.add %arg0, %arg1
// CHECK: %[[L:.*]] = tg.reduce sum %[[S]]
// CHECK: return %[[L]], %[[N]]
// EVAL-LABEL: func.func @shared
// EVAL: tg.exp
// EVAL: %[[N:.*]] = tg.neg
// EVAL: %[[S:.*]] = tg.add %[[N]], %arg1
// EVAL: %[[L:.*]] = tg.reduce sum %[[S]]
// EVAL: return %[[L]] : tensor<f32>
func.func @shared(%a: tensor<4xf32> {tg.role = "input"}, %b: tensor<4xf32> {tg.role = "input"})
    -> (tensor<f32> {tg.role = "loss"}, tensor<4xf32> {tg.role = "output"}) {
  %e = tg.exp %b : tensor<4xf32>
  %n = tg.neg %e : tensor<4xf32>
  %u = tg.neg %b : tensor<4xf32>
  %m = tg.mode_select training %a evaluation %n : tensor<4xf32>
  %s = tg.add %m, %b : tensor<4xf32>
  %l = tg.reduce sum %s dims = [0] : tensor<4xf32> -> tensor<f32>
  return %l, %u : tensor<f32>, tensor<4xf32>
}
