// Data parallelism on two simulated ranks: each device runs the MLP on its
// half of the batch, the loss's partial sums are all-reduced. The global
// results equal the unsharded MLP's.

// Without --compare the global results are printed.
// GLOBAL: y: tensor<8x4xf32>
// GLOBAL: loss: tensor<f32>
shard.grid @mesh(shape = 2) {tg.mesh_axes = ["dp"]}
func.func @main(%x: tensor<4x4xf32> {tg.role = "input", tg.name = "x", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}]>},
                %w1: tensor<4x6xf32> {tg.role = "param", tg.name = "w1"},
                %w2: tensor<6x4xf32> {tg.role = "param", tg.name = "w2"})
    -> (tensor<4x4xf32> {tg.name = "y", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}]>},
        tensor<f32> {tg.name = "loss"}) {
  %h = tg.matmul %x, %w1 : (tensor<4x4xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %a = tg.relu %h : tensor<4x6xf32>
  %y = tg.matmul %a, %w2 : (tensor<4x6xf32>, tensor<6x4xf32>) -> tensor<4x4xf32>
  %partial = tg.reduce sum %y dims = [0, 1] : tensor<4x4xf32> -> tensor<f32>
  %loss = shard.all_reduce %partial on @mesh grid_axes = [0] reduction = sum : tensor<f32> -> tensor<f32>
  return %y, %loss : tensor<4x4xf32>, tensor<f32>
}
