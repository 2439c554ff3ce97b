// RUN: tgc-opt %s --split-input-file --tg-shard-propagate --tg-partition | FileCheck %s

// Expert parallelism: a stack of experts split on its experts over dp. The
// routed rows, split over dp with the batch, are gathered for the
// products; each device multiplies the rows of its own experts (ids
// relative to its block, global_experts) and gives zeros for the others'.
// The product is an exclusive partial sum: each row whole on the device of
// its expert, zero elsewhere. Elementwise ops compute on it as it is, their
// result masked to the device's rows where zeros would not stay zeros
// (tanh(0) is 0, but the mask does not rely on it; a sum of exclusive
// values needs none), and the second product reads it without a
// collective. Its rows are reduce-scattered back to the batch's split.
// CHECK-LABEL: func.func @experts
// CHECK-DAG: %[[IDS:.+]] = shard.all_gather %arg1 on @mesh grid_axes = [0] gather_axis = 0 : tensor<4xi64> -> tensor<8xi64>
// CHECK-DAG: %[[X:.+]] = shard.all_gather %arg0 on @mesh grid_axes = [0] gather_axis = 0 : tensor<4x4xf32> -> tensor<8x4xf32>
// CHECK: %[[TABLE:.+]] = tg.constant dense<[0, 2]> : tensor<2xi64>
// CHECK-NEXT: %[[MINE:.+]] = shard.all_slice %[[TABLE]]
// CHECK-NEXT: %[[OFFSET:.+]] = tg.reshape %[[MINE]] : tensor<1xi64> -> tensor<i64>
// CHECK-NEXT: %[[OFFSETS:.+]] = tg.broadcast_in_dim %[[OFFSET]]
// CHECK-NEXT: %[[LOCAL:.+]] = tg.sub %[[IDS]], %[[OFFSETS]] : tensor<8xi64>
// CHECK: %[[OWNED:.+]] = tg.compare lt
// CHECK-NEXT: %[[H:.+]] = tg.expert_matmul %[[X]], %arg2[%[[LOCAL]]] {global_experts = 4 : i64} : (tensor<8x4xf32>, tensor<2x4x6xf32>, tensor<8xi64>) -> tensor<8x6xf32>
// CHECK-NEXT: %[[T:.+]] = tg.tanh %[[H]] : tensor<8x6xf32>
// CHECK-NEXT: %[[MASK:.+]] = tg.broadcast_in_dim %[[OWNED]] dims = [0] : tensor<8xi1> -> tensor<8x6xi1>
// CHECK-NEXT: %[[ZERO:.+]] = tg.constant dense<0.000000e+00> : tensor<8x6xf32>
// CHECK-NEXT: %[[A:.+]] = tg.select %[[MASK]], %[[T]], %[[ZERO]]
// CHECK-NEXT: %[[S:.+]] = tg.add %[[A]], %[[H]] : tensor<8x6xf32>
// CHECK: %[[Y:.+]] = tg.expert_matmul %[[S]], %arg3[%{{.+}}] {global_experts = 4 : i64} : (tensor<8x6xf32>, tensor<2x6x4xf32>, tensor<8xi64>) -> tensor<8x4xf32>
// CHECK-NEXT: %[[R:.+]] = shard.reduce_scatter %[[Y]] on @mesh grid_axes = [0] scatter_axis = 0 : tensor<8x4xf32> -> tensor<4x4xf32>
// CHECK-NEXT: return %[[R]]
shard.grid @mesh(shape = 2) {tg.mesh_axes = ["dp"]}
func.func @experts(
    %x: tensor<8x4xf32> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}], priority = 1>},
    %ids: tensor<8xi64> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{"dp"}], priority = 1>},
    %w1: tensor<4x4x6xf32> {tg.role = "param", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}, {}], priority = 0>},
    %w2: tensor<4x6x4xf32> {tg.role = "param", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}, {}], priority = 0>})
    -> (tensor<8x4xf32> {tg.role = "output", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}], priority = 1>}) {
  %h = tg.expert_matmul %x, %w1[%ids] : (tensor<8x4xf32>, tensor<4x4x6xf32>, tensor<8xi64>) -> tensor<8x6xf32>
  %t = tg.tanh %h : tensor<8x6xf32>
  %s = tg.add %t, %h : tensor<8x6xf32>
  %y = tg.expert_matmul %s, %w2[%ids] : (tensor<8x6xf32>, tensor<4x6x4xf32>, tensor<8xi64>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

// The weight gradient of a split stack: each device sums the gathered rows
// of its own experts into its block, complete (no collective after it).
// CHECK-LABEL: func.func @expert_grad
// CHECK-DAG: shard.all_gather %arg0 {{.*}}: tensor<4x4xf32> -> tensor<8x4xf32>
// CHECK-DAG: shard.all_gather %arg1 {{.*}}: tensor<4x6xf32> -> tensor<8x6xf32>
// CHECK: %[[G:.+]] = tg.expert_matmul_grad {{.*}} {global_experts = 4 : i64} : (tensor<8x4xf32>, tensor<8x6xf32>, tensor<8xi64>) -> tensor<2x4x6xf32>
// CHECK-NEXT: return %[[G]]
shard.grid @mesh(shape = 2) {tg.mesh_axes = ["dp"]}
func.func @expert_grad(
    %x: tensor<8x4xf32> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}], priority = 1>},
    %dy: tensor<8x6xf32> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}], priority = 1>},
    %ids: tensor<8xi64> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{"dp"}], priority = 1>})
    -> (tensor<4x4x6xf32> {tg.role = "output", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}, {}], priority = 0>}) {
  %g = tg.expert_matmul_grad %x, %dy[%ids] : (tensor<8x4xf32>, tensor<8x6xf32>, tensor<8xi64>) -> tensor<4x4x6xf32>
  return %g : tensor<4x4x6xf32>
}

// -----

// An exclusive product scaled by values split over dp (the routing
// weights) and read by no other expert product is reduce-scattered first:
// gathering the weights would move as much, and the sum would follow.
// CHECK-LABEL: func.func @combine
// CHECK: %[[Y:.+]] = tg.expert_matmul {{.*}} {global_experts = 4 : i64}
// CHECK-NEXT: %[[R:.+]] = shard.reduce_scatter %[[Y]] on @mesh grid_axes = [0] scatter_axis = 0 : tensor<8x4xf32> -> tensor<4x4xf32>
// CHECK-NEXT: %[[M:.+]] = tg.mul %[[R]], %arg3 : tensor<4x4xf32>
// CHECK-NEXT: return %[[M]]
shard.grid @mesh(shape = 2) {tg.mesh_axes = ["dp"]}
func.func @combine(
    %x: tensor<8x4xf32> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}], priority = 1>},
    %ids: tensor<8xi64> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{"dp"}], priority = 1>},
    %w: tensor<4x4x4xf32> {tg.role = "param", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}, {}], priority = 0>},
    %weights: tensor<8x4xf32> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}], priority = 1>})
    -> (tensor<8x4xf32> {tg.role = "output", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}], priority = 1>}) {
  %y = tg.expert_matmul %x, %w[%ids] : (tensor<8x4xf32>, tensor<4x4x4xf32>, tensor<8xi64>) -> tensor<8x4xf32>
  %m = tg.mul %y, %weights : tensor<8x4xf32>
  return %m : tensor<8x4xf32>
}

// -----

// A comparison of an exclusive value is valid on the device's rows only
// (owned-only): a select of the rows reads it as it is, masked, and the
// next product needs nothing gathered. A reader of every row (the count
// of positive values) gets it rebuilt on the exclusive value all-reduced.
// CHECK-LABEL: func.func @owned_only
// CHECK: %[[H:.+]] = tg.expert_matmul {{.*}} {global_experts = 4 : i64}
// CHECK-NEXT: %[[C:.+]] = tg.compare gt, %[[H]], %{{.+}} : tensor<8x6xf32>
// CHECK-NEXT: %[[S:.+]] = tg.select %[[C]], %[[H]], %{{.+}} : tensor<8x6xi1>, tensor<8x6xf32>
// CHECK-NEXT: tg.broadcast_in_dim
// CHECK-NEXT: tg.constant dense<0.000000e+00>
// CHECK-NEXT: %[[M:.+]] = tg.select
// CHECK-NOT: shard.{{(all_reduce|reduce_scatter)}}
// CHECK: %[[Y:.+]] = tg.expert_matmul %[[M]]
// CHECK-NEXT: shard.reduce_scatter %[[Y]]
// CHECK-NEXT: %[[R:.+]] = shard.all_reduce %[[H]] on @mesh grid_axes = [0] : tensor<8x6xf32> -> tensor<8x6xf32>
// CHECK-NEXT: %[[C2:.+]] = tg.compare gt, %[[R]], %{{.+}} : tensor<8x6xf32>
// CHECK-NEXT: tg.convert %[[C2]]
shard.grid @mesh(shape = 2) {tg.mesh_axes = ["dp"]}
func.func @owned_only(
    %x: tensor<8x4xf32> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}], priority = 1>},
    %ids: tensor<8xi64> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{"dp"}], priority = 1>},
    %w1: tensor<4x4x6xf32> {tg.role = "param", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}, {}], priority = 0>},
    %w2: tensor<4x6x4xf32> {tg.role = "param", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}, {}], priority = 0>})
    -> (tensor<8x4xf32> {tg.role = "output", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}], priority = 1>},
        tensor<f32> {tg.role = "output"}) {
  %zero = tg.constant dense<0.0> : tensor<8x6xf32>
  %h = tg.expert_matmul %x, %w1[%ids] : (tensor<8x4xf32>, tensor<4x4x6xf32>, tensor<8xi64>) -> tensor<8x6xf32>
  %c = tg.compare gt, %h, %zero : tensor<8x6xf32>
  %s = tg.select %c, %h, %zero : tensor<8x6xi1>, tensor<8x6xf32>
  %y = tg.expert_matmul %s, %w2[%ids] : (tensor<8x6xf32>, tensor<4x6x4xf32>, tensor<8xi64>) -> tensor<8x4xf32>
  %f = tg.convert %c : tensor<8x6xi1> -> tensor<8x6xf32>
  %n = tg.reduce sum %f dims = [0, 1] : tensor<8x6xf32> -> tensor<f32>
  return %y, %n : tensor<8x4xf32>, tensor<f32>
}
