// RUN: tgc-opt %s --split-input-file --tg-microbatch=micro-batches=2 | FileCheck %s

// The batch arguments double; the body runs on each half; loss and gradient
// are the means.
// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[X:.*]]: tensor<4x3xf32> {tg.role = "input"}, %[[W:.*]]: tensor<3xf32> {tg.name = "w", tg.role = "param"})
// CHECK: %[[X0:.*]] = tg.slice %[[X]] [0:2, 0:3]
// CHECK: %[[L0:.*]] = tg.reduce sum
// CHECK: %[[X1:.*]] = tg.slice %[[X]] [2:4, 0:3]
// CHECK: %[[L1:.*]] = tg.reduce sum
// CHECK: %[[LS:.*]] = tg.add %[[L0]], %[[L1]]
// CHECK: %[[GS:.*]] = tg.add
// CHECK: %[[HALF:.*]] = tg.constant dense<5.000000e-01> : tensor<f32>
// CHECK: %[[LOSS:.*]] = tg.mul %[[LS]], %[[HALF]]
// CHECK: %[[GHALF:.*]] = tg.constant dense<5.000000e-01> : tensor<3xf32>
// CHECK: %[[G:.*]] = tg.mul %[[GS]], %[[GHALF]]
// CHECK: return %[[LOSS]], %[[G]]
func.func @step(%x: tensor<2x3xf32> {tg.role = "input"}, %w: tensor<3xf32> {tg.role = "param", tg.name = "w"})
    -> (tensor<f32> {tg.role = "loss"}, tensor<3xf32> {tg.role = "grad", tg.name = "w.grad"}) {
  %b = tg.broadcast_in_dim %w dims = [1] : tensor<3xf32> -> tensor<2x3xf32>
  %p = tg.mul %x, %b : tensor<2x3xf32>
  %loss = tg.reduce sum %p dims = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  %g = tg.reduce sum %x dims = [0] : tensor<2x3xf32> -> tensor<3xf32>
  return %loss, %g : tensor<f32>, tensor<3xf32>
}

// -----

// A function that is not a differentiated step is left alone.
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%{{.*}}: tensor<2x3xf32> {tg.role = "input"})
func.func @forward(%x: tensor<2x3xf32> {tg.role = "input"}) -> (tensor<f32> {tg.role = "loss"}) {
  %loss = tg.reduce sum %x dims = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Random numbers read nothing. Noise whose first dimension is the
// batch's (here scaled, then added to the batch's values): each micro-batch
// draws its part of the whole batch's numbers (the second offset by the
// first's 6 elements). Noise on a weight is drawn once per step, as for the
// whole batch: the same numbers in every micro-batch.
// CHECK-LABEL: func.func @random
// CHECK: tg.random normal %{{.*}} stream = 0 :
// CHECK: tg.random uniform %{{.*}} stream = 1 :
// CHECK: %[[SIX:.*]] = tg.constant dense<6> : tensor<i64>
// CHECK-NEXT: tg.random normal %{{.*}} offset %[[SIX]] stream = 0 :
// CHECK: tg.random uniform %arg{{[0-9]+}} stream = 1 :
func.func @random(%x: tensor<2x3xf32> {tg.role = "input"}, %w: tensor<3xf32> {tg.role = "param", tg.name = "w"},
                  %seed: tensor<i64> {tg.role = "hyper"})
    -> (tensor<f32> {tg.role = "loss"}, tensor<3xf32> {tg.role = "grad", tg.name = "w.grad"}) {
  %n = tg.random normal %seed stream = 0 : tensor<i64> -> tensor<2x3xf32>
  %half = tg.constant dense<5.000000e-01> : tensor<2x3xf32>
  %s = tg.mul %n, %half : tensor<2x3xf32>
  %y = tg.add %x, %s : tensor<2x3xf32>
  %u = tg.random uniform %seed stream = 1 : tensor<i64> -> tensor<3xf32>
  %wn = tg.add %w, %u : tensor<3xf32>
  %b = tg.broadcast_in_dim %wn dims = [1] : tensor<3xf32> -> tensor<2x3xf32>
  %p = tg.mul %y, %b : tensor<2x3xf32>
  %loss = tg.reduce sum %p dims = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  %g = tg.reduce sum %y dims = [0] : tensor<2x3xf32> -> tensor<3xf32>
  return %loss, %g : tensor<f32>, tensor<3xf32>
}

// -----

// A forward output whose first dimension is the batch's (logits): the
// micro-batches' values one after the other, the whole batch's.
// CHECK-LABEL: func.func @logits
// CHECK-SAME: -> (tensor<f32> {tg.role = "loss"}, tensor<3xf32> {tg.name = "w.grad", tg.role = "grad"}, tensor<4x3xf32> {tg.name = "logits"})
// CHECK: %[[L0:.*]] = tg.mul %{{.*}}, %{{.*}} : tensor<2x3xf32>
// CHECK: %[[L1:.*]] = tg.mul %{{.*}}, %{{.*}} : tensor<2x3xf32>
// CHECK: %[[ALL:.*]] = tg.concat %[[L0]], %[[L1]] dim = 0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
// CHECK: return %{{.*}}, %{{.*}}, %[[ALL]]
func.func @logits(%x: tensor<2x3xf32> {tg.role = "input"}, %w: tensor<3xf32> {tg.role = "param", tg.name = "w"})
    -> (tensor<f32> {tg.role = "loss"}, tensor<3xf32> {tg.role = "grad", tg.name = "w.grad"}, tensor<2x3xf32> {tg.name = "logits"}) {
  %b = tg.broadcast_in_dim %w dims = [1] : tensor<3xf32> -> tensor<2x3xf32>
  %p = tg.mul %x, %b : tensor<2x3xf32>
  %loss = tg.reduce sum %p dims = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  %g = tg.reduce sum %x dims = [0] : tensor<2x3xf32> -> tensor<3xf32>
  return %loss, %g, %p : tensor<f32>, tensor<3xf32>, tensor<2x3xf32>
}

// -----

// State the step updates (a running mean: a `state` result aliasing a
// `state` argument) is threaded: the second micro-batch updates the value
// the first wrote, and the step returns the second's, as two forward calls
// move PyTorch's running statistics.
// CHECK-LABEL: func.func @running_mean
// CHECK-SAME: (%[[X:.*]]: tensor<4x3xf32> {tg.role = "input"}, %{{.*}}: tensor<3xf32> {tg.name = "w", tg.role = "param"}, %[[R:.*]]: tensor<3xf32> {tg.buffer, tg.name = "running_mean", tg.role = "state"})
// CHECK: %[[M0:.*]] = tg.reduce mean %{{.*}} dims = [0]
// CHECK: %[[R0:.*]] = tg.add %[[R]], %[[M0]]
// CHECK: %[[M1:.*]] = tg.reduce mean %{{.*}} dims = [0]
// CHECK: %[[R1:.*]] = tg.add %[[R0]], %[[M1]]
// CHECK: return %{{.*}}, %{{.*}}, %[[R1]] :
func.func @running_mean(%x: tensor<2x3xf32> {tg.role = "input"}, %w: tensor<3xf32> {tg.role = "param", tg.name = "w"},
                        %running: tensor<3xf32> {tg.role = "state", tg.buffer, tg.name = "running_mean"})
    -> (tensor<f32> {tg.role = "loss"}, tensor<3xf32> {tg.role = "grad", tg.name = "w.grad"},
        tensor<3xf32> {tg.role = "state", tg.name = "running_mean", tg.aliases = 2 : i64}) {
  %b = tg.broadcast_in_dim %w dims = [1] : tensor<3xf32> -> tensor<2x3xf32>
  %p = tg.mul %x, %b : tensor<2x3xf32>
  %loss = tg.reduce sum %p dims = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  %g = tg.reduce sum %x dims = [0] : tensor<2x3xf32> -> tensor<3xf32>
  %m = tg.reduce mean %x dims = [0] : tensor<2x3xf32> -> tensor<3xf32>
  %next = tg.add %running, %m : tensor<3xf32>
  return %loss, %g, %next : tensor<f32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// In a pipeline too, where one stage reads and updates it: its second
// micro-batch's update reads the first's, both on stage 1.
// CHECK-LABEL: func.func @pipelined_running_mean
// CHECK-SAME: %[[R:arg2]]: tensor<3xf32> {tg.buffer, tg.name = "running_mean", tg.role = "state"}
// CHECK: %[[R0:.*]] = tg.add %[[R]], %{{.*}} {tg.micro_batch = 0 : i64, tg.stage = 1 : i64}
// CHECK: %[[R1:.*]] = tg.add %[[R0]], %{{.*}} {tg.micro_batch = 1 : i64, tg.stage = 1 : i64}
// CHECK: return %{{.*}}, %{{.*}}, %[[R1]] :
func.func @pipelined_running_mean(%x: tensor<2x3xf32> {tg.role = "input"}, %w: tensor<3xf32> {tg.role = "param", tg.name = "w"},
                                  %running: tensor<3xf32> {tg.role = "state", tg.buffer, tg.name = "running_mean"})
    -> (tensor<f32> {tg.role = "loss"}, tensor<3xf32> {tg.role = "grad", tg.name = "w.grad"},
        tensor<3xf32> {tg.role = "state", tg.name = "running_mean", tg.aliases = 2 : i64})
    attributes {tg.pipeline_stages = {axis = "pp", stages = 2 : i64, virtual_stages = 1 : i64, micro_batches = 1 : i64, schedule = "1f1b"}} {
  %h = tg.neg %x {tg.stage = 0 : i64} : tensor<2x3xf32>
  %loss = tg.reduce sum %h dims = [0, 1] {tg.stage = 1 : i64} : tensor<2x3xf32> -> tensor<f32>
  %m = tg.reduce mean %h dims = [0] {tg.stage = 1 : i64} : tensor<2x3xf32> -> tensor<3xf32>
  %next = tg.add %running, %m {tg.stage = 1 : i64} : tensor<3xf32>
  return %loss, %w, %next : tensor<f32>, tensor<3xf32>, tensor<3xf32>
}
