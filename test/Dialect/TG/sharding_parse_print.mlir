// RUN: tgc-opt %s --split-input-file | tgc-opt --split-input-file | FileCheck %s
// RUN: tgc-opt %s --split-input-file --mlir-print-op-generic | tgc-opt --split-input-file | FileCheck %s

// Shardings on arguments and results: split dimensions, replicated ones, an
// open dimension, a priority; the grid names its axes.
// CHECK: shard.grid @mesh(shape = 2x4) {tg.mesh_axes = ["dp", "tp"]}
// CHECK-LABEL: func.func @step
// CHECK-SAME: tg.sharding = #tg.sharding<@mesh, [{"dp"}, {"tp"}]>
// CHECK-SAME: tg.sharding = #tg.sharding<@mesh, [{?}, {"tp", ?}], priority = 2>
// CHECK-SAME: tg.sharding = #tg.sharding<@mesh, [{}, {}]>
shard.grid @mesh(shape = 2x4) {tg.mesh_axes = ["dp", "tp"]}
func.func @step(%x: tensor<8x16xf32> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {"tp"}]>},
                %w: tensor<16x16xf32> {tg.role = "param", tg.name = "w", tg.sharding = #tg.sharding<@mesh, [{?}, {"tp", ?}], priority = 2>})
    -> (tensor<8x16xf32> {tg.role = "output", tg.sharding = #tg.sharding<@mesh, [{}, {}]>}) {
  %y = tg.matmul %x, %w : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// -----

// One sharding per result of an op; a partial sum; two axes on a dimension,
// major first.
// CHECK-LABEL: func.func @partial
// CHECK: tg.shardings = [#tg.sharding<@mesh, [{"dp", "tp"}, {}], unreduced = {"pp"}>]
shard.grid @mesh(shape = 2x2x2) {tg.mesh_axes = ["dp", "tp", "pp"]}
func.func @partial(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %y = tg.exp %x {tg.shardings = [#tg.sharding<@mesh, [{"dp", "tp"}, {}], unreduced = {"pp"}>]} : tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}
