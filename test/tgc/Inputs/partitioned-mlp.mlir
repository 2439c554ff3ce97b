// One device's program of a two-layer MLP training step on a dp=2 x tp=4
// mesh, written as tg-partition lays it out: w1 column-parallel and w2
// row-parallel over tp (Megatron), the batch split over dp, w1 with ZeRO-1
// (the gradient all-reduced, each dp rank updating its slice) and w2 with
// ZeRO-2 (the gradient reduce-scattered). Global shapes: x 8x16, w1 16x32,
// w2 32x16.
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
