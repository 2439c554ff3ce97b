// A collective the cost model has no figure for yet.
module {
  shard.grid @mesh(shape = 4)
  func.func @broadcast(%x: tensor<8xf32> {tg.role = "input"}) -> (tensor<8xf32> {tg.role = "output"}) {
    %0 = shard.broadcast %x on @mesh grid_axes = [0] root = [0] : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}
