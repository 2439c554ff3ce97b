shard.grid @mesh(shape = 2) {tg.mesh_axes = ["tp"]}
func.func @main(%x: tensor<4xf32> {tg.name = "x", tg.sharding = #tg.sharding<@mesh, [{}], unreduced = {"tp"}>}) -> (tensor<4xf32> {tg.name = "y"}) {
  %y = shard.all_reduce %x on @mesh grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}
