// Shardings on arguments and results: split dimensions, replicated ones, an
// open dimension, a priority; the grid names its axes.
shard.grid @mesh(shape = 2x4) {tg.mesh_axes = ["dp", "tp"]}
func.func @step(%x: tensor<8x16xf32> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {"tp"}]>},
                %w: tensor<16x16xf32> {tg.role = "param", tg.name = "w", tg.sharding = #tg.sharding<@mesh, [{?}, {"tp", ?}], priority = 2>})
    -> (tensor<8x16xf32> {tg.role = "output", tg.sharding = #tg.sharding<@mesh, [{}, {}]>}) {
  %y = tg.matmul %x, %w : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}
