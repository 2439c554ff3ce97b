// RUN: tgc-opt %s --split-input-file --tg-shard-propagate --tg-partition | FileCheck %s
// RUN: tgc-opt %s --split-input-file --tg-shard-propagate --tg-partition=explain=true --mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN

// Data parallelism: the weight gradient of a batch-split matmul is a partial
// sum, all-reduced where the (replicated) result is returned.
// CHECK-LABEL: func.func @weight_grad
// CHECK-SAME: tensor<4x4xf32>
// CHECK: %[[G:.+]] = tg.matmul %arg0, %arg1 transpose_a {{.*}}-> tensor<4x3xf32>
// CHECK-NEXT: %[[R:.+]] = shard.all_reduce %[[G]] on @mesh grid_axes = [0] : tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK-NEXT: return %[[R]]
shard.grid @mesh(shape = 2) {tg.mesh_axes = ["dp"]}
func.func @weight_grad(
    %x: tensor<8x4xf32> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}], priority = 1>},
    %dy: tensor<8x3xf32> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}], priority = 1>})
    -> (tensor<4x3xf32> {tg.role = "output"}) {
  %g = tg.matmul %x, %dy transpose_a : (tensor<8x4xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  return %g : tensor<4x3xf32>
}

// -----

// ZeRO-2: the gradient feeds an update split over dp: one reduce-scatter;
// the parameter is sliced locally and the new value stored split, as the
// argument is.
// CHECK-LABEL: func.func @zero2
// CHECK: %[[G:.+]] = tg.matmul
// CHECK-NEXT: %[[RS:.+]] = shard.reduce_scatter %[[G]] on @mesh grid_axes = [0] scatter_axis = 0 : tensor<4x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT: %[[W:.+]] = shard.all_slice %arg2 on @mesh grid_axes = [0] slice_axis = 0 : tensor<4x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT: %[[NW:.+]], %[[NM:.+]] = tg.sgd %[[W]], %[[RS]], %arg4, %arg3 {{.*}}: tensor<2x4xf32>
// CHECK-NEXT: %[[AG:.+]] = shard.all_gather %[[NW]] on @mesh grid_axes = [0] gather_axis = 0 : tensor<2x4xf32> -> tensor<4x4xf32>
// CHECK-NEXT: return %[[AG]], %[[NM]]
shard.grid @mesh(shape = 2) {tg.mesh_axes = ["dp"]}
func.func @zero2(
    %x: tensor<8x4xf32> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}], priority = 1>},
    %dy: tensor<8x4xf32> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}], priority = 1>},
    %w: tensor<4x4xf32> {tg.role = "param", tg.name = "w", tg.sharding = #tg.sharding<@mesh, [{}, {}], priority = 1>},
    %m: tensor<4x4xf32> {tg.role = "state", tg.name = "w.m", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}], priority = 3>},
    %lr: tensor<f32> {tg.role = "hyper", tg.name = "lr"})
    -> (tensor<4x4xf32> {tg.role = "param", tg.name = "w", tg.aliases = 2},
        tensor<4x4xf32> {tg.role = "state", tg.name = "w.m", tg.aliases = 3}) {
  %g = tg.matmul %x, %dy transpose_a : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %nw, %nm = tg.sgd %w, %g, %lr, %m momentum = 9.000000e-01 weight_decay = 0.0 : tensor<4x4xf32>, tensor<f32>, tensor<4x4xf32>
  return %nw, %nm : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// Partial sums travel through an addition: one all-reduce for two
// gradient contributions.
// CHECK-LABEL: func.func @carried
// CHECK-NOT: shard.all
// CHECK: %[[S:.+]] = tg.add
// CHECK-NEXT: shard.all_reduce %[[S]]
// CHECK-NOT: shard.all
shard.grid @mesh(shape = 2) {tg.mesh_axes = ["dp"]}
func.func @carried(
    %x: tensor<8x4xf32> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}], priority = 1>},
    %dy: tensor<8x4xf32> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}], priority = 1>})
    -> (tensor<4x4xf32> {tg.role = "output"}) {
  %a = tg.matmul %x, %dy transpose_a : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %b = tg.matmul %dy, %x transpose_a : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %s = tg.add %a, %b : tensor<4x4xf32>
  return %s : tensor<4x4xf32>
}

// -----

// Megatron's MLP on tp=2: the column-parallel layer splits the hidden
// activation, the row-parallel layer leaves partial sums: one all-reduce.
// CHECK-LABEL: func.func @megatron
// CHECK: tg.matmul %arg0, %arg1 {{.*}}-> tensor<8x16xf32>
// CHECK: tg.gelu {{.*}}: tensor<8x16xf32>
// CHECK: %[[O:.+]] = tg.matmul {{.*}}: (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
// CHECK-NEXT: %[[R:.+]] = shard.all_reduce %[[O]] on @mesh grid_axes = [0]
// CHECK-NEXT: tg.add %[[R]], %arg0
// CHECK-NOT: shard.all
shard.grid @mesh(shape = 2) {tg.mesh_axes = ["tp"]}
func.func @megatron(
    %x: tensor<8x16xf32> {tg.role = "input"},
    %w1: tensor<16x32xf32> {tg.role = "param", tg.name = "w1", tg.sharding = #tg.sharding<@mesh, [{}, {"tp"}], priority = 2>},
    %w2: tensor<32x16xf32> {tg.role = "param", tg.name = "w2", tg.sharding = #tg.sharding<@mesh, [{"tp"}, {}], priority = 2>})
    -> (tensor<8x16xf32> {tg.role = "output"}) {
  %h = tg.matmul %x, %w1 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %a = tg.gelu tanh %h : tensor<8x32xf32>
  %o = tg.matmul %a, %w2 : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  %r = tg.add %o, %x : tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// -----

// A mean loss over split tokens is an average of the devices' means; its
// gradient is scaled by the device's share of the tokens. A slice keeps the
// split dimension it does not cut, at its local size.
// CHECK-LABEL: func.func @loss
// CHECK: %[[L:.+]], %[[LSE:.+]] = tg.cross_entropy mean %arg0, %arg1 : (tensor<4x6xf32>, tensor<4xi64>)
// CHECK: %[[HALF:.+]] = tg.constant dense<5.000000e-01> : tensor<f32>
// CHECK: %[[S:.+]] = tg.mul %arg2, %[[HALF]]
// CHECK: tg.cross_entropy_grad mean %[[S]], %arg0, %arg1, %[[LSE]]
// CHECK: tg.slice %{{.+}} [0:4, 0:4] : tensor<4x6xf32> -> tensor<4x4xf32>
// CHECK: shard.all_reduce %[[L]] on @mesh grid_axes = [0] reduction = average
// CHECK: shard.all_gather %{{.+}} on @mesh grid_axes = [0] gather_axis = 0 : tensor<4x4xf32> -> tensor<8x4xf32>
shard.grid @mesh(shape = 2) {tg.mesh_axes = ["dp"]}
func.func @loss(
    %logits: tensor<8x6xf32> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}], priority = 1>},
    %labels: tensor<8xi64> {tg.role = "label", tg.sharding = #tg.sharding<@mesh, [{"dp"}], priority = 1>},
    %seed: tensor<f32> {tg.role = "hyper"})
    -> (tensor<f32> {tg.role = "loss"}, tensor<8x4xf32> {tg.role = "output"}) {
  %l, %lse = tg.cross_entropy mean %logits, %labels : (tensor<8x6xf32>, tensor<8xi64>) -> (tensor<f32>, tensor<8xf32>)
  %g = tg.cross_entropy_grad mean %seed, %logits, %labels, %lse : (tensor<f32>, tensor<8x6xf32>, tensor<8xi64>, tensor<8xf32>) -> tensor<8x6xf32>
  %s = tg.slice %g [0:8, 0:4] : tensor<8x6xf32> -> tensor<8x4xf32>
  return %l, %s : tensor<f32>, tensor<8x4xf32>
}

// EXPLAIN: tg-partition.mlir:17:3: remark: all_reduce of result #0 of tg.matmul [{}, {}] for func.return: result #0 is stored as [{}, {}]; partial result (48 bytes per device, 4.00 us over nvlink)
// EXPLAIN: tg-partition.mlir:41:8: remark: reduce_scatter of result #0 of tg.matmul [{}, {}] for tg.matmul: its users read it as [{"dp"}, {}]; partial result reduced and split in one step (32 bytes per device, 2.00 us over nvlink)
// EXPLAIN: tg-partition.mlir:42:14: remark: all_slice of argument 'w' [{}, {}] for tg.sgd: operand #0 needs layout [{"dp"}, {}] (0 bytes per device, 0.00 us over nvlink)
// EXPLAIN: tg-partition.mlir:43:3: remark: all_gather of result #0 of tg.sgd [{"dp"}, {}] for func.return: result #0 is stored as [{}, {}] (32 bytes per device, 2.00 us over nvlink)
// EXPLAIN: tg-partition.mlir:63:3: remark: all_reduce of result #0 of tg.add [{}, {}] for func.return
// EXPLAIN: tg-partition.mlir:86:8: remark: all_reduce of result #0 of tg.matmul [{}, {}] for tg.add: operand #0 needs layout [{}, {}]; partial result (512 bytes per device, 4.00 us over nvlink)
// EXPLAIN: tg-partition.mlir:112:3: remark: all_reduce of result #0 of tg.cross_entropy [] for func.return

// -----

// Sequence parallelism's backward: two row-split partial sums (LLaMA's
// gradients through gate and up) meet in an addition whose result is split
// on the sequence: they are added partial and reduce-scattered once.
// CHECK-LABEL: func.func @partial_sum_scattered
// CHECK: %[[A:.+]] = tg.matmul %arg0, %arg1 transpose_b {{.*}}-> tensor<8x16xf32>
// CHECK-NOT: shard.
// CHECK: %[[B:.+]] = tg.matmul %arg0, %arg2 transpose_b {{.*}}-> tensor<8x16xf32>
// CHECK-NEXT: %[[S:.+]] = tg.add %[[A]], %[[B]] : tensor<8x16xf32>
// CHECK-NEXT: %[[RS:.+]] = shard.reduce_scatter %[[S]] on @mesh grid_axes = [0] scatter_axis = 0 : tensor<8x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT: %[[M:.+]] = tg.mul %[[RS]], %arg3 : tensor<4x16xf32>
// CHECK-NEXT: shard.all_gather %[[M]]
// CHECK-NEXT: return
shard.grid @mesh(shape = 2) {tg.mesh_axes = ["tp"]}
func.func @partial_sum_scattered(
    %dh: tensor<8x32xf32> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{}, {"tp"}], priority = 2>},
    %w1: tensor<16x32xf32> {tg.role = "param", tg.name = "w1", tg.sharding = #tg.sharding<@mesh, [{}, {"tp"}], priority = 2>},
    %w2: tensor<16x32xf32> {tg.role = "param", tg.name = "w2", tg.sharding = #tg.sharding<@mesh, [{}, {"tp"}], priority = 2>},
    %r: tensor<8x16xf32> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{"tp"}, {}], priority = 3>})
    -> (tensor<8x16xf32> {tg.role = "output"}) {
  %a = tg.matmul %dh, %w1 transpose_b : (tensor<8x32xf32>, tensor<16x32xf32>) -> tensor<8x16xf32>
  %b = tg.matmul %dh, %w2 transpose_b : (tensor<8x32xf32>, tensor<16x32xf32>) -> tensor<8x16xf32>
  %s = tg.add %a, %b : tensor<8x16xf32>
  %m = tg.mul %s, %r : tensor<8x16xf32>
  return %m : tensor<8x16xf32>
}
// EXPLAIN: tg-partition.mlir:146:8: remark: reduce_scatter of result #0 of tg.add [{}, {}] for tg.add: its users read it as [{"tp"}, {}]; partial result reduced and split in one step

// -----

// A vocabulary-parallel lookup (the table split on its rows over tp): the
// ids are shifted by the device's block offset (a table of offsets cut by
// all_slice), ids outside the block look up row 0 and are masked to zero,
// and the partial lookups are all-reduced where the whole result is read.
// CHECK-LABEL: func.func @vocab_embedding
// CHECK-SAME: %arg0: tensor<2x4xf32>
// CHECK: %[[OFFSETS:.+]] = tg.constant dense<[0, 2]> : tensor<2xi64>
// CHECK: %[[MINE:.+]] = shard.all_slice %[[OFFSETS]] on @mesh grid_axes = [0] slice_axis = 0 : tensor<2xi64> -> tensor<1xi64>
// CHECK: %[[OFFSET:.+]] = tg.reshape %[[MINE]] : tensor<1xi64> -> tensor<i64>
// CHECK: %[[WIDE:.+]] = tg.broadcast_in_dim %[[OFFSET]] dims = [] : tensor<i64> -> tensor<3xi64>
// CHECK: %[[LOCAL:.+]] = tg.sub %arg1, %[[WIDE]] {tg.id_bound = 4 : i64} : tensor<3xi64>
// CHECK: %[[ROWS:.+]] = tg.embedding %arg0[%{{.+}}] : (tensor<2x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
// CHECK: %[[MASKED:.+]] = tg.select %{{.+}}, %[[ROWS]], %{{.+}} : tensor<3x4xi1>, tensor<3x4xf32>
// CHECK: %[[SUM:.+]] = shard.all_reduce %[[MASKED]] on @mesh grid_axes = [0] : tensor<3x4xf32> -> tensor<3x4xf32>
// CHECK: return %[[SUM]]
// EXPLAIN: remark: tg.embedding is vocabulary-parallel: rebuilt on each device's block of the dimension split [{"tp"}]
shard.grid @mesh(shape = 2) {tg.mesh_axes = ["tp"]}
func.func @vocab_embedding(
    %table: tensor<4x4xf32> {tg.role = "param", tg.name = "table", tg.sharding = #tg.sharding<@mesh, [{"tp"}, {}], priority = 2>},
    %ids: tensor<3xi64> {tg.role = "input"})
    -> (tensor<3x4xf32> {tg.role = "output"}) {
  %e = tg.embedding %table[%ids] {tg.vocab_parallel} : (tensor<4x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  return %e : tensor<3x4xf32>
}

// -----

// Without tg.vocab_parallel the table is gathered before the lookup.
// CHECK-LABEL: func.func @whole_embedding
// CHECK: %[[T:.+]] = shard.all_gather %arg0 on @mesh grid_axes = [0] gather_axis = 0 : tensor<2x4xf32> -> tensor<4x4xf32>
// CHECK-NEXT: tg.embedding %[[T]][%arg1]
shard.grid @mesh(shape = 2) {tg.mesh_axes = ["tp"]}
func.func @whole_embedding(
    %table: tensor<4x4xf32> {tg.role = "param", tg.name = "table", tg.sharding = #tg.sharding<@mesh, [{"tp"}, {}], priority = 2>},
    %ids: tensor<3xi64> {tg.role = "input"})
    -> (tensor<3x4xf32> {tg.role = "output"}) {
  %e = tg.embedding %table[%ids] : (tensor<4x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  return %e : tensor<3x4xf32>
}

// -----

// A vocabulary-parallel loss (the logits split on their classes): the op
// on the device's classes, with the tokens whose label another device holds
// ignored (-1); the log-sum-exps combined by an all-reduce max and an
// all-reduce sum; the target logits by one all-reduced scalar. The loss's
// log-sum-exp result is whole.
// CHECK-LABEL: func.func @vocab_loss
// CHECK: tg.sub %arg1, %{{.+}} {tg.id_bound = 8 : i64} : tensor<4xi64>
// CHECK: %[[LOSS:.+]], %[[LSE:.+]] = tg.cross_entropy sum %arg0, %{{.+}} ignore_index = -1 : (tensor<4x4xf32>, tensor<4xi64>) -> (tensor<f32>, tensor<4xf32>)
// CHECK: %[[MAX:.+]] = shard.all_reduce %[[LSE]] on @mesh grid_axes = [0] reduction = max : tensor<4xf32> -> tensor<4xf32>
// CHECK: %[[EXP:.+]] = tg.exp
// CHECK: %[[SUM:.+]] = shard.all_reduce %[[EXP]] on @mesh grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
// CHECK: %[[LOG:.+]] = tg.log %[[SUM]]
// CHECK: tg.add %[[MAX]], %[[LOG]] : tensor<4xf32>
// CHECK: shard.all_reduce %{{.+}} on @mesh grid_axes = [0] : tensor<f32> -> tensor<f32>
// CHECK: tg.div
// CHECK: return
// EXPLAIN: remark: tg.cross_entropy is vocabulary-parallel: rebuilt on each device's block of the dimension split [{"tp"}]
// EXPLAIN: remark: all_reduce max of 'tensor<4xf32>' for the vocabulary-parallel tg.cross_entropy
shard.grid @mesh(shape = 2) {tg.mesh_axes = ["tp"]}
func.func @vocab_loss(
    %logits: tensor<4x8xf32> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{}, {"tp"}], priority = 2>},
    %labels: tensor<4xi64> {tg.role = "label"})
    -> (tensor<f32> {tg.role = "loss"}, tensor<4xf32> {tg.role = "output"}) {
  %loss, %lse = tg.cross_entropy mean %logits, %labels : (tensor<4x8xf32>, tensor<4xi64>) -> (tensor<f32>, tensor<4xf32>)
  return %loss, %lse : tensor<f32>, tensor<4xf32>
}

// -----

// The gradient of a vocabulary-parallel loss whose logits are an argument
// (still of its global type while tg-partition runs): the op on the
// device's classes plus the softmax of the tokens another device holds, on
// the local [4, 4] block; the result is gathered where it is returned
// whole.
// CHECK-LABEL: func.func @vocab_loss_grad
// CHECK-SAME: %arg0: tensor<4x4xf32>
// CHECK: %[[ONBLOCK:.+]] = tg.cross_entropy_grad sum %{{.+}}, %arg0, %{{.+}}, %{{.+}} ignore_index = -1 : (tensor<f32>, tensor<4x4xf32>, tensor<4xi64>, tensor<4xf32>) -> tensor<4x4xf32>
// CHECK: %[[SHIFTED:.+]] = tg.sub %arg0, %{{.+}} : tensor<4x4xf32>
// CHECK: tg.exp %[[SHIFTED]] : tensor<4x4xf32>
// CHECK: %[[GRAD:.+]] = tg.add %[[ONBLOCK]], %{{.+}} : tensor<4x4xf32>
// CHECK: %[[WHOLE:.+]] = shard.all_gather %[[GRAD]] on @mesh grid_axes = [0] gather_axis = 1 : tensor<4x4xf32> -> tensor<4x8xf32>
// CHECK: return %[[WHOLE]]
shard.grid @mesh(shape = 2) {tg.mesh_axes = ["tp"]}
func.func @vocab_loss_grad(
    %logits: tensor<4x8xf32> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{}, {"tp"}], priority = 2>},
    %labels: tensor<4xi64> {tg.role = "label"},
    %g: tensor<f32> {tg.role = "input"})
    -> (tensor<4x8xf32> {tg.role = "output"}) {
  %loss, %lse = tg.cross_entropy mean %logits, %labels : (tensor<4x8xf32>, tensor<4xi64>) -> (tensor<f32>, tensor<4xf32>)
  %d = tg.cross_entropy_grad mean %g, %logits, %labels, %lse : (tensor<f32>, tensor<4x8xf32>, tensor<4xi64>, tensor<4xf32>) -> tensor<4x8xf32>
  return %d : tensor<4x8xf32>
}

// -----

// Axes that move from one dimension to another: an all_to_all, not a
// gather and a slice. The user's row split of %a wins the add; %b, split
// on its columns, is exchanged into rows.
// CHECK-LABEL: func.func @all_to_all
// CHECK-SAME: %arg1: tensor<8x2xf32>
// CHECK: %[[E:.+]] = shard.all_to_all %arg1 on @mesh grid_axes = [0] split_axis = 0 concat_axis = 1 : tensor<8x2xf32> -> tensor<4x4xf32>
// CHECK-NEXT: tg.add %arg0, %[[E]] : tensor<4x4xf32>
// CHECK-NOT: all_slice
shard.grid @mesh(shape = 2) {tg.mesh_axes = ["x"]}
func.func @all_to_all(
    %a: tensor<8x4xf32> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{"x"}, {}], priority = 0>},
    %b: tensor<8x4xf32> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{}, {"x"}], priority = 1>})
    -> (tensor<8x4xf32> {tg.role = "output"}) {
  %c = tg.add %a, %b : tensor<8x4xf32>
  return %c : tensor<8x4xf32>
}

// -----

// On two axes: the inner axis moves and joins the axes the other dimension
// keeps, as its innermost ([{"dp", "tp"}, {}] to [{"dp"}, {"tp"}]); then
// one that moves behind the other dimension's kept axis ([{"dp"}, {"tp"}]
// to [{}, {"tp", "dp"}]).
// CHECK-LABEL: func.func @all_to_all_inner
// CHECK: %[[E:.+]] = shard.all_to_all %arg1 on @mesh grid_axes = [1] split_axis = 1 concat_axis = 0 : tensor<2x8xf32> -> tensor<4x4xf32>
// CHECK-NEXT: tg.add %arg0, %[[E]] : tensor<4x4xf32>
// CHECK-LABEL: func.func @all_to_all_behind
// CHECK: %[[E:.+]] = shard.all_to_all %arg1 on @mesh grid_axes = [0] split_axis = 1 concat_axis = 0 : tensor<4x4xf32> -> tensor<8x2xf32>
// CHECK-NEXT: tg.add %arg0, %[[E]] : tensor<8x2xf32>
shard.grid @mesh(shape = 2x2) {tg.mesh_axes = ["dp", "tp"]}
func.func @all_to_all_inner(
    %a: tensor<8x8xf32> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {"tp"}], priority = 0>},
    %b: tensor<8x8xf32> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{"dp", "tp"}, {}], priority = 1>})
    -> (tensor<8x8xf32> {tg.role = "output"}) {
  %c = tg.add %a, %b : tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}
func.func @all_to_all_behind(
    %a: tensor<8x8xf32> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{}, {"tp", "dp"}], priority = 0>},
    %b: tensor<8x8xf32> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {"tp"}], priority = 1>})
    -> (tensor<8x8xf32> {tg.role = "output"}) {
  %c = tg.add %a, %b : tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}

// -----

// Two axes that trade dimensions cannot both move at once (an axis never
// splits two dimensions): one is gathered, the other moves, then the first
// is sliced back in.
// CHECK-LABEL: func.func @all_to_all_swap
// CHECK: %[[G:.+]] = shard.all_gather %arg1 on @mesh grid_axes = [0] gather_axis = 0 : tensor<4x4xf32> -> tensor<8x4xf32>
// CHECK-NEXT: %[[E:.+]] = shard.all_to_all %[[G]] on @mesh grid_axes = [1] split_axis = 0 concat_axis = 1 : tensor<8x4xf32> -> tensor<4x8xf32>
// CHECK-NEXT: %[[S:.+]] = shard.all_slice %[[E]] on @mesh grid_axes = [0] slice_axis = 1 : tensor<4x8xf32> -> tensor<4x4xf32>
// CHECK-NEXT: tg.add %arg0, %[[S]] : tensor<4x4xf32>
shard.grid @mesh(shape = 2x2) {tg.mesh_axes = ["dp", "tp"]}
func.func @all_to_all_swap(
    %a: tensor<8x8xf32> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{"tp"}, {"dp"}], priority = 0>},
    %b: tensor<8x8xf32> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {"tp"}], priority = 1>})
    -> (tensor<8x8xf32> {tg.role = "output"}) {
  %c = tg.add %a, %b : tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}

// -----

// Two micro-batches' bf16 gradients, each unscaled (fp16's loss scale) and
// summed in f32: the partial sums go through the conversions and the
// scaling, and the f32 sum is all-reduced once; the scale is broadcast
// again on each device. A conversion read by something other than a sum
// is reduced before it, in bf16.
// CHECK-LABEL: func.func @accumulated
// CHECK-NOT: shard.all
// CHECK: tg.convert
// CHECK-NEXT: %[[B:.+]] = tg.broadcast_in_dim %arg3
// CHECK-NEXT: tg.mul %{{.+}}, %[[B]] : tensor<4x4xf32>
// CHECK-NOT: shard.all
// CHECK: %[[S:.+]] = tg.add {{.*}} : tensor<4x4xf32>
// CHECK-NEXT: %[[G:.+]] = tg.matmul {{.*}} -> tensor<4x4xbf16>
// CHECK-NEXT: %[[R:.+]] = shard.all_reduce %[[G]] {{.*}} : tensor<4x4xbf16> -> tensor<4x4xbf16>
// CHECK-NEXT: %[[C:.+]] = tg.convert %[[R]]
// CHECK-NEXT: %[[RS:.+]] = shard.all_reduce %[[S]] {{.*}} : tensor<4x4xf32> -> tensor<4x4xf32>
// CHECK-NEXT: return %[[RS]], %[[C]]
shard.grid @mesh(shape = 2) {tg.mesh_axes = ["dp"]}
func.func @accumulated(
    %x0: tensor<8x4xbf16> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}], priority = 1>},
    %x1: tensor<8x4xbf16> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}], priority = 1>},
    %dy: tensor<8x4xbf16> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}], priority = 1>},
    %scale: tensor<f32> {tg.role = "state", tg.name = "scale"})
    -> (tensor<4x4xf32> {tg.role = "output"}, tensor<4x4xf32> {tg.role = "output"}) {
  %s = tg.broadcast_in_dim %scale dims = [] : tensor<f32> -> tensor<4x4xf32>
  %g0 = tg.matmul %x0, %dy transpose_a : (tensor<8x4xbf16>, tensor<8x4xbf16>) -> tensor<4x4xbf16>
  %c0 = tg.convert %g0 : tensor<4x4xbf16> -> tensor<4x4xf32>
  %u0 = tg.mul %c0, %s : tensor<4x4xf32>
  %g1 = tg.matmul %x1, %dy transpose_a : (tensor<8x4xbf16>, tensor<8x4xbf16>) -> tensor<4x4xbf16>
  %c1 = tg.convert %g1 : tensor<4x4xbf16> -> tensor<4x4xf32>
  %u1 = tg.mul %c1, %s : tensor<4x4xf32>
  %sum = tg.add %u0, %u1 : tensor<4x4xf32>
  %g2 = tg.matmul %x0, %x1 transpose_a : (tensor<8x4xbf16>, tensor<8x4xbf16>) -> tensor<4x4xbf16>
  %c2 = tg.convert %g2 : tensor<4x4xbf16> -> tensor<4x4xf32>
  return %sum, %c2 : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// The same sum wanted split over dp (ZeRO-2's gradient): each micro-batch's
// bf16 gradient is reduce-scattered before its conversion, so each device
// accumulates only its block.
// CHECK-LABEL: func.func @accumulated_scattered
// CHECK: %[[G0:.+]] = tg.matmul {{.*}} -> tensor<4x4xbf16>
// CHECK-NEXT: %[[R0:.+]] = shard.reduce_scatter %[[G0]] {{.*}} : tensor<4x4xbf16> -> tensor<2x4xbf16>
// CHECK-NEXT: tg.convert %[[R0]] : tensor<2x4xbf16> -> tensor<2x4xf32>
// CHECK: %[[G1:.+]] = tg.matmul {{.*}} -> tensor<4x4xbf16>
// CHECK-NEXT: %[[R1:.+]] = shard.reduce_scatter %[[G1]] {{.*}} : tensor<4x4xbf16> -> tensor<2x4xbf16>
// CHECK-NEXT: tg.convert %[[R1]] : tensor<2x4xbf16> -> tensor<2x4xf32>
// CHECK: %[[S:.+]] = tg.add {{.*}} : tensor<2x4xf32>
// CHECK-NEXT: return %[[S]]
shard.grid @mesh(shape = 2) {tg.mesh_axes = ["dp"]}
func.func @accumulated_scattered(
    %x0: tensor<8x4xbf16> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}], priority = 1>},
    %x1: tensor<8x4xbf16> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}], priority = 1>},
    %dy: tensor<8x4xbf16> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}], priority = 1>})
    -> (tensor<4x4xf32> {tg.role = "output", tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}], priority = 3>}) {
  %g0 = tg.matmul %x0, %dy transpose_a : (tensor<8x4xbf16>, tensor<8x4xbf16>) -> tensor<4x4xbf16>
  %c0 = tg.convert %g0 : tensor<4x4xbf16> -> tensor<4x4xf32>
  %g1 = tg.matmul %x1, %dy transpose_a : (tensor<8x4xbf16>, tensor<8x4xbf16>) -> tensor<4x4xbf16>
  %c1 = tg.convert %g1 : tensor<4x4xbf16> -> tensor<4x4xf32>
  %sum = tg.add %c0, %c1 : tensor<4x4xf32>
  return %sum : tensor<4x4xf32>
}
