// Every collective the simulated ranks run, on a 2x2 mesh: the input split
// over both axes is all-gathered within tp; the hidden layer and the second
// weight are all-sliced into Megatron's column/row split; the partial
// output is reduce-scattered over tp by columns, then exchanged all-to-all
// into rows split over dp and tp; the loss is all-reduced over the whole
// mesh. The global results equal the unsharded MLP's.
shard.grid @mesh(shape = 2x2) {tg.mesh_axes = ["dp", "tp"]}
func.func @main(%x: tensor<4x2xf32> {tg.role = "input", tg.name = "x", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {"tp"}]>},
                %w1: tensor<4x6xf32> {tg.role = "param", tg.name = "w1"},
                %w2: tensor<6x4xf32> {tg.role = "param", tg.name = "w2"})
    -> (tensor<2x4xf32> {tg.name = "y", tg.sharding = #tg.sharding<@mesh, [{"dp", "tp"}, {}]>},
        tensor<f32> {tg.name = "loss"}) {
  %xs = shard.all_gather %x on @mesh grid_axes = [1] gather_axis = 1 : tensor<4x2xf32> -> tensor<4x4xf32>
  %h = tg.matmul %xs, %w1 : (tensor<4x4xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %hs = shard.all_slice %h on @mesh grid_axes = [1] slice_axis = 1 : tensor<4x6xf32> -> tensor<4x3xf32>
  %a = tg.relu %hs : tensor<4x3xf32>
  %w2s = shard.all_slice %w2 on @mesh grid_axes = [1] slice_axis = 0 : tensor<6x4xf32> -> tensor<3x4xf32>
  %partial = tg.matmul %a, %w2s : (tensor<4x3xf32>, tensor<3x4xf32>) -> tensor<4x4xf32>
  %columns = shard.reduce_scatter %partial on @mesh grid_axes = [1] reduction = sum scatter_axis = 1 : tensor<4x4xf32> -> tensor<4x2xf32>
  %y = shard.all_to_all %columns on @mesh grid_axes = [1] split_axis = 0 concat_axis = 1 : tensor<4x2xf32> -> tensor<2x4xf32>
  %local = tg.reduce sum %y dims = [0, 1] : tensor<2x4xf32> -> tensor<f32>
  %loss = shard.all_reduce %local on @mesh grid_axes = [0, 1] reduction = sum : tensor<f32> -> tensor<f32>
  return %y, %loss : tensor<2x4xf32>, tensor<f32>
}
