shard.grid @mesh(shape = 2) {tg.mesh_axes = ["dp"]}
func.func @main(%x: tensor<4xf32> {tg.name = "x"}) -> (tensor<4xf32> {tg.name = "y"}) {
  %y = tg.fusion (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %r = shard.all_reduce %a on @mesh grid_axes = [0] reduction = sum : tensor<4xf32> -> tensor<4xf32>
    tg.yield %r : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}
