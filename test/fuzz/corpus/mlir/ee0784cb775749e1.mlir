// One sharding per result of an op; a partial sum; two axes on a dimension,
// major first.
shard.grid @mesh(shape = 2x2x2) {tg.mesh_axes = ["dp", "tp", "pp"]}
func.func @partial(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %y = tg.exp %x {tg.shardings = [#tg.sharding<@mesh, [{"dp", "tp"}, {}], unreduced = {"pp"}>]} : tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}
