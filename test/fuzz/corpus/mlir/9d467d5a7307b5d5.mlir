// Pipeline parallelism (docs/pipeline.md) with data parallelism on a pp=2 x
// dp=2 mesh: stage 0 (pp = 0) runs the first layer and its gradient, stage 1
// (pp = 1) the second layer, the loss and their gradients. The activation
// goes forward and its gradient backward through shard.send/shard.recv
// pairs, and each stage all-reduces its weight's gradient over dp. The
// global results equal the unsharded step's, a result being read from the
// devices of the stage that produces it (w1.copy, an argument returned, from
// any device).
shard.grid @mesh(shape = 2x2) {tg.mesh_axes = ["pp", "dp"]}
func.func @main(%x: tensor<4x4xf32> {tg.role = "input", tg.name = "x", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}]>},
                %w1: tensor<4x6xf32> {tg.role = "param", tg.name = "w1"},
                %w2: tensor<6x4xf32> {tg.role = "param", tg.name = "w2"})
    -> (tensor<f32> {tg.role = "loss", tg.name = "loss"},
        tensor<4x6xf32> {tg.role = "grad", tg.name = "w1.grad"},
        tensor<6x4xf32> {tg.role = "grad", tg.name = "w2.grad"},
        tensor<4x4xf32> {tg.role = "output", tg.name = "y", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}]>},
        tensor<4x6xf32> {tg.role = "param", tg.name = "w1.copy"})
    attributes {tg.pipeline_stages = {axis = "pp", stages = 2 : i64, virtual_stages = 1 : i64, micro_batches = 1 : i64, schedule = "gpipe"}} {
  %h = tg.matmul %x, %w1 {tg.stage = 0 : i64} : (tensor<4x4xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %a = tg.tanh %h {tg.stage = 0 : i64} : tensor<4x6xf32>
  %a_out = shard.send %a on @mesh grid_axes = [0] destination = [1] {tg.stage = 0 : i64} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %a_in = shard.recv %a_out on @mesh grid_axes = [0] source = [0] {tg.stage = 1 : i64} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %y = tg.matmul %a_in, %w2 {tg.stage = 1 : i64} : (tensor<4x6xf32>, tensor<6x4xf32>) -> tensor<4x4xf32>
  %yy = tg.mul %y, %y {tg.stage = 1 : i64} : tensor<4x4xf32>
  %partial_loss = tg.reduce sum %yy dims = [0, 1] {tg.stage = 1 : i64} : tensor<4x4xf32> -> tensor<f32>
  %loss = shard.all_reduce %partial_loss on @mesh grid_axes = [1] reduction = sum {tg.stage = 1 : i64} : tensor<f32> -> tensor<f32>
  %dy = tg.add %y, %y {tg.stage = 1 : i64, tg.backward} : tensor<4x4xf32>
  %partial_dw2 = tg.matmul %a_in, %dy transpose_a {tg.stage = 1 : i64, tg.backward} : (tensor<4x6xf32>, tensor<4x4xf32>) -> tensor<6x4xf32>
  %dw2 = shard.all_reduce %partial_dw2 on @mesh grid_axes = [1] reduction = sum {tg.stage = 1 : i64, tg.backward} : tensor<6x4xf32> -> tensor<6x4xf32>
  %da = tg.matmul %dy, %w2 transpose_b {tg.stage = 1 : i64, tg.backward} : (tensor<4x4xf32>, tensor<6x4xf32>) -> tensor<4x6xf32>
  %da_out = shard.send %da on @mesh grid_axes = [0] destination = [0] {tg.stage = 1 : i64, tg.backward} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %da_in = shard.recv %da_out on @mesh grid_axes = [0] source = [1] {tg.stage = 0 : i64, tg.backward} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %one = tg.constant {tg.stage = 0 : i64, tg.backward} dense<1.0> : tensor<4x6xf32>
  %aa = tg.mul %a, %a {tg.stage = 0 : i64, tg.backward} : tensor<4x6xf32>
  %slope = tg.sub %one, %aa {tg.stage = 0 : i64, tg.backward} : tensor<4x6xf32>
  %dh = tg.mul %da_in, %slope {tg.stage = 0 : i64, tg.backward} : tensor<4x6xf32>
  %partial_dw1 = tg.matmul %x, %dh transpose_a {tg.stage = 0 : i64, tg.backward} : (tensor<4x4xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %dw1 = shard.all_reduce %partial_dw1 on @mesh grid_axes = [1] reduction = sum {tg.stage = 0 : i64, tg.backward} : tensor<4x6xf32> -> tensor<4x6xf32>
  return %loss, %dw1, %dw2, %y, %w1 : tensor<f32>, tensor<4x6xf32>, tensor<6x4xf32>, tensor<4x4xf32>, tensor<4x6xf32>
}
