// RUN: tgc-opt %s --split-input-file | tgc-opt --split-input-file | FileCheck %s
// RUN: tgc-opt %s --split-input-file --mlir-print-op-generic | tgc-opt --split-input-file | FileCheck %s

// A training step: every role, tg.aliases on the new param and state, names reused across sides.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME:    (%[[W:[^:]+]]: tensor<16x4xf32> {tg.name = "fc.weight", tg.role = "param"},
// CHECK-SAME:    %[[M:[^:]+]]: tensor<16x4xf32> {tg.name = "fc.weight.momentum", tg.role = "state"},
// CHECK-SAME:    %[[X:[^:]+]]: tensor<8x16xf32> {tg.name = "x", tg.role = "input"},
// CHECK-SAME:    %[[Y:[^:]+]]: tensor<8xi64> {tg.name = "y", tg.role = "label"},
// CHECK-SAME:    %[[LR:[^:]+]]: tensor<f32> {tg.name = "lr", tg.role = "hyper"})
// CHECK-SAME:    -> (tensor<f32> {tg.name = "loss", tg.role = "loss"},
// CHECK-SAME:    tensor<16x4xf32> {tg.name = "fc.weight.grad", tg.role = "grad"},
// CHECK-SAME:    tensor<16x4xf32> {tg.aliases = 0 : i64, tg.name = "fc.weight", tg.role = "param"},
// CHECK-SAME:    tensor<16x4xf32> {tg.aliases = 1 : i64, tg.name = "fc.weight.momentum", tg.role = "state"},
// CHECK-SAME:    tensor<8x4xf32> {tg.name = "logits", tg.role = "output"})
// CHECK:         %[[LOGITS:.+]] = tg.matmul %[[X]], %[[W]]
// CHECK:         %[[LOSS:.+]], %{{.+}} = tg.cross_entropy mean %[[LOGITS]], %[[Y]]
// CHECK:         %[[G:.+]] = tg.matmul %[[X]], %{{.+}} transpose_a
// CHECK:         %[[M2:.+]] = tg.add %[[M]], %[[G]]
// CHECK:         %[[LRB:.+]] = tg.broadcast_in_dim %[[LR]]
// CHECK:         %[[STEP:.+]] = tg.mul %[[LRB]], %[[M2]]
// CHECK:         %[[W2:.+]] = tg.sub %[[W]], %[[STEP]]
// CHECK:         return %[[LOSS]], %[[G]], %[[W2]], %[[M2]], %[[LOGITS]]
func.func @train_step(
    %w: tensor<16x4xf32> {tg.role = "param", tg.name = "fc.weight"},
    %m: tensor<16x4xf32> {tg.role = "state", tg.name = "fc.weight.momentum"},
    %x: tensor<8x16xf32> {tg.role = "input", tg.name = "x"},
    %y: tensor<8xi64> {tg.role = "label", tg.name = "y"},
    %lr: tensor<f32> {tg.role = "hyper", tg.name = "lr"})
    -> (tensor<f32> {tg.role = "loss", tg.name = "loss"},
        tensor<16x4xf32> {tg.role = "grad", tg.name = "fc.weight.grad"},
        tensor<16x4xf32> {tg.role = "param", tg.name = "fc.weight", tg.aliases = 0},
        tensor<16x4xf32> {tg.role = "state", tg.name = "fc.weight.momentum", tg.aliases = 1},
        tensor<8x4xf32> {tg.role = "output", tg.name = "logits"}) {
  %logits = tg.matmul %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %loss, %lse = tg.cross_entropy mean %logits, %y : (tensor<8x4xf32>, tensor<8xi64>) -> (tensor<f32>, tensor<8xf32>)
  %p = tg.softmax %logits dim = 1 : tensor<8x4xf32>
  %g = tg.matmul %x, %p transpose_a : (tensor<8x16xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
  %m2 = tg.add %m, %g : tensor<16x4xf32>
  %lrb = tg.broadcast_in_dim %lr dims = [] : tensor<f32> -> tensor<16x4xf32>
  %step = tg.mul %lrb, %m2 : tensor<16x4xf32>
  %w2 = tg.sub %w, %step : tensor<16x4xf32>
  return %loss, %g, %w2, %m2, %logits : tensor<f32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<8x4xf32>
}

// -----

// A declaration without a body keeps its argument and result attributes.
// CHECK-LABEL: func.func private @sgd_update
// CHECK-SAME:    (tensor<4xf32> {tg.name = "w", tg.role = "param"}, tensor<4xf32> {tg.role = "input"}, tensor<f32> {tg.role = "hyper"})
// CHECK-SAME:    -> (tensor<4xf32> {tg.aliases = 0 : i64, tg.role = "param"})
func.func private @sgd_update(tensor<4xf32> {tg.role = "param", tg.name = "w"},
                              tensor<4xf32> {tg.role = "input"},
                              tensor<f32> {tg.role = "hyper"})
    -> (tensor<4xf32> {tg.role = "param", tg.aliases = 0})

// -----

// Model state the step updates (a BatchNorm's running mean): a buffer.
// CHECK-LABEL: func.func private @running_mean
// CHECK-SAME:    (tensor<4xf32> {tg.buffer, tg.init = "zeros", tg.name = "bn.running_mean", tg.role = "state"})
// CHECK-SAME:    -> (tensor<4xf32> {tg.aliases = 0 : i64, tg.name = "bn.running_mean", tg.role = "state"})
func.func private @running_mean(tensor<4xf32> {tg.role = "state", tg.name = "bn.running_mean", tg.buffer, tg.init = "zeros"})
    -> (tensor<4xf32> {tg.role = "state", tg.name = "bn.running_mean", tg.aliases = 0})

// -----

// The attributes are optional: a bf16 loss, and arguments and results without any.
// CHECK-LABEL: func.func @partial_attrs
// CHECK-SAME:    (%[[X:[^:]+]]: tensor<bf16>, %{{[^:]+}}: tensor<bf16> {tg.role = "input"})
// CHECK-SAME:    -> (tensor<bf16> {tg.role = "loss"}, tensor<bf16>)
// CHECK:         return %[[X]], %[[X]] : tensor<bf16>, tensor<bf16>
func.func @partial_attrs(%x: tensor<bf16>, %unused: tensor<bf16> {tg.role = "input"}) -> (tensor<bf16> {tg.role = "loss"}, tensor<bf16>) {
  return %x, %x : tensor<bf16>, tensor<bf16>
}

// -----

// A compiled step's module names its device and the pipeline that made it.
// CHECK: module attributes {tg.device = {base = "H100-SXM"}, tg.pipeline = "builtin.module(cse)"}
module attributes {tg.device = {base = "H100-SXM"}, tg.pipeline = "builtin.module(cse)"} {
}

// -----

// A pipelined function (docs/pipeline.md): its pipeline, and each op's
// stage, micro-batch and direction.
// CHECK-LABEL: func.func @pipelined
// CHECK-SAME:    attributes {tg.pipeline_stages = {axis = "pp", micro_batches = 2 : i64, schedule = "1f1b", stages = 2 : i64, virtual_stages = 1 : i64}}
// CHECK:         tg.exp %{{.*}} {tg.backward, tg.micro_batch = 1 : i64, tg.stage = 1 : i64}
func.func @pipelined(%x: tensor<4xf32>) -> tensor<4xf32> attributes {tg.pipeline_stages = {axis = "pp", stages = 2 : i64, virtual_stages = 1 : i64, micro_batches = 2 : i64, schedule = "1f1b"}} {
  %0 = tg.exp %x {tg.stage = 1 : i64, tg.micro_batch = 1 : i64, tg.backward} : tensor<4xf32>
  return %0 : tensor<4xf32>
}
