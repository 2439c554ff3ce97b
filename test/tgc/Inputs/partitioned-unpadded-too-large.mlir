// A partitioned step whose tg.unpadded_shape is larger than the global
// shape its blocks make (3 blocks of 2 rows: 6, not 7).
module {
  shard.grid @mesh(shape = 3) {tg.mesh_axes = ["dp"]}
  func.func @step(
      %w: tensor<2x4xf32> {tg.role = "param", tg.name = "w", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}]>, tg.unpadded_shape = array<i64: 7, 4>})
      -> (tensor<2x4xf32> {tg.role = "output", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}]>}) {
    %0 = tg.exp %w : tensor<2x4xf32>
    return %0 : tensor<2x4xf32>
  }
}
