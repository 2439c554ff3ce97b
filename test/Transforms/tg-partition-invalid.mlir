// RUN: tgc-opt %s --split-input-file --tg-partition --verify-diagnostics

// A sharding whose blocks do not divide the argument (no tg-shard-annotate
// checked it).
shard.grid @mesh(shape = 2) {tg.mesh_axes = ["dp"]}
func.func @uneven(%x: tensor<3x4xf32> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}]>})
    -> (tensor<3x4xf32> {tg.role = "output"}) {
  // expected-error @-2 {{dimension 0 of 'tensor<3x4xf32>' (size 3) cannot be split into 2 equal blocks over [{"dp"}, {}]}}
  return %x : tensor<3x4xf32>
}

// -----

// An argument is stored whole or split, never as a partial sum.
shard.grid @mesh(shape = 2) {tg.mesh_axes = ["dp"]}
// expected-error @+1 {{argument #0 cannot be a partial sum}}
func.func @partial(%x: tensor<4xf32> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{}], unreduced = {"dp"}>})
    -> (tensor<4xf32> {tg.role = "output"}) {
  return %x : tensor<4xf32>
}

// -----

// Partitioning comes before fusion: a region has no sharding rule.
shard.grid @mesh(shape = 2) {tg.mesh_axes = ["dp"]}
func.func @fused(%x: tensor<4xf32> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{"dp"}]>})
    -> (tensor<4xf32> {tg.role = "output"}) {
  // expected-error @+1 {{tg-partition runs before tg-fuse: an op with regions cannot be partitioned}}
  %y = tg.fusion(%x) {kind = "loop"} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %e = tg.exp %a : tensor<4xf32>
    tg.yield %e : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}

// -----

// tg.vocab_parallel marks a lookup, nothing else.
func.func @vocab_parallel_on_add(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tg.vocab_parallel' is a unit attribute of tg.embedding}}
  %y = tg.add %x, %x {tg.vocab_parallel} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// tg.id_bound is the positive bound of the global ids a tg.sub shifts (or a
// padded vocabulary's lookup or loss reads).
func.func @id_bound_negative(%x: tensor<4xi64>) -> tensor<4xi64> {
  // expected-error @+1 {{'tg.id_bound' is a positive integer on a tg.sub, tg.embedding, tg.cross_entropy or tg.cross_entropy_grad}}
  %y = tg.sub %x, %x {tg.id_bound = -3 : i64} : tensor<4xi64>
  return %y : tensor<4xi64>
}

// -----

// tg.unpadded_random_shape (tp's padded heads under dropout) is the shape
// of an op's numbers before padding: on an op that draws them, no larger.
func.func @unpadded_random_on_add(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tg.unpadded_random_shape' is an array of sizes on an op that draws random numbers}}
  %y = tg.add %x, %x {tg.unpadded_random_shape = array<i64: 4>} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @unpadded_random_larger(%x: tensor<4x6xf32>, %seed: tensor<i64>) -> tensor<4x6xf32> {
  // expected-error @+1 {{'tg.unpadded_random_shape' must have a size from 1 to the numbers' for each of their 2 dimensions}}
  %y = tg.dropout %x, %seed rate = 1.000000e-01 stream = 0 {tg.unpadded_random_shape = array<i64: 4, 8>} : tensor<4x6xf32>, tensor<i64>
  return %y : tensor<4x6xf32>
}

// -----

// Numbers padded by tp (tg.unpadded_random_shape) left whole on every
// device: its block would exceed the unpadded shape, and the padding's
// numbers would shift the real ones; an error, never other masks.
shard.grid @mesh(shape = 2) {tg.mesh_axes = ["tp"]}
func.func @padded_dropout_unsplit(%x: tensor<4x8xf32> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{}, {}]>},
    %seed: tensor<i64> {tg.role = "hyper", tg.sharding = #tg.sharding<@mesh, []>})
    -> (tensor<4x8xf32> {tg.role = "output"}) {
  // expected-error @+1 {{tg-partition: the padded heads of a dropout are not split over the devices (its block of numbers [4, 8] exceeds the unpadded shape [4, 6])}}
  %y = tg.dropout %x, %seed rate = 1.000000e-01 stream = 0 {tg.unpadded_random_shape = array<i64: 4, 6>} : tensor<4x8xf32>, tensor<i64>
  return %y : tensor<4x8xf32>
}
