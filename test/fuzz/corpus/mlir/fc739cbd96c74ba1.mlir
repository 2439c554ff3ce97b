// Megatron's tensor-parallel MLP on two simulated ranks: the first weight
// split by columns, the second by rows, the output's partial sums
// all-reduced. The global results equal the unsharded MLP's.
shard.grid @mesh(shape = 2) {tg.mesh_axes = ["tp"]}
func.func @main(%x: tensor<8x4xf32> {tg.role = "input", tg.name = "x"},
                %w1: tensor<4x3xf32> {tg.role = "param", tg.name = "w1", tg.sharding = #tg.sharding<@mesh, [{}, {"tp"}]>},
                %w2: tensor<3x4xf32> {tg.role = "param", tg.name = "w2", tg.sharding = #tg.sharding<@mesh, [{"tp"}, {}]>})
    -> (tensor<8x4xf32> {tg.name = "y"}, tensor<f32> {tg.name = "loss"}) {
  %h = tg.matmul %x, %w1 : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %a = tg.relu %h : tensor<8x3xf32>
  %partial = tg.matmul %a, %w2 : (tensor<8x3xf32>, tensor<3x4xf32>) -> tensor<8x4xf32>
  %y = shard.all_reduce %partial on @mesh grid_axes = [0] reduction = sum : tensor<8x4xf32> -> tensor<8x4xf32>
  %loss = tg.reduce sum %y dims = [0, 1] : tensor<8x4xf32> -> tensor<f32>
  return %y, %loss : tensor<8x4xf32>, tensor<f32>
}
