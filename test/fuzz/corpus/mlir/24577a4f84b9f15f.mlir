// Data and tensor parallelism on a 2x2 mesh: the batch split over dp, the
// MLP's weights over tp (columns, then rows); the output's partial sums are
// all-reduced within each tp group, the loss's over dp. The global results
// equal the unsharded MLP's.
shard.grid @mesh(shape = 2x2) {tg.mesh_axes = ["dp", "tp"]}
func.func @main(%x: tensor<4x4xf32> {tg.role = "input", tg.name = "x", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}]>},
                %w1: tensor<4x3xf32> {tg.role = "param", tg.name = "w1", tg.sharding = #tg.sharding<@mesh, [{}, {"tp"}]>},
                %w2: tensor<3x4xf32> {tg.role = "param", tg.name = "w2", tg.sharding = #tg.sharding<@mesh, [{"tp"}, {}]>})
    -> (tensor<4x4xf32> {tg.name = "y", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}]>},
        tensor<f32> {tg.name = "loss"}) {
  %h = tg.matmul %x, %w1 : (tensor<4x4xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %a = tg.relu %h : tensor<4x3xf32>
  %partial = tg.matmul %a, %w2 : (tensor<4x3xf32>, tensor<3x4xf32>) -> tensor<4x4xf32>
  %y = shard.all_reduce %partial on @mesh grid_axes = [1] reduction = sum : tensor<4x4xf32> -> tensor<4x4xf32>
  %local = tg.reduce sum %y dims = [0, 1] : tensor<4x4xf32> -> tensor<f32>
  %loss = shard.all_reduce %local on @mesh grid_axes = [0] reduction = sum : tensor<f32> -> tensor<f32>
  return %y, %loss : tensor<4x4xf32>, tensor<f32>
}
