shard.grid @mesh(shape = 2) {tg.mesh_axes = ["dp"]}
func.func @main(%x: tensor<4xf32> {tg.name = "x"}) -> (tensor<4xf32> {tg.name = "y"}) {
  %y = shard.broadcast %x on @mesh grid_axes = [0] root = [0] : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
