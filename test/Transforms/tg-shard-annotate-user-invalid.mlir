// RUN: tgc-opt %s --split-input-file --tg-shard-annotate='mesh=dp=2,tp=2' --verify-diagnostics

shard.grid @mesh(shape = 2x2) {tg.mesh_axes = ["dp", "tp"]}

// A user sharding whose blocks do not divide the argument.
// expected-error @+1 {{the sharding of argument 'w' splits 'tensor<3x4xf32>' into blocks that do not divide it}}
func.func @uneven(%w: tensor<3x4xf32> {tg.role = "param", tg.name = "w", tg.sharding = #tg.sharding<@mesh, [{"tp"}, {}]>})
    -> (tensor<f32> {tg.role = "loss"}) {
  %l = tg.reduce sum %w dims = [0, 1] : tensor<3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

shard.grid @mesh(shape = 2x2) {tg.mesh_axes = ["dp", "tp"]}

// A user sharding that contradicts an op's rule: a softmax needs its
// dimension whole.
// expected-note @+1 {{the sharding is here}}
func.func @contradicts(%x: tensor<4x8xf32> {tg.role = "input", tg.name = "x", tg.sharding = #tg.sharding<@mesh, [{}, {"tp"}]>})
    -> (tensor<f32> {tg.role = "loss"}) {
  // expected-error @+1 {{needs dimension 1 of operand #0 whole, but the user sharding #tg.sharding<@mesh, [{}, {"tp"}]> of argument 'x' splits it}}
  %s = tg.softmax %x dim = 1 : tensor<4x8xf32>
  %l = tg.reduce sum %s dims = [0, 1] : tensor<4x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}
