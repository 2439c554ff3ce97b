// A grid with a dynamic size: which nodes a group spans is unknown, so
// tgc report refuses to price its collectives.
module {
  shard.grid @mesh(shape = 2x?)
  func.func @dynamic(%x: tensor<8xf32> {tg.role = "input"}) -> (tensor<8xf32> {tg.role = "output"}) {
    %0 = shard.all_reduce %x on @mesh grid_axes = [0] : tensor<8xf32> -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}
