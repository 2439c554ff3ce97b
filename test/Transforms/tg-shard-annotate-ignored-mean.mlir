// A mean cross-entropy with an ignore_index divides by the tokens that are
// not ignored, a count only the whole batch knows (PyTorch exports every
// loss with ignore_index = -100). Under a mesh, tg-shard-annotate rewrites
// the loss and its gradient as the sum and that count, made once for both,
// so that data parallelism keeps the tokens split instead of gathering the
// logits; tg-partition then reduces the sum and the count as partial sums.
// The model's numerics: test/tgc/vocab-parallel.test.

// RUN: tgc compile %S/../tgc/Inputs/vocab-parallel-ignore.mlir --train --no-fuse --no-schedule --no-memory-plan -o %t.step.mlir
// RUN: tgc-opt %t.step.mlir --tg-shard-annotate='mesh=dp=2' | FileCheck %s
// RUN: tgc-opt %t.step.mlir --tg-shard-annotate='mesh=dp=2' --tg-shard-propagate --tg-partition | FileCheck %s --check-prefix=PARTITION

// CHECK-LABEL: func.func @lm(
// CHECK: %[[IGNORED:.+]] = tg.constant dense<3> : tensor<4x4xi64>
// CHECK-NEXT: %[[KEPT:.+]] = tg.compare ne, %arg1, %[[IGNORED]] : tensor<4x4xi64>
// CHECK-NEXT: %[[ONES:.+]] = tg.convert %[[KEPT]] : tensor<4x4xi1> -> tensor<4x4xf32>
// CHECK-NEXT: %[[COUNT:.+]] = tg.reduce sum %[[ONES]] dims = [0, 1] : tensor<4x4xf32> -> tensor<f32>
// CHECK-NEXT: %[[SUM:.+]], %[[LSE:.+]] = tg.cross_entropy sum %{{.+}}, %arg1 ignore_index = 3
// CHECK-NEXT: %[[LOSS:.+]] = tg.div %[[SUM]], %[[COUNT]] : tensor<f32>
// CHECK-NEXT: %[[WEIGHT:.+]] = tg.div %{{.+}}, %[[COUNT]] : tensor<f32>
// CHECK-NEXT: tg.cross_entropy_grad sum %[[WEIGHT]], %{{.+}}, %arg1, %[[LSE]] ignore_index = 3
// CHECK-NOT: mean
// CHECK: return %[[LOSS]],

// Each device's tokens stay its own: the logits are never gathered; the
// sum and the count are all-reduced once each, and the gradient reads the
// global count.
// PARTITION-NOT: shard.all_gather
// PARTITION: %[[COUNT:.+]] = tg.reduce sum %{{.+}} dims = [0, 1] : tensor<2x4xf32> -> tensor<f32>
// PARTITION-NEXT: %[[SUM:.+]], %{{.+}} = tg.cross_entropy sum %{{.+}}, %arg1 ignore_index = 3 : (tensor<2x4x8xf32>, tensor<2x4xi64>)
// PARTITION-NEXT: %[[TOTAL:.+]] = shard.all_reduce %[[SUM]] on @mesh grid_axes = [0] : tensor<f32> -> tensor<f32>
// PARTITION-NEXT: %[[GLOBAL:.+]] = shard.all_reduce %[[COUNT]] on @mesh grid_axes = [0] : tensor<f32> -> tensor<f32>
// PARTITION-NEXT: tg.div %[[TOTAL]], %[[GLOBAL]] : tensor<f32>
// PARTITION-NEXT: %[[WEIGHT:.+]] = tg.div %{{.+}}, %[[GLOBAL]] : tensor<f32>
// PARTITION-NEXT: tg.cross_entropy_grad sum %[[WEIGHT]], {{.*}} : (tensor<f32>, tensor<2x4x8xf32>, tensor<2x4xi64>, tensor<2x4xf32>) -> tensor<2x4x8xf32>
// PARTITION-NOT: shard.all_gather
