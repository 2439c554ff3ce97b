// A layer width tp does not divide: tg-shard-annotate pads it
// (docs/sharding.md, "Padded heads and widths"). LLaMA's SwiGLU MLP of
// width 40 on tp=3 is 42: 2 zero columns in the gate and up projections, 2
// zero rows in the down projection, their Adam moments alike; silu(0) * 0
// is 0, so the padding stays zero and nothing cuts it back to 40. Its 2
// heads are padded to 3 too. The numerics: test/tgc/tp-padding.test.

// RUN: tgc-zoo llama --layers 1 --hidden 16 --heads 2 --kv-heads 2 --intermediate 40 --seq 4 --batch 2 --vocab 12 -o %t.mlir
// RUN: tgc-opt %t.mlir --pass-pipeline='builtin.module(func.func(tg-split-fused-projections),tg-autodiff,tg-optimizer{kind=adamw},canonicalize,cse,tg-shard-annotate{mesh=tp=3})' --mlir-print-op-on-diagnostic=false 2>%t.remarks | FileCheck %s
// RUN: FileCheck %s --check-prefix=REMARK < %t.remarks

// REMARK: remark: tp=3: the 2 heads of 1 attention are padded to 3 with 1 zero head (8 more columns or rows in 'model.layers.0.self_attn.q_proj.weight', 'model.layers.0.self_attn.k_proj.weight'
// REMARK: remark: tp=3: the width 40 of 1 column-parallel layer is padded to 42: 2 zero columns in the weights and biases, as many zero rows in the row-parallel partners' ('model.layers.0.mlp.gate_proj.weight', 'model.layers.0.mlp.up_proj.weight', 'model.layers.0.mlp.down_proj.weight')
// REMARK-NOT: whole

// CHECK-LABEL: func.func @llama(
// CHECK-SAME: %arg7: tensor<16x42xf32> {tg.name = "model.layers.0.mlp.gate_proj.weight", tg.role = "param", tg.sharding = #tg.sharding<@mesh, [{}, {"tp"}], priority = 2>, tg.unpadded_shape = array<i64: 16, 40>}
// CHECK-SAME: %arg8: tensor<16x42xf32> {tg.name = "model.layers.0.mlp.up_proj.weight", tg.role = "param", tg.sharding = #tg.sharding<@mesh, [{}, {"tp"}], priority = 2>, tg.unpadded_shape = array<i64: 16, 40>}
// CHECK-SAME: %arg9: tensor<42x16xf32> {tg.name = "model.layers.0.mlp.down_proj.weight", tg.role = "param", tg.sharding = #tg.sharding<@mesh, [{"tp"}, {}], priority = 2>, tg.unpadded_shape = array<i64: 40, 16>}
// CHECK-NOT: x40xf32>
// CHECK: %[[GATE:.*]] = tg.matmul %{{.*}}, %arg7 : (tensor<2x4x16xf32>, tensor<16x42xf32>) -> tensor<2x4x42xf32>
// CHECK: %[[SILU:.*]] = tg.silu %[[GATE]] : tensor<2x4x42xf32>
// CHECK: %[[UP:.*]] = tg.matmul %{{.*}}, %arg8 : (tensor<2x4x16xf32>, tensor<16x42xf32>) -> tensor<2x4x42xf32>
// CHECK: %[[HIDDEN:.*]] = tg.mul %[[SILU]], %[[UP]] : tensor<2x4x42xf32>
// CHECK: tg.matmul %[[HIDDEN]], %arg9 : (tensor<2x4x42xf32>, tensor<42x16xf32>) -> tensor<2x4x16xf32>
// CHECK: tg.adamw %arg7, {{.*}} : tensor<16x42xf32>
// CHECK: tg.adamw %arg9, {{.*}} : tensor<42x16xf32>
// CHECK-NOT: x40xf32>
// CHECK: return
