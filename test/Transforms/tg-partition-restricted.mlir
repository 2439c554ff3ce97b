// RUN: tgc-opt %s --split-input-file --tg-shard-propagate --tg-partition | FileCheck %s

// The ops whose per-device computation would need the device's position
// restrict their rule for tg-partition (ShardingRuleOpInterface's
// restrictForPartitioning, next to each rule in TGSharding.cpp): the
// factors they cannot split are need-replication for propagation, and
// tg-partition gathers them before the op.

// A dropout mask is a function of the global element index. Split on its
// first dimension, a device's block is contiguous in the whole tensor: the
// dropout draws from the index of the block's first element (a table of
// the blocks' offsets cut by all_slice). Split on another dimension
// (sequence parallelism's), the block's rows lie apart in the whole
// tensor: the dropout also gets the whole tensor's shape. Nothing is
// gathered before it.
// CHECK-LABEL: func.func @dropout
// CHECK-NOT: shard.all_gather
// CHECK: %[[TABLE:.+]] = tg.constant dense<[0, 16]> : tensor<2xi64>
// CHECK-NEXT: %[[MINE:.+]] = shard.all_slice %[[TABLE]] on @mesh grid_axes = [0] slice_axis = 0 : tensor<2xi64> -> tensor<1xi64>
// CHECK-NEXT: %[[OFFSET:.+]] = tg.reshape %[[MINE]] : tensor<1xi64> -> tensor<i64>
// CHECK-NEXT: tg.dropout %arg0, %arg1 offset %[[OFFSET]] rate = 1.000000e-01 stream = 0 : tensor<4x4xf32>, tensor<i64>, tensor<i64>
// CHECK-LABEL: func.func @dropout_columns
// CHECK-NOT: shard.all_gather
// CHECK: %[[TABLE:.+]] = tg.constant dense<[0, 2]> : tensor<2xi64>
// CHECK-NEXT: %[[MINE:.+]] = shard.all_slice %[[TABLE]]
// CHECK-NEXT: %[[OFFSET:.+]] = tg.reshape %[[MINE]] : tensor<1xi64> -> tensor<i64>
// CHECK-NEXT: %[[Y:.+]] = tg.dropout %arg0, %arg1 offset %[[OFFSET]] rate = 1.000000e-01 stream = 0 of [8, 4] : tensor<8x2xf32>, tensor<i64>, tensor<i64>
// CHECK-NEXT: shard.all_gather %[[Y]]
// A micro-batch's dropout (an offset already) split on both dimensions:
// the offsets add up (the column blocks' 0, 2, 4 or 6 over y, the row
// blocks' 0 or 4 rows of 8 over x).
// CHECK-LABEL: func.func @dropout_offset_2d
// CHECK-NOT: shard.all_gather
// CHECK: tg.constant dense<[0, 2, 4, 6]>
// CHECK-NEXT: shard.all_slice {{.*}} grid_axes = [1]
// CHECK-NEXT: %[[COLUMNS:.+]] = tg.reshape
// CHECK-NEXT: %[[A:.+]] = tg.add %arg2, %[[COLUMNS]] : tensor<i64>
// CHECK-NEXT: tg.constant dense<[0, 32]>
// CHECK-NEXT: shard.all_slice {{.*}} grid_axes = [0]
// CHECK-NEXT: %[[ROWS:.+]] = tg.reshape
// CHECK-NEXT: %[[B:.+]] = tg.add %[[A]], %[[ROWS]] : tensor<i64>
// CHECK-NEXT: tg.dropout %arg0, %arg1 offset %[[B]] rate = 1.000000e-01 stream = 0 of [8, 8] : tensor<4x2xf32>
shard.grid @mesh(shape = 2) {tg.mesh_axes = ["x"]}
func.func @dropout(
    %x: tensor<8x4xf32> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{"x"}, {}], priority = 1>},
    %seed: tensor<i64> {tg.role = "hyper"})
    -> (tensor<8x4xf32> {tg.role = "output"}) {
  %y = tg.dropout %x, %seed rate = 1.000000e-01 stream = 0 : tensor<8x4xf32>, tensor<i64>
  return %y : tensor<8x4xf32>
}
func.func @dropout_columns(
    %x: tensor<8x4xf32> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{}, {"x"}], priority = 1>},
    %seed: tensor<i64> {tg.role = "hyper"})
    -> (tensor<8x4xf32> {tg.role = "output"}) {
  %y = tg.dropout %x, %seed rate = 1.000000e-01 stream = 0 : tensor<8x4xf32>, tensor<i64>
  return %y : tensor<8x4xf32>
}

// -----

shard.grid @mesh(shape = 2x4) {tg.mesh_axes = ["x", "y"]}
func.func @dropout_offset_2d(
    %x: tensor<8x8xf32> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{"x"}, {"y"}], priority = 1>},
    %seed: tensor<i64> {tg.role = "hyper"},
    %offset: tensor<i64> {tg.role = "hyper"})
    -> (tensor<8x8xf32> {tg.role = "output", tg.sharding = #tg.sharding<@mesh, [{"x"}, {"y"}], priority = 1>}) {
  %y = tg.dropout %x, %seed offset %offset rate = 1.000000e-01 stream = 0 : tensor<8x8xf32>, tensor<i64>, tensor<i64>
  return %y : tensor<8x8xf32>
}

// -----

// Random numbers are the same function of the global index (tg.random
// reads no operand: its layout comes from its user). Added to a
// column-split input, each device draws its columns of the whole tensor's
// numbers: an offset and the global shape, nothing gathered.
// CHECK-LABEL: func.func @random_columns
// CHECK-NOT: shard.all_gather
// CHECK: %[[TABLE:.+]] = tg.constant dense<[0, 2]> : tensor<2xi64>
// CHECK-NEXT: %[[MINE:.+]] = shard.all_slice %[[TABLE]]
// CHECK-NEXT: %[[OFFSET:.+]] = tg.reshape %[[MINE]] : tensor<1xi64> -> tensor<i64>
// CHECK-NEXT: %[[N:.+]] = tg.random normal %arg1 offset %[[OFFSET]] stream = 2 of [8, 4] : tensor<i64>, tensor<i64> -> tensor<8x2xf32>
// CHECK-NEXT: tg.add %arg0, %[[N]] : tensor<8x2xf32>
shard.grid @mesh(shape = 2) {tg.mesh_axes = ["x"]}
func.func @random_columns(
    %x: tensor<8x4xf32> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{}, {"x"}], priority = 1>},
    %seed: tensor<i64> {tg.role = "hyper"})
    -> (tensor<8x4xf32> {tg.role = "output", tg.sharding = #tg.sharding<@mesh, [{}, {"x"}], priority = 1>}) {
  %n = tg.random normal %seed stream = 2 : tensor<i64> -> tensor<8x4xf32>
  %y = tg.add %x, %n : tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

// A causal mask compares global positions: the query sequence is gathered.
// Without the mask the queries stay split.
// CHECK-LABEL: func.func @causal
// CHECK: %[[Q:.+]] = shard.all_gather %arg0 on @mesh grid_axes = [0] gather_axis = 2 : tensor<2x2x4x4xf32> -> tensor<2x2x8x4xf32>
// CHECK-NEXT: tg.attention %[[Q]], %arg1, %arg1 causal : (tensor<2x2x8x4xf32>
// CHECK-LABEL: func.func @not_causal
// CHECK-NOT: shard.all_gather
// CHECK: tg.attention %arg0, %arg1, %arg1 : (tensor<2x2x4x4xf32>, tensor<2x2x8x4xf32>, tensor<2x2x8x4xf32>) -> (tensor<2x2x4x4xf32>, tensor<2x2x4xf32>)
shard.grid @mesh(shape = 2) {tg.mesh_axes = ["x"]}
func.func @causal(
    %q: tensor<2x2x8x4xf32> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{}, {}, {"x"}, {}], priority = 1>},
    %k: tensor<2x2x8x4xf32> {tg.role = "input"})
    -> (tensor<2x2x8x4xf32> {tg.role = "output"}) {
  %o, %l = tg.attention %q, %k, %k causal : (tensor<2x2x8x4xf32>, tensor<2x2x8x4xf32>, tensor<2x2x8x4xf32>) -> (tensor<2x2x8x4xf32>, tensor<2x2x8xf32>)
  return %o : tensor<2x2x8x4xf32>
}
func.func @not_causal(
    %q: tensor<2x2x8x4xf32> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{}, {}, {"x"}, {}], priority = 1>},
    %k: tensor<2x2x8x4xf32> {tg.role = "input"})
    -> (tensor<2x2x8x4xf32> {tg.role = "output"}) {
  %o, %l = tg.attention %q, %k, %k : (tensor<2x2x8x4xf32>, tensor<2x2x8x4xf32>, tensor<2x2x8x4xf32>) -> (tensor<2x2x8x4xf32>, tensor<2x2x8xf32>)
  return %o : tensor<2x2x8x4xf32>
}

// -----

// A table split on its rows is gathered for a lookup not marked
// tg.vocab_parallel (tg-partition.mlir's @vocab_embedding is the marked
// one).
// CHECK-LABEL: func.func @table
// CHECK: %[[T:.+]] = shard.all_gather %arg0 on @mesh grid_axes = [0] gather_axis = 0 : tensor<4x4xf32> -> tensor<8x4xf32>
// CHECK-NEXT: tg.embedding %[[T]][%arg1]
shard.grid @mesh(shape = 2) {tg.mesh_axes = ["x"]}
func.func @table(
    %t: tensor<8x4xf32> {tg.role = "param", tg.sharding = #tg.sharding<@mesh, [{"x"}, {}], priority = 1>},
    %ids: tensor<4xi64> {tg.role = "input"})
    -> (tensor<4x4xf32> {tg.role = "output"}) {
  %e = tg.embedding %t[%ids] : (tensor<8x4xf32>, tensor<4xi64>) -> tensor<4x4xf32>
  return %e : tensor<4x4xf32>
}

// -----

// A mean over the tokens not ignored needs the whole batch's count: written
// this way (tg-shard-annotate rewrites it as a sum over a count before
// partitioning, tg-shard-annotate-ignored-mean.mlir), the tokens are
// gathered.
// CHECK-LABEL: func.func @ignored_mean
// CHECK: %[[LOGITS:.+]] = shard.all_gather %arg0 on @mesh grid_axes = [0] gather_axis = 0 : tensor<2x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT: %[[LABELS:.+]] = shard.all_gather %arg1 on @mesh grid_axes = [0] gather_axis = 0 : tensor<2xi64> -> tensor<4xi64>
// CHECK-NEXT: tg.cross_entropy mean %[[LOGITS]], %[[LABELS]] ignore_index = 3
shard.grid @mesh(shape = 2) {tg.mesh_axes = ["x"]}
func.func @ignored_mean(
    %logits: tensor<4x8xf32> {tg.role = "input", tg.sharding = #tg.sharding<@mesh, [{"x"}, {}], priority = 1>},
    %labels: tensor<4xi64> {tg.role = "label", tg.sharding = #tg.sharding<@mesh, [{"x"}], priority = 1>})
    -> (tensor<f32> {tg.role = "loss"}) {
  %loss, %lse = tg.cross_entropy mean %logits, %labels ignore_index = 3 : (tensor<4x8xf32>, tensor<4xi64>) -> (tensor<f32>, tensor<4xf32>)
  return %loss : tensor<f32>
}
