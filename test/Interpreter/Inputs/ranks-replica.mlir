shard.grid @mesh(shape = 2) {tg.mesh_axes = ["dp"]}
func.func @main(%x: tensor<4xf32> {tg.name = "x"}) -> (tensor<2xf32> {tg.name = "half"}) {
  %half = shard.all_slice %x on @mesh grid_axes = [0] slice_axis = 0 : tensor<4xf32> -> tensor<2xf32>
  return %half : tensor<2xf32>
}
