// RUN: tgc-opt %s --split-input-file --tg-shard-annotate='mesh=dp=2,tp=2' --verify-diagnostics

shard.grid @mesh(shape = 2x2) {tg.mesh_axes = ["dp", "tp"]}

// A user sharding whose blocks do not divide the argument.
// expected-error @+1 {{the sharding of argument 'w' splits 'tensor<3x4xf32>' into blocks that do not divide it}}
func.func @uneven(%w: tensor<3x4xf32> {tg.role = "param", tg.name = "w", tg.sharding = #tg.sharding<@mesh, [{"tp"}, {}]>})
    -> (tensor<f32> {tg.role = "loss"}) {
  %l = tg.reduce sum %w dims = [0, 1] : tensor<3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
