// A vocabulary tp does not divide: tg-shard-annotate pads it (Megatron's
// padded vocabulary). The tiny language model of 8 classes on tp=3 has 9:
// a zero row in the table, a zero column in the head, their gradients and
// Adam moments alike; the logits' ninth class is masked to the lowest f32
// before the loss and its gradient; the lookup and the loss keep the bound
// of their ids. The model's numerics: test/tgc/vocab-parallel.test.

// RUN: tgc compile %S/../tgc/Inputs/vocab-parallel-ignore.mlir --train --no-fuse --no-schedule --no-memory-plan -o %t.step.mlir
// RUN: tgc-opt %t.step.mlir --tg-shard-annotate='mesh=tp=3' --mlir-print-op-on-diagnostic=false 2>%t.remarks | FileCheck %s
// RUN: FileCheck %s --check-prefix=REMARK < %t.remarks
// RUN: tgc-opt %t.step.mlir --tg-shard-annotate='mesh=tp=2' 2>&1 | FileCheck %s --check-prefix=EVEN

// REMARK: remark: tp=3: the 8 classes are padded to 9 (1 zero rows or columns in 'head.weight', 'embed.weight') so that tp splits the vocabulary; the loss masks the padding out

// CHECK-LABEL: func.func @lm(
// CHECK-SAME: %arg2: tensor<9x8xf32> {tg.name = "embed.weight", tg.role = "param", tg.sharding = #tg.sharding<@mesh, [{"tp"}, {}], priority = 2>, tg.unpadded_shape = array<i64: 8, 8>}
// CHECK-SAME: %arg3: tensor<8x9xf32> {tg.name = "head.weight", tg.role = "param", tg.sharding = #tg.sharding<@mesh, [{}, {"tp"}], priority = 2>, tg.unpadded_shape = array<i64: 8, 8>}
// CHECK-SAME: tensor<9x8xf32> {tg.aliases = 2 : i64, tg.name = "embed.weight", tg.role = "param", tg.unpadded_shape = array<i64: 8, 8>}
// CHECK-NOT: tg.slice
// CHECK: tg.embedding %arg2[%arg0] {tg.id_bound = 8 : i64, tg.vocab_parallel} : (tensor<9x8xf32>, tensor<4x4xi64>) -> tensor<4x4x8xf32>
// CHECK: %[[LOGITS:.*]] = tg.matmul %{{.*}}, %arg3 : (tensor<4x4x8xf32>, tensor<8x9xf32>) -> tensor<4x4x9xf32>
// CHECK: %[[MASK:.*]] = tg.constant dense<[0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, -3.40282347E+38]> : tensor<9xf32>
// CHECK: %[[BROADCAST:.*]] = tg.broadcast_in_dim %[[MASK]] dims = [2] : tensor<9xf32> -> tensor<4x4x9xf32>
// CHECK: %[[MASKED:.*]] = tg.add %[[LOGITS]], %[[BROADCAST]] : tensor<4x4x9xf32>
// CHECK: tg.cross_entropy sum %[[MASKED]], %arg1 ignore_index = 3 {tg.id_bound = 8 : i64}
// CHECK: tg.cross_entropy_grad sum %{{.*}}, %[[MASKED]], %arg1, %{{.*}} ignore_index = 3 {tg.id_bound = 8 : i64} : {{.*}} -> tensor<4x4x9xf32>
// CHECK: %[[HEAD:.*]] = tg.matmul {{.*}} transpose_a : (tensor<16x8xf32>, tensor<16x9xf32>) -> tensor<8x9xf32>
// CHECK: %[[TABLE:.*]] = tg.embedding_grad {{.*}} -> tensor<9x8xf32>
// CHECK: tg.adamw %arg2, %[[TABLE]], {{.*}} : tensor<9x8xf32>
// CHECK: tg.adamw %arg3, %[[HEAD]], {{.*}} : tensor<8x9xf32>
// CHECK-NOT: tg.slice
// CHECK: return

// tp=2 divides 8: nothing is padded.
// EVEN-NOT: padded
// EVEN-NOT: tg.unpadded_shape
// EVEN: tensor<8x8xf32>
