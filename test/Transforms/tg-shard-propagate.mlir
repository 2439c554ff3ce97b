// RUN: tgc-opt %s --split-input-file --tg-shard-propagate | FileCheck %s
// RUN: tgc-opt %s --split-input-file --tg-shard-propagate=explain=true --mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN

// Data parallelism: the batch split of the input reaches every activation;
// the weights stay whole; the loss is a replicated result.
// CHECK-LABEL: func.func @data_parallel
// CHECK: tg.matmul {{.*}}tg.shardings = [#tg.sharding<@mesh, [{"dp"}, {}]>]
// CHECK: tg.gelu {{.*}}tg.shardings = [#tg.sharding<@mesh, [{"dp"}, {}]>]
// CHECK: tg.matmul {{.*}}tg.shardings = [#tg.sharding<@mesh, [{"dp"}, {}]>]
// CHECK: tg.reduce {{.*}}tg.shardings = [#tg.sharding<@mesh, []>]
shard.grid @mesh(shape = 2) {tg.mesh_axes = ["dp"]}
func.func @data_parallel(
    %x: tensor<8x16xf32> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}], priority = 1>},
    %w1: tensor<16x32xf32> {tg.role = "param", tg.name = "w1", tg.sharding = #tg.sharding<@mesh, [{}, {}], priority = 1>},
    %w2: tensor<32x4xf32> {tg.role = "param", tg.name = "w2", tg.sharding = #tg.sharding<@mesh, [{}, {}], priority = 1>})
    -> (tensor<f32> {tg.role = "loss"}) {
  %h = tg.matmul %x, %w1 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %a = tg.gelu tanh %h : tensor<8x32xf32>
  %o = tg.matmul %a, %w2 : (tensor<8x32xf32>, tensor<32x4xf32>) -> tensor<8x4xf32>
  %l = tg.reduce sum %o dims = [0, 1] : tensor<8x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Megatron's MLP: the column-parallel weight splits the hidden activation,
// which reaches the row-parallel weight's contraction; the output is whole
// (a partial sum until tg-partition reduces it). A reshape into heads keeps
// the split on the major factor.
// CHECK-LABEL: func.func @tensor_parallel
// CHECK: tg.matmul {{.*}}tg.shardings = [#tg.sharding<@mesh, [{}, {"tp"}]>]
// CHECK: tg.reshape {{.*}}tg.shardings = [#tg.sharding<@mesh, [{}, {"tp"}, {}]>]
// CHECK: tg.gelu {{.*}}tg.shardings = [#tg.sharding<@mesh, [{}, {"tp"}, {}]>]
// CHECK: tg.reshape {{.*}}tg.shardings = [#tg.sharding<@mesh, [{}, {"tp"}]>]
// CHECK: tg.matmul {{.*}}tg.shardings = [#tg.sharding<@mesh, [{}, {}]>]
shard.grid @mesh(shape = 2) {tg.mesh_axes = ["tp"]}
func.func @tensor_parallel(
    %x: tensor<8x16xf32> {tg.role = "input"},
    %w1: tensor<16x32xf32> {tg.role = "param", tg.name = "w1", tg.sharding = #tg.sharding<@mesh, [{}, {"tp"}], priority = 2>},
    %w2: tensor<32x4xf32> {tg.role = "param", tg.name = "w2", tg.sharding = #tg.sharding<@mesh, [{"tp"}, {}], priority = 2>})
    -> (tensor<f32> {tg.role = "loss"}) {
  %h = tg.matmul %x, %w1 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %r = tg.reshape %h : tensor<8x32xf32> -> tensor<8x4x8xf32>
  %a = tg.gelu tanh %r : tensor<8x4x8xf32>
  %f = tg.reshape %a : tensor<8x4x8xf32> -> tensor<8x32xf32>
  %o = tg.matmul %f, %w2 : (tensor<8x32xf32>, tensor<32x4xf32>) -> tensor<8x4xf32>
  %l = tg.reduce sum %o dims = [0, 1] : tensor<8x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A conflict: the user splits the activation's columns over dp, data
// parallelism its rows; the user's priority wins the axis, and the other
// factor stays unsplit.
// EXPLAIN: tg-shard-propagate.mlir:[[@LINE+9]]:8: remark: sharding conflict: axis "dp" already splits a factor of size 32; the factor of size 8 from operand #0 stays unsplit on it
// EXPLAIN: remark: shardings of the 2 arguments on mesh dp=2:
// EXPLAIN-NEXT: x 'tensor<8x16xf32>' [{"dp"}, {}]
// EXPLAIN-NEXT: w 'tensor<16x32xf32>' [{}, {"dp"}]
shard.grid @mesh(shape = 2) {tg.mesh_axes = ["dp"]}
func.func @conflict(
    %x: tensor<8x16xf32> {tg.role = "input", tg.name = "x", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}], priority = 1>},
    %w: tensor<16x32xf32> {tg.role = "param", tg.name = "w", tg.sharding = #tg.sharding<@mesh, [{}, {"dp"}], priority = 0>})
    -> (tensor<f32> {tg.role = "loss"}) {
  %h = tg.matmul %x, %w : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %l = tg.reduce sum %h dims = [0, 1] : tensor<8x32xf32> -> tensor<f32>
  return %l : tensor<f32>
}
