// RUN: tgc-opt %s --split-input-file --tg-print-sharding-rules --verify-diagnostics

// A linear layer: the batch and the output features pass through, the
// contraction is a reduction factor. A matrix rhs shares no batch factor.
func.func @matmul(%x: tensor<4x8x16xf32>, %w: tensor<16x32xf32>, %wt: tensor<32x16xf32>) -> (tensor<4x8x32xf32>, tensor<4x8x32xf32>) {
  // expected-remark @below {{sharding rule: ([i, j, l], [l, k])->([i, j, k]) {i=4, j=8, k=32, l=16} reduction={l}}}
  %0 = tg.matmul %x, %w : (tensor<4x8x16xf32>, tensor<16x32xf32>) -> tensor<4x8x32xf32>
  // expected-remark @below {{sharding rule: ([i, j, l], [k, l])->([i, j, k]) {i=4, j=8, k=32, l=16} reduction={l}}}
  %1 = tg.matmul %x, %wt transpose_b : (tensor<4x8x16xf32>, tensor<32x16xf32>) -> tensor<4x8x32xf32>
  return %0, %1 : tensor<4x8x32xf32>, tensor<4x8x32xf32>
}

// -----

// Batched matmul (attention scores): the batch dimensions are shared.
func.func @batched(%q: tensor<2x3x8x4xf32>, %k: tensor<2x3x8x4xf32>) -> tensor<2x3x8x8xf32> {
  // expected-remark @below {{sharding rule: ([i, j, k, m], [i, j, l, m])->([i, j, k, l]) {i=2, j=3, k=8, l=8, m=4} reduction={m}}}
  %0 = tg.matmul %q, %k transpose_b : (tensor<2x3x8x4xf32>, tensor<2x3x8x4xf32>) -> tensor<2x3x8x8xf32>
  return %0 : tensor<2x3x8x8xf32>
}

// -----

// Elementwise ops share one factor per dimension; a size-1 dimension has
// none.
func.func @elementwise(%a: tensor<4x1x8xf32>, %b: tensor<4x1x8xf32>) -> tensor<4x1x8xi1> {
  // expected-remark @below {{sharding rule: ([i, [], j], [i, [], j])->([i, [], j]) {i=4, j=8}}}
  %0 = tg.compare lt, %a, %b : tensor<4x1x8xf32>
  return %0 : tensor<4x1x8xi1>
}

// -----

// Reshapes split into common factors, major first: [8, 6] -> [2, 4, 6]
// shares i (2) and j (4) with the operand's first dimension.
func.func @reshape(%a: tensor<8x6xf32>, %b: tensor<6x4xf32>) -> (tensor<2x4x6xf32>, tensor<4x6xf32>) {
  // expected-remark @below {{sharding rule: ([[i, j], k])->([i, j, k]) {i=2, j=4, k=6}}}
  %0 = tg.reshape %a : tensor<8x6xf32> -> tensor<2x4x6xf32>
  // [6, 4] -> [4, 6]: the major factor 2 is common, the rest (3 and 2, then
  // 2 and 3) is not: need replication.
  // expected-remark @below {{sharding rule: ([[i, j], k])->([[i, l], m]) {i=2, j=3, k=4, l=2, m=6} need_replication={j, k, l, m}}}
  %1 = tg.reshape %b : tensor<6x4xf32> -> tensor<4x6xf32>
  return %0, %1 : tensor<2x4x6xf32>, tensor<4x6xf32>
}

// -----

// Reductions and a broadcast back (a row sum): the reduced dimension is a
// reduction factor; a broadcast dimension exists only in the result.
func.func @reduce(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-remark @below {{sharding rule: ([i, j])->([i]) {i=4, j=8} reduction={j}}}
  %0 = tg.reduce sum %a dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  // expected-remark @below {{sharding rule: ([i])->([i, j]) {i=4, j=8}}}
  %1 = tg.broadcast_in_dim %0 dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  // expected-remark @below {{sharding rule: ([j, i])->([i, j]) {i=8, j=4}}}
  %2 = tg.transpose %1 perm = [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// A softmax and a norm need replication along the normalized dimension; the
// norm's statistics keep the rows; a slice needs replication where it cuts.
func.func @norms(%x: tensor<2x4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x4x8xf32> {
  // expected-remark @below {{sharding rule: ([i, j, k])->([i, j, k]) {i=2, j=4, k=8} need_replication={k}}}
  %0 = tg.softmax %x dim = 2 : tensor<2x4x8xf32>
  // expected-remark @below {{sharding rule: ([i, j, k], [k], [k])->([i, j, k], [i, j], [i, j]) {i=2, j=4, k=8} need_replication={k}}}
  %y, %mean, %rstd = tg.layer_norm %0, %g, %b epsilon = 1.000000e-05 : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  // expected-remark @below {{sharding rule: ([i, j, l])->([i, k, l]) {i=2, j=4, k=2, l=8} need_replication={j, k}}}
  %s = tg.slice %y [0:2, 0:2, 0:8] : tensor<2x4x8xf32> -> tensor<2x2x8xf32>
  return %y : tensor<2x4x8xf32>
}

// -----

// Grouped-query attention: 4 query heads in 2 groups of 2. Query heads are
// [kv head, member], major first; keys and head widths (of the queries and keys, and of the values) need
// replication.
func.func @attention(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-remark @below {{sharding rule: ([i, [j, k], l, n], [i, j, m, n], [i, j, m, o])->([i, [j, k], l, o], [i, [j, k], l]) {i=2, j=2, k=2, l=8, m=8, n=16, o=16} need_replication={m, n, o}}}
  %o, %lse = tg.attention %q, %k, %v causal : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) -> (tensor<2x4x8x16xf32>, tensor<2x4x8xf32>)
  return %o : tensor<2x4x8x16xf32>
}

// -----

// An attention bias shares the factor of each dimension it does not
// broadcast: a padding mask [B, 1, 1, Sk] the batch and the keys, a
// position bias [1, H, Sq, Sk] the heads, queries and keys.
func.func @attention_bias(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %b: tensor<2x1x1x8xf32>, %c: tensor<1x4x8x8xf32>) -> (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) {
  // expected-remark @below {{sharding rule: ([i, [j, k], l, n], [i, j, m, n], [i, j, m, o], [i, [], [], m])->([i, [j, k], l, o], [i, [j, k], l]) {i=2, j=2, k=2, l=8, m=8, n=16, o=16} need_replication={m, n, o}}}
  %o, %l = tg.attention %q, %k, %k bias %b : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x1x1x8xf32>) -> (tensor<2x4x8x16xf32>, tensor<2x4x8xf32>)
  // expected-remark @below {{sharding rule: ([i, [j, k], l, n], [i, j, m, n], [i, j, m, o], [[], [j, k], l, m])->([i, [j, k], l, o], [i, [j, k], l]) {i=2, j=2, k=2, l=8, m=8, n=16, o=16} need_replication={m, n, o}}}
  %o2, %l2 = tg.attention %q, %k, %k bias %c causal : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<1x4x8x8xf32>) -> (tensor<2x4x8x16xf32>, tensor<2x4x8xf32>)
  return %o, %o2 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>
}

// -----

// The embedding's table rows are a reduction factor (vocab parallelism: the
// partial lookups sum); the loss reduces the tokens, and the classes
// (vocab parallelism: the partitioner combines the devices' log-sum-exps).
func.func @embedding_loss(%table: tensor<16x8xf32>, %ids: tensor<4xi64>, %logits: tensor<4x16xf32>) -> tensor<f32> {
  // expected-remark @below {{sharding rule: ([j, k], [i])->([i, k]) {i=4, j=16, k=8} reduction={j}}}
  %e = tg.embedding %table[%ids] : (tensor<16x8xf32>, tensor<4xi64>) -> tensor<4x8xf32>
  // expected-remark @below {{sharding rule: ([i, j], [i])->([], [i]) {i=4, j=16} reduction={j}}}
  %loss, %lse = tg.cross_entropy mean %logits, %ids : (tensor<4x16xf32>, tensor<4xi64>) -> (tensor<f32>, tensor<4xf32>)
  return %loss : tensor<f32>
}

// -----

// Optimizer updates: elementwise over the parameter's shape, the scalars
// have no dimension.
func.func @adamw(%p: tensor<4x8xf32>, %g: tensor<4x8xf32>, %m: tensor<4x8xf32>, %v: tensor<4x8xf32>, %lr: tensor<f32>, %t: tensor<i64>) -> tensor<4x8xf32> {
  // expected-remark @below {{sharding rule: ([i, j], [i, j], [i, j], [i, j], [], [])->([i, j], [i, j], [i, j]) {i=4, j=8}}}
  %p2, %m2, %v2 = tg.adamw %p, %g, %m, %v, %lr, %t betas = (9.000000e-01, 9.990000e-01) epsilon = 1.000000e-08 weight_decay = 0.01 : tensor<4x8xf32>, tensor<f32>, tensor<i64>
  return %p2 : tensor<4x8xf32>
}

// -----

// Top-k sees whole rows: the selected positions need replication, the rows
// pass through to both results.
func.func @top_k(%x: tensor<16x8xf32>) -> tensor<16x2xf32> {
  // expected-remark @below {{sharding rule: ([i, j])->([i, k], [i, l]) {i=16, j=8, k=2, l=2} need_replication={j, k, l}}}
  %v, %i = tg.top_k %x k = 2 : tensor<16x8xf32> -> tensor<16x2xf32>, tensor<16x2xi64>
  return %v : tensor<16x2xf32>
}

// -----

// The experts' products: the rows (tokens) pass through the product and
// are summed by its weight gradient; the contraction is summed; the
// experts are a reduction of the product (a device holding some experts
// gives zeros for the others' rows: tg-partition's expert parallelism).
func.func @experts(%x: tensor<6x8xf32>, %w: tensor<4x8x16xf32>, %wt: tensor<4x16x8xf32>, %ids: tensor<6xi64>, %dy: tensor<6x16xf32>) -> (tensor<6x16xf32>, tensor<6x16xf32>, tensor<4x8x16xf32>) {
  // expected-remark @below {{sharding rule: ([i, k], [j, k, l], [i])->([i, l]) {i=6, j=4, k=8, l=16} reduction={j, k}}}
  %0 = tg.expert_matmul %x, %w[%ids] : (tensor<6x8xf32>, tensor<4x8x16xf32>, tensor<6xi64>) -> tensor<6x16xf32>
  // expected-remark @below {{sharding rule: ([i, k], [j, l, k], [i])->([i, l]) {i=6, j=4, k=8, l=16} reduction={j, k}}}
  %1 = tg.expert_matmul %x, %wt[%ids] transpose_b : (tensor<6x8xf32>, tensor<4x16x8xf32>, tensor<6xi64>) -> tensor<6x16xf32>
  // expected-remark @below {{sharding rule: ([i, k], [i, l], [i])->([j, k, l]) {i=6, j=4, k=8, l=16} reduction={i}}}
  %2 = tg.expert_matmul_grad %x, %dy[%ids] : (tensor<6x8xf32>, tensor<6x16xf32>, tensor<6xi64>) -> tensor<4x8x16xf32>
  return %0, %1, %2 : tensor<6x16xf32>, tensor<6x16xf32>, tensor<4x8x16xf32>
}
