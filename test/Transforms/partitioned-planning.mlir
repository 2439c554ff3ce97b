// RUN: tgc-opt %s --tg-fuse | FileCheck %s --check-prefix=FUSE
// RUN: tgc-opt %s --tg-fuse | grep -c "= shard\." | FileCheck %s --check-prefix=COUNT
// RUN: tgc-opt %s --tg-schedule | FileCheck %s --check-prefix=SCHED
// RUN: tgc-opt %s --tg-schedule | grep -c "= shard\." | FileCheck %s --check-prefix=COUNT
// RUN: tgc-opt %s --tg-memory-plan | FileCheck %s --check-prefix=PLAN
// RUN: tgc-opt %s --tg-recompute='strategy=full' | FileCheck %s --check-prefix=RECOMPUTE
// RUN: tgc-opt %s --tg-training-pipeline | FileCheck %s --check-prefix=PIPELINE

// The planning passes on a partitioned step (one device's program, as
// tg-partition writes it: a dp=2 x tp=4 MLP step with ZeRO-1 on w1 and
// ZeRO-2 on w2). The shard collectives are ops like any other to them:
// scheduled, planned and recomputed, never fused.

// tg-fuse leaves every collective outside its regions.
// COUNT: 11
// FUSE-LABEL: func.func @step
// FUSE: tg.fusion
// FUSE-NOT: shard.
// FUSE: tg.yield

// tg-schedule moves the reduce-scatter of w2's gradient before w1's
// gradient is computed: it frees the 512-byte unreduced gradient early.
// SCHED-LABEL: func.func @step
// SCHED: shard.reduce_scatter
// SCHED: tg.matmul %arg0, %{{.*}} transpose_a
// SCHED: shard.all_reduce %{{.*}} grid_axes = [0] : tensor<16x8xf32>

// tg-memory-plan gives every collective's result a buffer (an all-slice's
// too), and the gathered w1 goes into w1's own buffer.
// PLAN-LABEL: func.func @step
// PLAN-SAME: %arg1: tensor<16x8xf32> {tg.name = "w1", tg.offset = [[W1:[0-9]+]] : i64
// PLAN-COUNT-2: shard.all_to_all {{.*}}{tg.offsets = array<i64: {{[0-9]+}}>}
// PLAN: shard.all_reduce {{.*}}{tg.offsets = array<i64: {{[0-9]+}}>}
// PLAN: shard.all_slice {{.*}}{tg.offsets = array<i64: {{[0-9]+}}>}
// PLAN: shard.all_gather {{.*}}{tg.offsets = array<i64: [[W1]]>}
// PLAN: shard.reduce_scatter {{.*}}{tg.offsets = array<i64: {{[0-9]+}}>}

// Recomputing the tanh for the backward runs its producers again,
// the two all-to-alls included (their time is in the recompute cost).
// RECOMPUTE-LABEL: func.func @step
// RECOMPUTE-COUNT-2: shard.all_to_all
// RECOMPUTE: tg.tanh
// RECOMPUTE: tg.matmul %arg0, %arg1
// RECOMPUTE-COUNT-2: shard.all_to_all
// RECOMPUTE: tg.tanh

// The whole planning stage runs through.
// PIPELINE-LABEL: func.func @step
// PIPELINE-SAME: tg.arena_size
// PIPELINE: shard.all_gather
module {
  shard.grid @mesh(shape = 2x4) {tg.mesh_axes = ["dp", "tp"]}
  func.func @step(
      %x: tensor<4x16xf32> {tg.role = "input", tg.name = "x", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}]>},
      %w1: tensor<16x8xf32> {tg.role = "param", tg.name = "w1", tg.sharding = #tg.sharding<@mesh, [{}, {"tp"}]>},
      %w2: tensor<8x16xf32> {tg.role = "param", tg.name = "w2", tg.sharding = #tg.sharding<@mesh, [{"tp"}, {}]>},
      %m1: tensor<8x8xf32> {tg.role = "state", tg.name = "w1.exp_avg"},
      %v1: tensor<8x8xf32> {tg.role = "state", tg.name = "w1.exp_avg_sq"},
      %m2: tensor<4x16xf32> {tg.role = "state", tg.name = "w2.exp_avg"},
      %v2: tensor<4x16xf32> {tg.role = "state", tg.name = "w2.exp_avg_sq"},
      %lr: tensor<f32> {tg.role = "hyper", tg.name = "lr"},
      %t: tensor<i64> {tg.role = "hyper", tg.name = "step"})
      -> (tensor<f32> {tg.role = "loss", tg.name = "loss"},
          tensor<16x8xf32> {tg.aliases = 1 : i64},
          tensor<8x16xf32> {tg.aliases = 2 : i64},
          tensor<8x8xf32> {tg.aliases = 3 : i64},
          tensor<8x8xf32> {tg.aliases = 4 : i64},
          tensor<4x16xf32> {tg.aliases = 5 : i64},
          tensor<4x16xf32> {tg.aliases = 6 : i64}) {
    // Forward. An all-to-all over tp and back, as sequence parallelism
    // does around attention; the row-parallel partial sums all-reduced.
    %h = tg.matmul %x, %w1 : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
    %hs = shard.all_to_all %h on @mesh grid_axes = [1] split_axis = 0 concat_axis = 1 : tensor<4x8xf32> -> tensor<1x32xf32>
    %hb = shard.all_to_all %hs on @mesh grid_axes = [1] split_axis = 1 concat_axis = 0 : tensor<1x32xf32> -> tensor<4x8xf32>
    %a = tg.tanh %hb : tensor<4x8xf32>
    %op = tg.matmul %a, %w2 : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
    %o = shard.all_reduce %op on @mesh grid_axes = [1] : tensor<4x16xf32> -> tensor<4x16xf32>
    %lp = tg.reduce sum %o dims = [0, 1] : tensor<4x16xf32> -> tensor<f32>
    %loss = shard.all_reduce %lp on @mesh grid_axes = [0] : tensor<f32> -> tensor<f32>
    // Backward of the sum: the row-parallel layer's input gradient needs no
    // collective; the weight gradients are partial over dp.
    %one = tg.constant dense<1.0> : tensor<4x16xf32>
    %da = tg.matmul %one, %w2 transpose_b : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
    %dw2p = tg.matmul %a, %one transpose_a : (tensor<4x8xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
    %a2 = tg.mul %a, %a : tensor<4x8xf32>
    %ones = tg.constant dense<1.0> : tensor<4x8xf32>
    %s = tg.sub %ones, %a2 : tensor<4x8xf32>
    %dh = tg.mul %da, %s : tensor<4x8xf32>
    %dw1p = tg.matmul %x, %dh transpose_a : (tensor<4x16xf32>, tensor<4x8xf32>) -> tensor<16x8xf32>
    // ZeRO-1 on w1: the full all-reduced gradient, each dp rank updates its
    // half and the halves are gathered.
    %dw1 = shard.all_reduce %dw1p on @mesh grid_axes = [0] : tensor<16x8xf32> -> tensor<16x8xf32>
    %g1 = shard.all_slice %dw1 on @mesh grid_axes = [0] slice_axis = 0 : tensor<16x8xf32> -> tensor<8x8xf32>
    %p1 = shard.all_slice %w1 on @mesh grid_axes = [0] slice_axis = 0 : tensor<16x8xf32> -> tensor<8x8xf32>
    %n1, %nm1, %nv1 = tg.adamw %p1, %g1, %m1, %v1, %lr, %t betas = (9.000000e-01, 9.990000e-01) epsilon = 1.000000e-08 weight_decay = 0.000000e+00 : tensor<8x8xf32>, tensor<f32>, tensor<i64>
    %w1n = shard.all_gather %n1 on @mesh grid_axes = [0] gather_axis = 0 : tensor<8x8xf32> -> tensor<16x8xf32>
    // ZeRO-2 on w2: the gradient reduce-scattered.
    %g2 = shard.reduce_scatter %dw2p on @mesh grid_axes = [0] scatter_axis = 0 : tensor<8x16xf32> -> tensor<4x16xf32>
    %p2 = shard.all_slice %w2 on @mesh grid_axes = [0] slice_axis = 0 : tensor<8x16xf32> -> tensor<4x16xf32>
    %n2, %nm2, %nv2 = tg.adamw %p2, %g2, %m2, %v2, %lr, %t betas = (9.000000e-01, 9.990000e-01) epsilon = 1.000000e-08 weight_decay = 0.000000e+00 : tensor<4x16xf32>, tensor<f32>, tensor<i64>
    %w2n = shard.all_gather %n2 on @mesh grid_axes = [0] gather_axis = 0 : tensor<4x16xf32> -> tensor<8x16xf32>
    return %loss, %w1n, %w2n, %nm1, %nv1, %nm2, %nv2 : tensor<f32>, tensor<16x8xf32>, tensor<8x16xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<4x16xf32>, tensor<4x16xf32>
  }
}
