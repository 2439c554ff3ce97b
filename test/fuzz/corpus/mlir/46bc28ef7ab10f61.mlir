// Virtual pipeline stages (docs/pipeline.md) with tensor parallelism on a
// tp=2 x pp=2 mesh, the pipeline axis innermost: stages 0 and 2 run on the
// devices of pp = 0, stages 1 and 3 on those of pp = 1, so the MLP goes
// back and forth between them; stage 2 all-reduces the output's partial sums
// over tp. The global results equal the unsharded MLP's.
shard.grid @mesh(shape = 2x2) {tg.mesh_axes = ["tp", "pp"]}
func.func @main(%x: tensor<8x4xf32> {tg.role = "input", tg.name = "x"},
                %w1: tensor<4x3xf32> {tg.role = "param", tg.name = "w1", tg.sharding = #tg.sharding<@mesh, [{}, {"tp"}]>},
                %w2: tensor<3x4xf32> {tg.role = "param", tg.name = "w2", tg.sharding = #tg.sharding<@mesh, [{"tp"}, {}]>})
    -> (tensor<8x4xf32> {tg.name = "y"}, tensor<f32> {tg.name = "loss"})
    attributes {tg.pipeline_stages = {axis = "pp", stages = 2 : i64, virtual_stages = 2 : i64, micro_batches = 2 : i64, schedule = "interleaved"}} {
  %h = tg.matmul %x, %w1 {tg.stage = 0 : i64} : (tensor<8x4xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
  %h_out = shard.send %h on @mesh grid_axes = [1] destination = [1] {tg.stage = 0 : i64} : (tensor<8x3xf32>) -> tensor<8x3xf32>
  %h_in = shard.recv %h_out on @mesh grid_axes = [1] source = [0] {tg.stage = 1 : i64} : (tensor<8x3xf32>) -> tensor<8x3xf32>
  %a = tg.relu %h_in {tg.stage = 1 : i64} : tensor<8x3xf32>
  %a_out = shard.send %a on @mesh grid_axes = [1] destination = [0] {tg.stage = 1 : i64} : (tensor<8x3xf32>) -> tensor<8x3xf32>
  %a_in = shard.recv %a_out on @mesh grid_axes = [1] source = [1] {tg.stage = 2 : i64} : (tensor<8x3xf32>) -> tensor<8x3xf32>
  %partial = tg.matmul %a_in, %w2 {tg.stage = 2 : i64} : (tensor<8x3xf32>, tensor<3x4xf32>) -> tensor<8x4xf32>
  %y = shard.all_reduce %partial on @mesh grid_axes = [0] reduction = sum {tg.stage = 2 : i64} : tensor<8x4xf32> -> tensor<8x4xf32>
  %y_out = shard.send %y on @mesh grid_axes = [1] destination = [1] {tg.stage = 2 : i64} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %y_in = shard.recv %y_out on @mesh grid_axes = [1] source = [0] {tg.stage = 3 : i64} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %loss = tg.reduce sum %y_in dims = [0, 1] {tg.stage = 3 : i64} : tensor<8x4xf32> -> tensor<f32>
  return %y, %loss : tensor<8x4xf32>, tensor<f32>
}
