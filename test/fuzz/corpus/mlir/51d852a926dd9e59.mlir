// Results left as partial sums: the row-parallel output and the loss are
// returned unreduced over tp, and their global values are the sums over the
// devices. They equal the unsharded MLP's.
shard.grid @mesh(shape = 2) {tg.mesh_axes = ["tp"]}
func.func @main(%x: tensor<8x4xf32> {tg.role = "input", tg.name = "x"},
                %w1: tensor<4x3xf32> {tg.role = "param", tg.name = "w1", tg.sharding = #tg.sharding<@mesh, [{}, {"tp"}]>},
                %w2: tensor<3x4xf32> {tg.role = "param", tg.name = "w2", tg.sharding = #tg.sharding<@mesh, [{"tp"}, {}]>})
    -> (tensor<8x4xf32> {tg.name = "y", tg.sharding = #tg.sharding<@mesh, [{}, {}], unreduced = {"tp"}>},
        tensor<f32> {tg.name = "loss", tg.sharding = #tg.sharding<@mesh, [], unreduced = {"tp"}>}) {
  %h = tg.matmul %x, %w1 : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %a = tg.relu %h : tensor<8x3xf32>
  %y = tg.matmul %a, %w2 : (tensor<8x3xf32>, tensor<3x4xf32>) -> tensor<8x4xf32>
  %loss = tg.reduce sum %y dims = [0, 1] : tensor<8x4xf32> -> tensor<f32>
  return %y, %loss : tensor<8x4xf32>, tensor<f32>
}
