// RUN: tgc-opt %s --split-input-file | tgc-opt --split-input-file | FileCheck %s
// RUN: tgc-opt %s --split-input-file --mlir-print-op-generic | tgc-opt --split-input-file | FileCheck %s

// A linear layer: a rank-2 rhs is shared by every batch of the lhs.
// CHECK-LABEL: func.func @matmul_shared_rhs
// CHECK-SAME:    (%[[X:[^:]+]]: tensor<8x128x768xbf16>, %[[W:[^:]+]]: tensor<768x3072xbf16>)
// CHECK:         %[[R:.+]] = tg.matmul %[[X]], %[[W]] : (tensor<8x128x768xbf16>, tensor<768x3072xbf16>) -> tensor<8x128x3072xbf16>
// CHECK:         return %[[R]]
func.func @matmul_shared_rhs(%x: tensor<8x128x768xbf16>, %w: tensor<768x3072xbf16>) -> tensor<8x128x3072xbf16> {
  %0 = tg.matmul %x, %w : (tensor<8x128x768xbf16>, tensor<768x3072xbf16>) -> tensor<8x128x3072xbf16>
  return %0 : tensor<8x128x3072xbf16>
}

// -----

// Equal batch dimensions with transpose_b: the scores q @ k^T of attention.
// CHECK-LABEL: func.func @matmul_batched_transpose_b
// CHECK-SAME:    (%[[Q:[^:]+]]: tensor<8x12x128x64xf32>, %[[K:[^:]+]]: tensor<8x12x128x64xf32>)
// CHECK:         %[[R:.+]] = tg.matmul %[[Q]], %[[K]] transpose_b : (tensor<8x12x128x64xf32>, tensor<8x12x128x64xf32>) -> tensor<8x12x128x128xf32>
// CHECK:         return %[[R]]
func.func @matmul_batched_transpose_b(%q: tensor<8x12x128x64xf32>, %k: tensor<8x12x128x64xf32>) -> tensor<8x12x128x128xf32> {
  %0 = tg.matmul %q, %k transpose_b : (tensor<8x12x128x64xf32>, tensor<8x12x128x64xf32>) -> tensor<8x12x128x128xf32>
  return %0 : tensor<8x12x128x128xf32>
}

// -----

// transpose_a contracts over the second-to-last dimension of the lhs (a weight gradient).
// CHECK-LABEL: func.func @matmul_transpose_a
// CHECK-SAME:    (%[[X:[^:]+]]: tensor<1024x768xf32>, %[[DY:[^:]+]]: tensor<1024x3072xf32>)
// CHECK:         %[[R:.+]] = tg.matmul %[[X]], %[[DY]] transpose_a : (tensor<1024x768xf32>, tensor<1024x3072xf32>) -> tensor<768x3072xf32>
// CHECK:         return %[[R]]
func.func @matmul_transpose_a(%x: tensor<1024x768xf32>, %dy: tensor<1024x3072xf32>) -> tensor<768x3072xf32> {
  %0 = tg.matmul %x, %dy transpose_a : (tensor<1024x768xf32>, tensor<1024x3072xf32>) -> tensor<768x3072xf32>
  return %0 : tensor<768x3072xf32>
}

// -----

// Both transposes together print in the order transpose_a, transpose_b.
// CHECK-LABEL: func.func @matmul_transpose_both
// CHECK-SAME:    (%[[A:[^:]+]]: tensor<2x16x4xf16>, %[[B:[^:]+]]: tensor<2x8x16xf16>)
// CHECK:         %[[R:.+]] = tg.matmul %[[A]], %[[B]] transpose_a transpose_b : (tensor<2x16x4xf16>, tensor<2x8x16xf16>) -> tensor<2x4x8xf16>
// CHECK:         return %[[R]]
func.func @matmul_transpose_both(%a: tensor<2x16x4xf16>, %b: tensor<2x8x16xf16>) -> tensor<2x4x8xf16> {
  %0 = tg.matmul %a, %b transpose_a transpose_b : (tensor<2x16x4xf16>, tensor<2x8x16xf16>) -> tensor<2x4x8xf16>
  return %0 : tensor<2x4x8xf16>
}

// -----

// bf16 operands with an f32 result: the accumulation is not rounded to bf16.
// CHECK-LABEL: func.func @matmul_mixed_result_type
// CHECK-SAME:    (%[[A:[^:]+]]: tensor<64x128xbf16>, %[[B:[^:]+]]: tensor<128x32xbf16>)
// CHECK:         %[[R:.+]] = tg.matmul %[[A]], %[[B]] : (tensor<64x128xbf16>, tensor<128x32xbf16>) -> tensor<64x32xf32>
// CHECK:         return %[[R]]
func.func @matmul_mixed_result_type(%a: tensor<64x128xbf16>, %b: tensor<128x32xbf16>) -> tensor<64x32xf32> {
  %0 = tg.matmul %a, %b : (tensor<64x128xbf16>, tensor<128x32xbf16>) -> tensor<64x32xf32>
  return %0 : tensor<64x32xf32>
}

// -----

// An embedding lookup with i64 ids appends the row size to the ids' shape.
// CHECK-LABEL: func.func @embedding_i64_ids
// CHECK-SAME:    (%[[T:[^:]+]]: tensor<50257x768xf32>, %[[IDS:[^:]+]]: tensor<8x128xi64>)
// CHECK:         %[[R:.+]] = tg.embedding %[[T]][%[[IDS]]] : (tensor<50257x768xf32>, tensor<8x128xi64>) -> tensor<8x128x768xf32>
// CHECK:         return %[[R]]
func.func @embedding_i64_ids(%wte: tensor<50257x768xf32>, %ids: tensor<8x128xi64>) -> tensor<8x128x768xf32> {
  %0 = tg.embedding %wte[%ids] : (tensor<50257x768xf32>, tensor<8x128xi64>) -> tensor<8x128x768xf32>
  return %0 : tensor<8x128x768xf32>
}

// -----

// PyTorch's padding_idx: an attribute of the lookup (its gradient skips the
// row).
// CHECK-LABEL: func.func @embedding_padding_idx
// CHECK:         tg.embedding %{{.*}}[%{{.*}}] {padding_idx = 1 : i64} : (tensor<10x4xf32>, tensor<8xi64>) -> tensor<8x4xf32>
func.func @embedding_padding_idx(%t: tensor<10x4xf32>, %ids: tensor<8xi64>) -> tensor<8x4xf32> {
  %0 = tg.embedding %t[%ids] {padding_idx = 1 : i64} : (tensor<10x4xf32>, tensor<8xi64>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// An embedding lookup with i32 ids from a bf16 table.
// CHECK-LABEL: func.func @embedding_i32_ids
// CHECK-SAME:    (%[[T:[^:]+]]: tensor<1024x64xbf16>, %[[IDS:[^:]+]]: tensor<16xi32>)
// CHECK:         %[[R:.+]] = tg.embedding %[[T]][%[[IDS]]] : (tensor<1024x64xbf16>, tensor<16xi32>) -> tensor<16x64xbf16>
// CHECK:         return %[[R]]
func.func @embedding_i32_ids(%wpe: tensor<1024x64xbf16>, %pos: tensor<16xi32>) -> tensor<16x64xbf16> {
  %0 = tg.embedding %wpe[%pos] : (tensor<1024x64xbf16>, tensor<16xi32>) -> tensor<16x64xbf16>
  return %0 : tensor<16x64xbf16>
}

// -----

// softmax along a middle dimension.
// CHECK-LABEL: func.func @softmax_middle_dim
// CHECK-SAME:    (%[[X:[^:]+]]: tensor<4x10x6xf32>)
// CHECK:         %[[R:.+]] = tg.softmax %[[X]] dim = 1 : tensor<4x10x6xf32>
// CHECK:         return %[[R]]
func.func @softmax_middle_dim(%x: tensor<4x10x6xf32>) -> tensor<4x10x6xf32> {
  %0 = tg.softmax %x dim = 1 : tensor<4x10x6xf32>
  return %0 : tensor<4x10x6xf32>
}

// -----

// log_softmax along a middle dimension of a bf16 tensor.
// CHECK-LABEL: func.func @log_softmax_middle_dim
// CHECK-SAME:    (%[[X:[^:]+]]: tensor<4x10x6xbf16>)
// CHECK:         %[[R:.+]] = tg.log_softmax %[[X]] dim = 1 : tensor<4x10x6xbf16>
// CHECK:         return %[[R]]
func.func @log_softmax_middle_dim(%x: tensor<4x10x6xbf16>) -> tensor<4x10x6xbf16> {
  %0 = tg.log_softmax %x dim = 1 : tensor<4x10x6xbf16>
  return %0 : tensor<4x10x6xbf16>
}

// -----

// layer_norm of a bf16 input with f32 scale and bias; the statistics are f32.
// CHECK-LABEL: func.func @layer_norm_f32_scale_bf16_input
// CHECK-SAME:    (%[[X:[^:]+]]: tensor<8x128x768xbf16>, %[[G:[^:]+]]: tensor<768xf32>, %[[B:[^:]+]]: tensor<768xf32>)
// CHECK:         %[[Y:.+]], %[[MEAN:.+]], %[[RSTD:.+]] = tg.layer_norm %[[X]], %[[G]], %[[B]] epsilon = 1.000000e-05 : (tensor<8x128x768xbf16>, tensor<768xf32>, tensor<768xf32>) -> (tensor<8x128x768xbf16>, tensor<8x128xf32>, tensor<8x128xf32>)
// CHECK:         return %[[Y]], %[[MEAN]], %[[RSTD]]
func.func @layer_norm_f32_scale_bf16_input(%x: tensor<8x128x768xbf16>, %g: tensor<768xf32>, %b: tensor<768xf32>) -> (tensor<8x128x768xbf16>, tensor<8x128xf32>, tensor<8x128xf32>) {
  %y, %mean, %rstd = tg.layer_norm %x, %g, %b epsilon = 1.000000e-05 : (tensor<8x128x768xbf16>, tensor<768xf32>, tensor<768xf32>) -> (tensor<8x128x768xbf16>, tensor<8x128xf32>, tensor<8x128xf32>)
  return %y, %mean, %rstd : tensor<8x128x768xbf16>, tensor<8x128xf32>, tensor<8x128xf32>
}

// -----

// rms_norm has one statistic, rstd.
// CHECK-LABEL: func.func @rms_norm
// CHECK-SAME:    (%[[X:[^:]+]]: tensor<2x64x256xf32>, %[[G:[^:]+]]: tensor<256xf32>)
// CHECK:         %[[Y:.+]], %[[RSTD:.+]] = tg.rms_norm %[[X]], %[[G]] epsilon = 1.000000e-05 : (tensor<2x64x256xf32>, tensor<256xf32>) -> (tensor<2x64x256xf32>, tensor<2x64xf32>)
// CHECK:         return %[[Y]], %[[RSTD]]
func.func @rms_norm(%x: tensor<2x64x256xf32>, %g: tensor<256xf32>) -> (tensor<2x64x256xf32>, tensor<2x64xf32>) {
  %y, %rstd = tg.rms_norm %x, %g epsilon = 1.000000e-05 : (tensor<2x64x256xf32>, tensor<256xf32>) -> (tensor<2x64x256xf32>, tensor<2x64xf32>)
  return %y, %rstd : tensor<2x64x256xf32>, tensor<2x64xf32>
}

// -----

// Attention without causal or scale prints neither keyword.
// CHECK-LABEL: func.func @attention_default
// CHECK-SAME:    (%[[Q:[^:]+]]: tensor<8x12x128x64xbf16>, %[[K:[^:]+]]: tensor<8x12x128x64xbf16>, %[[V:[^:]+]]: tensor<8x12x128x64xbf16>)
// CHECK:         %[[O:.+]], %[[LSE:.+]] = tg.attention %[[Q]], %[[K]], %[[V]] : (tensor<8x12x128x64xbf16>, tensor<8x12x128x64xbf16>, tensor<8x12x128x64xbf16>) -> (tensor<8x12x128x64xbf16>, tensor<8x12x128xf32>)
// CHECK:         return %[[O]], %[[LSE]]
func.func @attention_default(%q: tensor<8x12x128x64xbf16>, %k: tensor<8x12x128x64xbf16>, %v: tensor<8x12x128x64xbf16>) -> (tensor<8x12x128x64xbf16>, tensor<8x12x128xf32>) {
  %o, %lse = tg.attention %q, %k, %v : (tensor<8x12x128x64xbf16>, tensor<8x12x128x64xbf16>, tensor<8x12x128x64xbf16>) -> (tensor<8x12x128x64xbf16>, tensor<8x12x128xf32>)
  return %o, %lse : tensor<8x12x128x64xbf16>, tensor<8x12x128xf32>
}

// -----

// Causal attention with an explicit scale.
// CHECK-LABEL: func.func @attention_causal_scale
// CHECK-SAME:    (%[[Q:[^:]+]]: tensor<8x12x128x64xbf16>, %[[K:[^:]+]]: tensor<8x12x128x64xbf16>, %[[V:[^:]+]]: tensor<8x12x128x64xbf16>)
// CHECK:         %[[O:.+]], %[[LSE:.+]] = tg.attention %[[Q]], %[[K]], %[[V]] causal scale = 1.250000e-01 : (tensor<8x12x128x64xbf16>, tensor<8x12x128x64xbf16>, tensor<8x12x128x64xbf16>) -> (tensor<8x12x128x64xbf16>, tensor<8x12x128xf32>)
// CHECK:         return %[[O]], %[[LSE]]
func.func @attention_causal_scale(%q: tensor<8x12x128x64xbf16>, %k: tensor<8x12x128x64xbf16>, %v: tensor<8x12x128x64xbf16>) -> (tensor<8x12x128x64xbf16>, tensor<8x12x128xf32>) {
  %o, %lse = tg.attention %q, %k, %v causal scale = 1.250000e-01 : (tensor<8x12x128x64xbf16>, tensor<8x12x128x64xbf16>, tensor<8x12x128x64xbf16>) -> (tensor<8x12x128x64xbf16>, tensor<8x12x128xf32>)
  return %o, %lse : tensor<8x12x128x64xbf16>, tensor<8x12x128xf32>
}

// -----

// A scale without causal.
// CHECK-LABEL: func.func @attention_scale_only
// CHECK:         tg.attention %{{.+}}, %{{.+}}, %{{.+}} scale = 5.000000e-01 : (tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>) -> (tensor<1x1x4x16xf32>, tensor<1x1x4xf32>)
func.func @attention_scale_only(%q: tensor<1x1x4x16xf32>) -> (tensor<1x1x4x16xf32>, tensor<1x1x4xf32>) {
  %o, %lse = tg.attention %q, %q, %q scale = 5.000000e-01 : (tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>) -> (tensor<1x1x4x16xf32>, tensor<1x1x4xf32>)
  return %o, %lse : tensor<1x1x4x16xf32>, tensor<1x1x4xf32>
}

// -----

// Grouped-query attention: 8 query heads share 2 key/value heads.
// CHECK-LABEL: func.func @attention_grouped_query
// CHECK-SAME:    (%[[Q:[^:]+]]: tensor<2x8x32x64xf16>, %[[K:[^:]+]]: tensor<2x2x32x64xf16>, %[[V:[^:]+]]: tensor<2x2x32x64xf16>)
// CHECK:         %[[O:.+]], %[[LSE:.+]] = tg.attention %[[Q]], %[[K]], %[[V]] causal : (tensor<2x8x32x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) -> (tensor<2x8x32x64xf16>, tensor<2x8x32xf32>)
// CHECK:         return %[[O]], %[[LSE]]
func.func @attention_grouped_query(%q: tensor<2x8x32x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>) -> (tensor<2x8x32x64xf16>, tensor<2x8x32xf32>) {
  %o, %lse = tg.attention %q, %k, %v causal : (tensor<2x8x32x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) -> (tensor<2x8x32x64xf16>, tensor<2x8x32xf32>)
  return %o, %lse : tensor<2x8x32x64xf16>, tensor<2x8x32xf32>
}

// -----

// Causal attention with fewer queries than keys, and a value head size (32) other than D (64).
// CHECK-LABEL: func.func @attention_causal_fewer_queries
// CHECK-SAME:    (%[[Q:[^:]+]]: tensor<1x4x16x64xf32>, %[[K:[^:]+]]: tensor<1x4x48x64xf32>, %[[V:[^:]+]]: tensor<1x4x48x32xf32>)
// CHECK:         %[[O:.+]], %[[LSE:.+]] = tg.attention %[[Q]], %[[K]], %[[V]] causal : (tensor<1x4x16x64xf32>, tensor<1x4x48x64xf32>, tensor<1x4x48x32xf32>) -> (tensor<1x4x16x32xf32>, tensor<1x4x16xf32>)
// CHECK:         return %[[O]], %[[LSE]]
func.func @attention_causal_fewer_queries(%q: tensor<1x4x16x64xf32>, %k: tensor<1x4x48x64xf32>, %v: tensor<1x4x48x32xf32>) -> (tensor<1x4x16x32xf32>, tensor<1x4x16xf32>) {
  %o, %lse = tg.attention %q, %k, %v causal : (tensor<1x4x16x64xf32>, tensor<1x4x48x64xf32>, tensor<1x4x48x32xf32>) -> (tensor<1x4x16x32xf32>, tensor<1x4x16xf32>)
  return %o, %lse : tensor<1x4x16x32xf32>, tensor<1x4x16xf32>
}

// -----

// dropout with a runtime seed, a rate and a stream.
// CHECK-LABEL: func.func @dropout
// CHECK-SAME:    (%[[X:[^:]+]]: tensor<8x128x768xf32>, %[[SEED:[^:]+]]: tensor<i64>)
// CHECK:         %[[R:.+]] = tg.dropout %[[X]], %[[SEED]] rate = 1.000000e-01 stream = 3 : tensor<8x128x768xf32>, tensor<i64>
// CHECK:         return %[[R]]
func.func @dropout(%x: tensor<8x128x768xf32>, %seed: tensor<i64>) -> tensor<8x128x768xf32> {
  %0 = tg.dropout %x, %seed rate = 1.000000e-01 stream = 3 : tensor<8x128x768xf32>, tensor<i64>
  return %0 : tensor<8x128x768xf32>
}

// -----

// dropout of one device's block: its elements' indices start at the offset.
// CHECK-LABEL: func.func @dropout_offset
// CHECK:         tg.dropout %{{.+}}, %{{.+}} offset %{{.+}} rate = 1.000000e-01 stream = 3 : tensor<4x128x768xf32>, tensor<i64>, tensor<i64>
func.func @dropout_offset(%x: tensor<4x128x768xf32>, %seed: tensor<i64>, %offset: tensor<i64>) -> tensor<4x128x768xf32> {
  %0 = tg.dropout %x, %seed offset %offset rate = 1.000000e-01 stream = 3 : tensor<4x128x768xf32>, tensor<i64>, tensor<i64>
  return %0 : tensor<4x128x768xf32>
}

// -----

// random numbers: uniform in [0, 1) and standard normal, of a block of a
// whole tensor (an offset and a global shape) and in bf16.
// CHECK-LABEL: func.func @random
// CHECK:         tg.random uniform %{{.+}} stream = 0 : tensor<i64> -> tensor<4x8xf32>
// CHECK:         tg.random normal %{{.+}} offset %{{.+}} stream = 7 of [8, 16] : tensor<i64>, tensor<i32> -> tensor<4x8xbf16>
func.func @random(%seed: tensor<i64>, %offset: tensor<i32>) -> (tensor<4x8xf32>, tensor<4x8xbf16>) {
  %0 = tg.random uniform %seed stream = 0 : tensor<i64> -> tensor<4x8xf32>
  %1 = tg.random normal %seed offset %offset stream = 7 of [8, 16] : tensor<i64>, tensor<i32> -> tensor<4x8xbf16>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xbf16>
}

// -----

// dropout of a block split on its second dimension: the whole tensor's
// shape places its elements.
// CHECK-LABEL: func.func @dropout_global_shape
// CHECK:         tg.dropout %{{.+}}, %{{.+}} offset %{{.+}} rate = 1.000000e-01 stream = 3 of [4, 256, 768] : tensor<4x128x768xf32>, tensor<i64>, tensor<i64>
func.func @dropout_global_shape(%x: tensor<4x128x768xf32>, %seed: tensor<i64>, %offset: tensor<i64>) -> tensor<4x128x768xf32> {
  %0 = tg.dropout %x, %seed offset %offset rate = 1.000000e-01 stream = 3 of [4, 256, 768] : tensor<4x128x768xf32>, tensor<i64>, tensor<i64>
  return %0 : tensor<4x128x768xf32>
}

// -----

// dropout of bf16 values with an i32 seed.
// CHECK-LABEL: func.func @dropout_bf16_i32_seed
// CHECK:         tg.dropout %{{.+}}, %{{.+}} rate = 5.000000e-01 stream = 0 : tensor<16xbf16>, tensor<i32>
func.func @dropout_bf16_i32_seed(%x: tensor<16xbf16>, %seed: tensor<i32>) -> tensor<16xbf16> {
  %0 = tg.dropout %x, %seed rate = 5.000000e-01 stream = 0 : tensor<16xbf16>, tensor<i32>
  return %0 : tensor<16xbf16>
}

// -----

// cross_entropy with mean reduction, with and without ignore_index.
// CHECK-LABEL: func.func @cross_entropy_mean
// CHECK-SAME:    (%[[LOGITS:[^:]+]]: tensor<1024x50257xf32>, %[[LABELS:[^:]+]]: tensor<1024xi64>)
// CHECK:         %[[L0:.+]], %[[LSE0:.+]] = tg.cross_entropy mean %[[LOGITS]], %[[LABELS]] ignore_index = -100 : (tensor<1024x50257xf32>, tensor<1024xi64>) -> (tensor<f32>, tensor<1024xf32>)
// CHECK:         %[[L1:.+]], %[[LSE1:.+]] = tg.cross_entropy mean %[[LOGITS]], %[[LABELS]] : (tensor<1024x50257xf32>, tensor<1024xi64>) -> (tensor<f32>, tensor<1024xf32>)
// CHECK:         return %[[L0]], %[[LSE0]], %[[L1]], %[[LSE1]]
func.func @cross_entropy_mean(%logits: tensor<1024x50257xf32>, %labels: tensor<1024xi64>) -> (tensor<f32>, tensor<1024xf32>, tensor<f32>, tensor<1024xf32>) {
  %l0, %lse0 = tg.cross_entropy mean %logits, %labels ignore_index = -100 : (tensor<1024x50257xf32>, tensor<1024xi64>) -> (tensor<f32>, tensor<1024xf32>)
  %l1, %lse1 = tg.cross_entropy mean %logits, %labels : (tensor<1024x50257xf32>, tensor<1024xi64>) -> (tensor<f32>, tensor<1024xf32>)
  return %l0, %lse0, %l1, %lse1 : tensor<f32>, tensor<1024xf32>, tensor<f32>, tensor<1024xf32>
}

// -----

// cross_entropy with sum reduction over bf16 logits of rank 3, with and without ignore_index.
// CHECK-LABEL: func.func @cross_entropy_sum
// CHECK-SAME:    (%[[LOGITS:[^:]+]]: tensor<4x32x1000xbf16>, %[[LABELS:[^:]+]]: tensor<4x32xi32>)
// CHECK:         %[[L0:.+]], %[[LSE0:.+]] = tg.cross_entropy sum %[[LOGITS]], %[[LABELS]] ignore_index = 0 : (tensor<4x32x1000xbf16>, tensor<4x32xi32>) -> (tensor<f32>, tensor<4x32xf32>)
// CHECK:         %[[L1:.+]], %[[LSE1:.+]] = tg.cross_entropy sum %[[LOGITS]], %[[LABELS]] : (tensor<4x32x1000xbf16>, tensor<4x32xi32>) -> (tensor<f32>, tensor<4x32xf32>)
// CHECK:         return %[[L0]], %[[LSE0]], %[[L1]], %[[LSE1]]
func.func @cross_entropy_sum(%logits: tensor<4x32x1000xbf16>, %labels: tensor<4x32xi32>) -> (tensor<f32>, tensor<4x32xf32>, tensor<f32>, tensor<4x32xf32>) {
  %l0, %lse0 = tg.cross_entropy sum %logits, %labels ignore_index = 0 : (tensor<4x32x1000xbf16>, tensor<4x32xi32>) -> (tensor<f32>, tensor<4x32xf32>)
  %l1, %lse1 = tg.cross_entropy sum %logits, %labels : (tensor<4x32x1000xbf16>, tensor<4x32xi32>) -> (tensor<f32>, tensor<4x32xf32>)
  return %l0, %lse0, %l1, %lse1 : tensor<f32>, tensor<4x32xf32>, tensor<f32>, tensor<4x32xf32>
}

// -----

// An embedding gathers rows of any element type: a bool mask by positions.
// CHECK-LABEL: func.func @embedding_bool_table
// CHECK:         tg.embedding %{{.*}}[%{{.*}}] : (tensor<8x1xi1>, tensor<4xi64>) -> tensor<4x1xi1>
func.func @embedding_bool_table(%mask: tensor<8x1xi1>, %ids: tensor<4xi64>) -> tensor<4x1xi1> {
  %0 = tg.embedding %mask[%ids] : (tensor<8x1xi1>, tensor<4xi64>) -> tensor<4x1xi1>
  return %0 : tensor<4x1xi1>
}

// -----

// top_k along the last dimension: values and i64 positions.
// CHECK-LABEL: func.func @top_k
// CHECK:         %{{.*}}, %{{.*}} = tg.top_k %{{.*}} k = 2 : tensor<16x8xf32> -> tensor<16x2xf32>, tensor<16x2xi64>
// CHECK:         tg.top_k %{{.*}} k = 3 smallest : tensor<5xi32> -> tensor<3xi32>, tensor<3xi64>
func.func @top_k(%x: tensor<16x8xf32>, %y: tensor<5xi32>) -> (tensor<16x2xf32>, tensor<16x2xi64>, tensor<3xi32>) {
  %v, %i = tg.top_k %x k = 2 : tensor<16x8xf32> -> tensor<16x2xf32>, tensor<16x2xi64>
  %w, %j = tg.top_k %y k = 3 smallest : tensor<5xi32> -> tensor<3xi32>, tensor<3xi64>
  return %v, %i, %w : tensor<16x2xf32>, tensor<16x2xi64>, tensor<3xi32>
}

// -----

// Attention with a bias broadcast over heads and queries (a key padding
// mask), causal.
// CHECK-LABEL: func.func @attention_bias
// CHECK-SAME:    (%[[Q:[^:]+]]: tensor<2x4x8x16xbf16>, %[[K:[^:]+]]: tensor<2x2x8x16xbf16>, %[[V:[^:]+]]: tensor<2x2x8x16xbf16>, %[[B:[^:]+]]: tensor<2x1x1x8xf32>)
// CHECK:         tg.attention %[[Q]], %[[K]], %[[V]] bias %[[B]] causal : (tensor<2x4x8x16xbf16>, tensor<2x2x8x16xbf16>, tensor<2x2x8x16xbf16>, tensor<2x1x1x8xf32>) -> (tensor<2x4x8x16xbf16>, tensor<2x4x8xf32>)
func.func @attention_bias(%q: tensor<2x4x8x16xbf16>, %k: tensor<2x2x8x16xbf16>, %v: tensor<2x2x8x16xbf16>, %b: tensor<2x1x1x8xf32>) -> tensor<2x4x8x16xbf16> {
  %o, %lse = tg.attention %q, %k, %v bias %b causal : (tensor<2x4x8x16xbf16>, tensor<2x2x8x16xbf16>, tensor<2x2x8x16xbf16>, tensor<2x1x1x8xf32>) -> (tensor<2x4x8x16xbf16>, tensor<2x4x8xf32>)
  return %o : tensor<2x4x8x16xbf16>
}

// -----

// Soft-capped attention (Gemma 2's 50) with a bias and a scale: the
// keywords print in the order bias, causal, scale, softcap.
// CHECK-LABEL: func.func @attention_softcap
// CHECK:         tg.attention %{{.+}}, %{{.+}}, %{{.+}} bias %{{.+}} causal scale = 6.250000e-02 softcap = 5.000000e+01 : (tensor<2x4x8x16xbf16>, tensor<2x2x8x16xbf16>, tensor<2x2x8x16xbf16>, tensor<2x1x1x8xf32>) -> (tensor<2x4x8x16xbf16>, tensor<2x4x8xf32>)
func.func @attention_softcap(%q: tensor<2x4x8x16xbf16>, %k: tensor<2x2x8x16xbf16>, %v: tensor<2x2x8x16xbf16>, %b: tensor<2x1x1x8xf32>) -> tensor<2x4x8x16xbf16> {
  %o, %lse = tg.attention %q, %k, %v bias %b causal scale = 6.250000e-02 softcap = 5.000000e+01 : (tensor<2x4x8x16xbf16>, tensor<2x2x8x16xbf16>, tensor<2x2x8x16xbf16>, tensor<2x1x1x8xf32>) -> (tensor<2x4x8x16xbf16>, tensor<2x4x8xf32>)
  return %o : tensor<2x4x8x16xbf16>
}

// -----

// Attention dropout: the rate, seed, an offset, the stream and the whole
// probabilities' shape (a device's block), printed after the soft cap.
// CHECK-LABEL: func.func @attention_dropout
// CHECK:         tg.attention %{{.+}}, %{{.+}}, %{{.+}} causal dropout = 1.000000e-01 seed %{{.+}} offset %{{.+}} stream = 7 of [4, 4, 8, 8] : (tensor<2x4x8x16xbf16>, tensor<2x2x8x16xbf16>, tensor<2x2x8x16xbf16>, tensor<i64>, tensor<i64>) -> (tensor<2x4x8x16xbf16>, tensor<2x4x8xf32>)
// CHECK:         tg.attention %{{.+}}, %{{.+}}, %{{.+}} bias %{{.+}} dropout = 5.000000e-01 seed %{{.+}} stream = 0 : (tensor<2x4x8x16xbf16>, tensor<2x2x8x16xbf16>, tensor<2x2x8x16xbf16>, tensor<2x1x1x8xf32>, tensor<i32>) -> (tensor<2x4x8x16xbf16>, tensor<2x4x8xf32>)
func.func @attention_dropout(%q: tensor<2x4x8x16xbf16>, %k: tensor<2x2x8x16xbf16>, %v: tensor<2x2x8x16xbf16>, %seed: tensor<i64>, %offset: tensor<i64>, %b: tensor<2x1x1x8xf32>, %seed32: tensor<i32>) -> (tensor<2x4x8x16xbf16>, tensor<2x4x8x16xbf16>) {
  %o, %lse = tg.attention %q, %k, %v causal dropout = 1.000000e-01 seed %seed offset %offset stream = 7 of [4, 4, 8, 8] : (tensor<2x4x8x16xbf16>, tensor<2x2x8x16xbf16>, tensor<2x2x8x16xbf16>, tensor<i64>, tensor<i64>) -> (tensor<2x4x8x16xbf16>, tensor<2x4x8xf32>)
  %o2, %lse2 = tg.attention %q, %k, %v bias %b dropout = 5.000000e-01 seed %seed32 stream = 0 : (tensor<2x4x8x16xbf16>, tensor<2x2x8x16xbf16>, tensor<2x2x8x16xbf16>, tensor<2x1x1x8xf32>, tensor<i32>) -> (tensor<2x4x8x16xbf16>, tensor<2x4x8xf32>)
  return %o, %o2 : tensor<2x4x8x16xbf16>, tensor<2x4x8x16xbf16>
}

// -----

// expert_matmul: each row times the matrix its id names, [E, H, O] or, with
// transpose_b, [E, O, H]; rows of any rank, a result type of its own.
// CHECK-LABEL: func.func @expert_matmul
// CHECK-SAME:    (%[[X:[^:]+]]: tensor<2x8x64xbf16>, %[[W:[^:]+]]: tensor<8x64x32xbf16>, %[[WT:[^:]+]]: tensor<8x32x64xbf16>, %[[IDS:[^:]+]]: tensor<2x8xi32>)
// CHECK:         %[[A:.+]] = tg.expert_matmul %[[X]], %[[W]][%[[IDS]]] : (tensor<2x8x64xbf16>, tensor<8x64x32xbf16>, tensor<2x8xi32>) -> tensor<2x8x32xbf16>
// CHECK:         %[[B:.+]] = tg.expert_matmul %[[X]], %[[WT]][%[[IDS]]] transpose_b : (tensor<2x8x64xbf16>, tensor<8x32x64xbf16>, tensor<2x8xi32>) -> tensor<2x8x32xf32>
// CHECK:         return %[[A]], %[[B]]
func.func @expert_matmul(%x: tensor<2x8x64xbf16>, %w: tensor<8x64x32xbf16>, %wt: tensor<8x32x64xbf16>, %ids: tensor<2x8xi32>) -> (tensor<2x8x32xbf16>, tensor<2x8x32xf32>) {
  %0 = tg.expert_matmul %x, %w[%ids] : (tensor<2x8x64xbf16>, tensor<8x64x32xbf16>, tensor<2x8xi32>) -> tensor<2x8x32xbf16>
  %1 = tg.expert_matmul %x, %wt[%ids] transpose_b : (tensor<2x8x64xbf16>, tensor<8x32x64xbf16>, tensor<2x8xi32>) -> tensor<2x8x32xf32>
  return %0, %1 : tensor<2x8x32xbf16>, tensor<2x8x32xf32>
}

// -----

// A device's block of 2 of 8 experts (expert parallelism).
// CHECK-LABEL: func.func @expert_matmul_block
// CHECK:         tg.expert_matmul %{{.+}}, %{{.+}}[%{{.+}}] {global_experts = 8 : i64} : (tensor<16x64xf32>, tensor<2x64x32xf32>, tensor<16xi64>) -> tensor<16x32xf32>
func.func @expert_matmul_block(%x: tensor<16x64xf32>, %w: tensor<2x64x32xf32>, %ids: tensor<16xi64>) -> tensor<16x32xf32> {
  %0 = tg.expert_matmul %x, %w[%ids] {global_experts = 8 : i64} : (tensor<16x64xf32>, tensor<2x64x32xf32>, tensor<16xi64>) -> tensor<16x32xf32>
  return %0 : tensor<16x32xf32>
}
