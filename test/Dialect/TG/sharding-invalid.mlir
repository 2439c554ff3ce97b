// RUN: tgc-opt %s --split-input-file --verify-diagnostics

// An axis the mesh does not have.
shard.grid @mesh(shape = 2) {tg.mesh_axes = ["dp"]}
// expected-error @+1 {{names axis "tp", which mesh dp=2 does not have}}
func.func @unknown_axis(%x: tensor<8xf32> {tg.sharding = #tg.sharding<@mesh, [{"tp"}]>}) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}

// -----

// A sharding of another rank than its value.
shard.grid @mesh(shape = 2) {tg.mesh_axes = ["dp"]}
// expected-error @+1 {{has 2 dimension(s), the value's type is 'tensor<8xf32>'}}
func.func @rank(%x: tensor<8xf32> {tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}]>}) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}

// -----

// An axis used twice.
shard.grid @mesh(shape = 2) {tg.mesh_axes = ["dp"]}
// expected-error @+1 {{mesh axis "dp" is used twice in one sharding}}
func.func @twice(%x: tensor<8x8xf32> {tg.sharding = #tg.sharding<@mesh, [{"dp"}, {"dp"}]>}) -> tensor<8x8xf32> {
  return %x : tensor<8x8xf32>
}

// -----

// A mesh that is not a grid.
// expected-error @+1 {{no shard.grid named @nowhere}}
func.func @no_grid(%x: tensor<8xf32> {tg.sharding = #tg.sharding<@nowhere, [{"dp"}]>}) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}

// -----

// A grid without axis names.
shard.grid @mesh(shape = 2)
// expected-error @+1 {{shard.grid @mesh needs 'tg.mesh_axes', one axis name per grid dimension}}
func.func @unnamed(%x: tensor<8xf32> {tg.sharding = #tg.sharding<@mesh, [{"dp"}]>}) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}

// -----

// Axis names per grid dimension.
// expected-error @+1 {{'tg.mesh_axes' belongs on a shard.grid: one axis name per grid dimension}}
shard.grid @mesh(shape = 2x2) {tg.mesh_axes = ["dp"]}

// -----

// One sharding per result.
shard.grid @mesh(shape = 2) {tg.mesh_axes = ["dp"]}
func.func @count(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'tg.shardings' must hold one #tg.sharding per result (1)}}
  %y = tg.exp %x {tg.shardings = []} : tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

shard.grid @mesh(shape = 2) {tg.mesh_axes = ["dp"]}
// expected-error @+1 {{'?' comes after the dimension's axes}}
func.func @open_first(%x: tensor<8xf32> {tg.sharding = #tg.sharding<@mesh, [{?, "dp"}]>}) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}

// -----

shard.grid @mesh(shape = 2) {tg.mesh_axes = ["dp"]}
// expected-error @+1 {{unreduced axes cannot be open}}
func.func @open_unreduced(%x: tensor<8xf32> {tg.sharding = #tg.sharding<@mesh, [{}], unreduced = {?}>}) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}

// -----

shard.grid @mesh(shape = 2) {tg.mesh_axes = ["dp"]}
// expected-error @+1 {{expected 'unreduced' or 'priority', got 'prio'}}
func.func @keyword(%x: tensor<8xf32> {tg.sharding = #tg.sharding<@mesh, [{}], prio = 1>}) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}
