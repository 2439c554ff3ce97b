// Heads tp does not divide: tg-shard-annotate pads them (docs/sharding.md,
// "Padded heads and widths"). GPT-2 with 3 heads of 8 on tp=2 has 4: 8 zero columns
// at the end of each of the query, key and value blocks of the fused
// projection (viewed [24, 3, 24] by tg-split-fused-projections) and of its
// bias, 8 zero rows at the end of the output projection, their Adam moments
// alike. The padding flows through the reshapes to heads, the attention and
// its gradient, the gradients' pads back into the fused weight and the
// updates; nothing cuts it back to 3 heads. The numerics:
// test/tgc/tp-padding.test.

// RUN: tgc-zoo gpt2 --layers 1 --hidden 24 --heads 3 --seq 4 --batch 2 --vocab 16 --positions 8 -o %t.mlir
// RUN: tgc-opt %t.mlir --pass-pipeline='builtin.module(func.func(tg-split-fused-projections),tg-autodiff,tg-optimizer{kind=adamw},canonicalize,cse,tg-shard-annotate{mesh=tp=2})' --mlir-print-op-on-diagnostic=false 2>%t.remarks | FileCheck %s
// RUN: FileCheck %s --check-prefix=REMARK < %t.remarks

// REMARK: remark: tp=2: the 3 heads of 1 attention are padded to 4 with 1 zero head (8 more columns or rows in 'h.0.attn.c_attn.bias', 'h.0.attn.c_attn.weight', 'h.0.attn.c_proj.weight') so that tp splits them; the padded heads stay zero
// REMARK-NOT: keeps

// CHECK-LABEL: func.func @gpt2(
// CHECK-SAME: %arg6: tensor<24x3x32xf32> {tg.name = "h.0.attn.c_attn.weight", tg.role = "param", tg.sharding = #tg.sharding<@mesh, [{}, {}, {"tp"}], priority = 2>, tg.unpadded_shape = array<i64: 24, 3, 24>}
// CHECK-SAME: %arg7: tensor<3x32xf32> {tg.name = "h.0.attn.c_attn.bias", tg.role = "param", tg.sharding = #tg.sharding<@mesh, [{}, {"tp"}], priority = 2>, tg.unpadded_shape = array<i64: 3, 24>}
// CHECK-SAME: %arg8: tensor<32x24xf32> {tg.name = "h.0.attn.c_proj.weight", tg.role = "param", tg.sharding = #tg.sharding<@mesh, [{"tp"}, {}], priority = 2>, tg.unpadded_shape = array<i64: 24, 24>}
// CHECK-SAME: %arg26: tensor<24x3x32xf32> {tg.name = "h.0.attn.c_attn.weight.exp_avg", tg.role = "state"
// CHECK-SAME: tg.unpadded_shape = array<i64: 24, 3, 24>
// CHECK-SAME: tensor<24x3x32xf32> {tg.aliases = 6 : i64, tg.name = "h.0.attn.c_attn.weight", tg.role = "param", tg.unpadded_shape = array<i64: 24, 3, 24>}
// CHECK-NOT: tensor<2x4x3x8xf32>
// CHECK-NOT: tensor<2x3x4x8xf32>
// CHECK: %[[Q:.*]] = tg.slice %arg6 [0:24, 0:1, 0:32] : tensor<24x3x32xf32> -> tensor<24x1x32xf32>
// CHECK: tg.reshape %{{.*}} : tensor<2x4x32xf32> -> tensor<2x4x4x8xf32>
// CHECK: tg.attention {{.*}} : (tensor<2x4x4x8xf32>, tensor<2x4x4x8xf32>, tensor<2x4x4x8xf32>) -> (tensor<2x4x4x8xf32>, tensor<2x4x4xf32>)
// CHECK: tg.matmul %{{.*}}, %arg8 : (tensor<2x4x32xf32>, tensor<32x24xf32>) -> tensor<2x4x24xf32>
// CHECK: tg.attention_grad {{.*}} -> (tensor<2x4x4x8xf32>, tensor<2x4x4x8xf32>, tensor<2x4x4x8xf32>)
// CHECK: tg.pad %{{.*}} low = [0, 2, 0] high = [0, 0, 0] interior = [0, 0, 0] : tensor<24x1x32xf32> -> tensor<24x3x32xf32>
// CHECK: tg.adamw %arg6, {{.*}} : tensor<24x3x32xf32>
// CHECK: tg.adamw %arg7, {{.*}} : tensor<3x32xf32>
// CHECK: tg.adamw %arg8, {{.*}} : tensor<32x24xf32>
// CHECK-NOT: tensor<2x4x3x8xf32>
// CHECK: return

// A user's sharding of one of the parameters: not padded, the layers whole.
// RUN: tgc compile %t.mlir --train --mesh tp=2 --shard 'h.0.attn.c_proj.weight=,' -o %t.user.mlir 2>&1 | FileCheck %s --check-prefix=USER
// USER: remark: tp=2 does not divide the 3 heads, and they cannot be padded (the user gave the sharding of 'h.0.attn.c_attn.bias', 'h.0.attn.c_attn.weight', 'h.0.attn.c_proj.weight')
// USER: remark: tp=2 keeps 1 weight it would split column-parallel whole

// Grouped-query attention whose 3 kv heads tp=4 does not divide: its keys
// and values are repeated to one per query head (the kv projections whole,
// Megatron's replicated kv heads), the 6 query heads then padded to 8; the
// kv gradients sum the repeats with a product by the heads' groups.
// RUN: tgc-zoo llama --preset tiny --heads 6 --kv-heads 3 --hidden 48 --seq 8 --batch 2 -o %t.gqa.mlir
// RUN: tgc-opt %t.gqa.mlir --pass-pipeline='builtin.module(func.func(tg-split-fused-projections),tg-autodiff,tg-optimizer{kind=adamw},canonicalize,cse,tg-shard-annotate{mesh=tp=4})' --mlir-print-op-on-diagnostic=false 2>%t.gqa.remarks | FileCheck %s --check-prefix=GQA
// RUN: FileCheck %s --check-prefix=GQA-REMARK < %t.gqa.remarks
// GQA-REMARK: remark: tp=4 does not divide the 3 kv heads (of 2 query heads each): the keys and values are repeated to one per query head, each device's share computed from the whole kv projections (Megatron's replicated kv heads) (1 more attention alike)
// GQA-REMARK: remark: tp=4: the 6 heads of 2 attentions are padded to 8 with 2 zero heads
// GQA-REMARK-NOT: whole
// GQA-LABEL: func.func @llama(
// GQA-SAME: %arg3: tensor<48x64xf32> {tg.name = "model.layers.0.self_attn.q_proj.weight", tg.role = "param", tg.sharding = #tg.sharding<@mesh, [{}, {"tp"}], priority = 2>, tg.unpadded_shape = array<i64: 48, 48>}
// GQA-SAME: %arg4: tensor<48x24xf32> {tg.name = "model.layers.0.self_attn.k_proj.weight", tg.role = "param", tg.sharding = #tg.sharding<@mesh, [{}, {}], priority = 2>}
// GQA: %[[K:.*]] = tg.broadcast_in_dim %{{.*}} dims = [0, 1, 3, 4] : tensor<2x3x8x8xf32> -> tensor<2x3x2x8x8xf32>
// GQA: %[[KFULL:.*]] = tg.reshape %[[K]] : tensor<2x3x2x8x8xf32> -> tensor<2x6x8x8xf32>
// GQA: %[[KPAD:.*]] = tg.pad %[[KFULL]] low = [0, 0, 0, 0] high = [0, 2, 0, 0] interior = [0, 0, 0, 0] : tensor<2x6x8x8xf32> -> tensor<2x8x8x8xf32>
// GQA: tg.attention %{{.*}}, %[[KPAD]], %{{.*}} causal {{.*}} : (tensor<2x8x8x8xf32>, tensor<2x8x8x8xf32>, tensor<2x8x8x8xf32>)
// GQA: %[[GROUPS:.*]] = tg.constant dense<{{\[\[}}1.000000e+00, 0.000000e+00, 0.000000e+00], [1.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 1.000000e+00, 0.000000e+00]
// GQA: %[[DK:.*]] = tg.transpose %grad_key perm = [0, 2, 3, 1] : tensor<2x8x8x8xf32> -> tensor<2x8x8x8xf32>
// GQA: %[[PADDED:.*]] = tg.pad %[[GROUPS]] low = [0, 0] high = [2, 0] interior = [0, 0] : tensor<6x3xf32> -> tensor<8x3xf32>
// GQA: tg.matmul %[[DK]], %[[PADDED]] : (tensor<2x8x8x8xf32>, tensor<8x3xf32>) -> tensor<2x8x8x3xf32>

// tp=2 divides 4 heads: nothing is padded.
// RUN: tgc-zoo gpt2 --layers 1 --hidden 32 --heads 4 --seq 4 --batch 2 --vocab 16 --positions 8 -o %t.even.mlir
// RUN: tgc compile %t.even.mlir --train --mesh tp=2 -o %t.even.tp.mlir 2>&1 | FileCheck %s --check-prefix=EVEN --allow-empty
// EVEN-NOT: padded
