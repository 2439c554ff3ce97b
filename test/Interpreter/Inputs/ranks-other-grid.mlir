shard.grid @mesh(shape = 2) {tg.mesh_axes = ["dp"]}
shard.grid @other(shape = 2) {tg.mesh_axes = ["tp"]}
func.func @main(%x: tensor<4xf32> {tg.name = "x"}) -> (tensor<4xf32> {tg.name = "y"}) {
  %a = shard.all_reduce %x on @mesh grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
  %b = shard.all_reduce %a on @other grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
  return %b : tensor<4xf32>
}
