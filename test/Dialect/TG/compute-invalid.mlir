// RUN: tgc-opt %s --split-input-file --verify-diagnostics

// A matmul operand of rank 1.
func.func @matmul_rank_one(%a: tensor<8xf32>, %b: tensor<8x4xf32>) {
  // expected-error @+1 {{'tg.matmul' op operands must have rank 2 or more, got 8 and 8x4}}
  %0 = tg.matmul %a, %b : (tensor<8xf32>, tensor<8x4xf32>) -> tensor<4xf32>
  return
}

// -----

// Batched operands of the same rank with different batch dimensions.
func.func @matmul_batch_mismatch(%a: tensor<2x3x8xf32>, %b: tensor<4x8x5xf32>) {
  // expected-error @+1 {{'tg.matmul' op batch dimensions differ: 2 and 4 (they must be equal, or rhs must be a matrix)}}
  %0 = tg.matmul %a, %b : (tensor<2x3x8xf32>, tensor<4x8x5xf32>) -> tensor<2x3x5xf32>
  return
}

// -----

// Only the rhs may be a shared matrix: a batched rhs needs the lhs's batch.
func.func @matmul_batch_rank_mismatch(%a: tensor<2x3x8xf32>, %b: tensor<5x2x8x4xf32>) {
  // expected-error @+1 {{'tg.matmul' op batch dimensions differ: 2 and 5x2 (they must be equal, or rhs must be a matrix)}}
  %0 = tg.matmul %a, %b : (tensor<2x3x8xf32>, tensor<5x2x8x4xf32>) -> tensor<2x3x4xf32>
  return
}

// -----

// The contracting dimensions differ.
func.func @matmul_contracting_mismatch(%a: tensor<3x8xf32>, %b: tensor<7x5xf32>) {
  // expected-error @+1 {{'tg.matmul' op contracting dimensions differ: lhs has 8, rhs has 7}}
  %0 = tg.matmul %a, %b : (tensor<3x8xf32>, tensor<7x5xf32>) -> tensor<3x5xf32>
  return
}

// -----

// With transpose_b the rhs contracts over its last dimension (5 here, not 8).
func.func @matmul_contracting_mismatch_transpose_b(%a: tensor<3x8xf32>, %b: tensor<8x5xf32>) {
  // expected-error @+1 {{'tg.matmul' op contracting dimensions differ: lhs has 8, rhs has 5}}
  %0 = tg.matmul %a, %b transpose_b : (tensor<3x8xf32>, tensor<8x5xf32>) -> tensor<3x8xf32>
  return
}

// -----

// With transpose_a the lhs contracts over its second-to-last dimension (3 here, not 8).
func.func @matmul_contracting_mismatch_transpose_a(%a: tensor<3x8xf32>, %b: tensor<8x5xf32>) {
  // expected-error @+1 {{'tg.matmul' op contracting dimensions differ: lhs has 3, rhs has 8}}
  %0 = tg.matmul %a, %b transpose_a : (tensor<3x8xf32>, tensor<8x5xf32>) -> tensor<8x5xf32>
  return
}

// -----

// A result shape other than [batch..., m, n].
func.func @matmul_result_shape(%a: tensor<3x8xf32>, %b: tensor<8x5xf32>) {
  // expected-error @+1 {{'tg.matmul' op result shape 5x3 differs from the expected 3x5}}
  %0 = tg.matmul %a, %b : (tensor<3x8xf32>, tensor<8x5xf32>) -> tensor<5x3xf32>
  return
}

// -----

// Operands of different element types.
func.func @matmul_element_types(%a: tensor<3x8xf32>, %b: tensor<8x5xbf16>) {
  // expected-error @+1 {{'tg.matmul' op operand element types differ: 'f32' and 'bf16'}}
  %0 = tg.matmul %a, %b : (tensor<3x8xf32>, tensor<8x5xbf16>) -> tensor<3x5xf32>
  return
}

// -----

// A padding_idx past the table, and one of a table without a gradient.
func.func @embedding_padding_idx_range(%t: tensor<10x4xf32>, %ids: tensor<4xi64>) {
  // expected-error @+1 {{'tg.embedding' op padding_idx 10 is not a row of the 10-row table}}
  %0 = tg.embedding %t[%ids] {padding_idx = 10 : i64} : (tensor<10x4xf32>, tensor<4xi64>) -> tensor<4x4xf32>
  return
}

// -----

func.func @embedding_padding_idx_negative(%t: tensor<10x4xf32>, %ids: tensor<4xi64>) {
  // expected-error @+1 {{'tg.embedding' op padding_idx -1 is not a row of the 10-row table}}
  %0 = tg.embedding %t[%ids] {padding_idx = -1 : i64} : (tensor<10x4xf32>, tensor<4xi64>) -> tensor<4x4xf32>
  return
}

// -----

func.func @embedding_padding_idx_mask(%t: tensor<10x1xi1>, %ids: tensor<4xi64>) {
  // expected-error @+1 {{'tg.embedding' op padding_idx needs a float table (only one has a gradient), got 'tensor<10x1xi1>'}}
  %0 = tg.embedding %t[%ids] {padding_idx = 0 : i64} : (tensor<10x1xi1>, tensor<4xi64>) -> tensor<4x1xi1>
  return
}

// -----

// An embedding table that is not a matrix.
func.func @embedding_table_rank(%t: tensor<100xf32>, %ids: tensor<4xi64>) {
  // expected-error @+2 {{table must have rank 2, got 'tensor<100xf32>'}}
  // expected-error @+1 {{'tg.embedding' op failed to infer returned types}}
  %0 = tg.embedding %t[%ids] : (tensor<100xf32>, tensor<4xi64>) -> tensor<4xf32>
  return
}

// -----

// A softmax dimension at the rank.
func.func @softmax_dim_out_of_range(%x: tensor<4x5xf32>) {
  // expected-error @+1 {{'tg.softmax' op dimension 2 is out of range for rank 2}}
  %0 = tg.softmax %x dim = 2 : tensor<4x5xf32>
  return
}

// -----

// A negative log_softmax dimension.
func.func @log_softmax_dim_negative(%x: tensor<4x5xf32>) {
  // expected-error @+1 {{'tg.log_softmax' op dimension -1 is out of range for rank 2}}
  %0 = tg.log_softmax %x dim = -1 : tensor<4x5xf32>
  return
}

// -----

// layer_norm's scale and bias have the size of the last dimension (5), not the first.
func.func @layer_norm_scale_shape(%x: tensor<4x5xf32>, %g: tensor<4xf32>) {
  // expected-error @+2 {{scale and bias must be vectors of 5 elements (the last dimension of the input), got 'tensor<4xf32>'}}
  // expected-error @+1 {{'tg.layer_norm' op failed to infer returned types}}
  %y, %m, %r = tg.layer_norm %x, %g, %g epsilon = 1.000000e-05 : (tensor<4x5xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4x5xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

// layer_norm of a scalar has no dimension to normalize over.
func.func @layer_norm_scalar_input(%x: tensor<f32>, %g: tensor<1xf32>) {
  // expected-error @+2 {{input must have rank 1 or more}}
  // expected-error @+1 {{'tg.layer_norm' op failed to infer returned types}}
  %y, %m, %r = tg.layer_norm %x, %g, %g epsilon = 1.000000e-05 : (tensor<f32>, tensor<1xf32>, tensor<1xf32>) -> (tensor<f32>, tensor<f32>, tensor<f32>)
  return
}

// -----

// A negative layer_norm epsilon.
func.func @layer_norm_negative_epsilon(%x: tensor<4x5xf32>, %g: tensor<5xf32>) {
  // expected-error @+1 {{'tg.layer_norm' op epsilon must be finite and non-negative, got -1.000000e-05}}
  %y, %m, %r = tg.layer_norm %x, %g, %g epsilon = -1.000000e-05 : (tensor<4x5xf32>, tensor<5xf32>, tensor<5xf32>) -> (tensor<4x5xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

// An infinite layer_norm epsilon.
func.func @layer_norm_infinite_epsilon(%x: tensor<4x5xf32>, %g: tensor<5xf32>) {
  // expected-error @+1 {{'tg.layer_norm' op epsilon must be finite and non-negative, got INF}}
  %y, %m, %r = tg.layer_norm %x, %g, %g epsilon = 0x7FF0000000000000 : (tensor<4x5xf32>, tensor<5xf32>, tensor<5xf32>) -> (tensor<4x5xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

// rms_norm of a scalar has no dimension to normalize over.
func.func @rms_norm_scalar_input(%x: tensor<f32>, %g: tensor<1xf32>) {
  // expected-error @+2 {{input must have rank 1 or more}}
  // expected-error @+1 {{'tg.rms_norm' op failed to infer returned types}}
  %y, %r = tg.rms_norm %x, %g epsilon = 1.000000e-05 : (tensor<f32>, tensor<1xf32>) -> (tensor<f32>, tensor<f32>)
  return
}

// -----

// A NaN rms_norm epsilon.
func.func @rms_norm_nan_epsilon(%x: tensor<4x5xf32>, %g: tensor<5xf32>) {
  // expected-error @+1 {{'tg.rms_norm' op epsilon must be finite and non-negative, got nan}}
  %y, %r = tg.rms_norm %x, %g epsilon = 0x7FF8000000000000 : (tensor<4x5xf32>, tensor<5xf32>) -> (tensor<4x5xf32>, tensor<4xf32>)
  return
}

// -----

// Attention operands of rank 3.
func.func @attention_rank(%q: tensor<2x8x16xf32>, %k: tensor<2x8x16x64xf32>) {
  // expected-error @+2 {{query, key and value must have rank 4 (batch x heads x sequence x head size), got 2x8x16, 2x8x16x64 and 2x8x16x64}}
  // expected-error @+1 {{'tg.attention' op failed to infer returned types}}
  %o, %l = tg.attention %q, %k, %k : (tensor<2x8x16xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16xf32>)
  return
}

// -----

// Query and key/value of different batch sizes.
func.func @attention_batch(%q: tensor<2x8x16x64xf32>, %k: tensor<3x8x16x64xf32>) {
  // expected-error @+2 {{batch sizes differ: 2, 3 and 3}}
  // expected-error @+1 {{'tg.attention' op failed to infer returned types}}
  %o, %l = tg.attention %q, %k, %k : (tensor<2x8x16x64xf32>, tensor<3x8x16x64xf32>, tensor<3x8x16x64xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16xf32>)
  return
}

// -----

// Key and value with different numbers of heads.
func.func @attention_kv_heads(%q: tensor<2x8x16x64xf32>, %k: tensor<2x2x16x64xf32>, %v: tensor<2x4x16x64xf32>) {
  // expected-error @+2 {{key (2x2x16x64) and value (2x4x16x64) differ in heads or sequence length}}
  // expected-error @+1 {{'tg.attention' op failed to infer returned types}}
  %o, %l = tg.attention %q, %k, %v : (tensor<2x8x16x64xf32>, tensor<2x2x16x64xf32>, tensor<2x4x16x64xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16xf32>)
  return
}

// -----

// Key and value with different sequence lengths.
func.func @attention_kv_sequence(%q: tensor<2x8x16x64xf32>, %k: tensor<2x2x16x64xf32>, %v: tensor<2x2x32x64xf32>) {
  // expected-error @+2 {{key (2x2x16x64) and value (2x2x32x64) differ in heads or sequence length}}
  // expected-error @+1 {{'tg.attention' op failed to infer returned types}}
  %o, %l = tg.attention %q, %k, %v : (tensor<2x8x16x64xf32>, tensor<2x2x16x64xf32>, tensor<2x2x32x64xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16xf32>)
  return
}

// -----

// Grouped-query attention needs the query heads to be a multiple of the key/value heads.
func.func @attention_gqa_not_multiple(%q: tensor<2x8x16x64xf32>, %k: tensor<2x3x16x64xf32>) {
  // expected-error @+2 {{query heads (8) are not a multiple of key/value heads (3)}}
  // expected-error @+1 {{'tg.attention' op failed to infer returned types}}
  %o, %l = tg.attention %q, %k, %k : (tensor<2x8x16x64xf32>, tensor<2x3x16x64xf32>, tensor<2x3x16x64xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16xf32>)
  return
}

// -----

// Zero key/value heads are rejected rather than divided by.
func.func @attention_zero_kv_heads(%q: tensor<2x8x16x64xf32>, %k: tensor<2x0x16x64xf32>) {
  // expected-error @+2 {{query heads (8) are not a multiple of key/value heads (0)}}
  // expected-error @+1 {{'tg.attention' op failed to infer returned types}}
  %o, %l = tg.attention %q, %k, %k : (tensor<2x8x16x64xf32>, tensor<2x0x16x64xf32>, tensor<2x0x16x64xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16xf32>)
  return
}

// -----

// Query and key head sizes differ.
func.func @attention_head_size(%q: tensor<2x8x16x64xf32>, %k: tensor<2x8x16x32xf32>) {
  // expected-error @+2 {{query and key head sizes differ: 64 and 32}}
  // expected-error @+1 {{'tg.attention' op failed to infer returned types}}
  %o, %l = tg.attention %q, %k, %k : (tensor<2x8x16x64xf32>, tensor<2x8x16x32xf32>, tensor<2x8x16x32xf32>) -> (tensor<2x8x16x32xf32>, tensor<2x8x16xf32>)
  return
}

// -----

// Causal attention with more queries than keys would leave queries with no key.
func.func @attention_causal_more_queries(%q: tensor<2x8x32x64xf32>, %k: tensor<2x8x16x64xf32>) {
  // expected-error @+2 {{causal attention needs at most as many queries as keys, got 32 queries and 16 keys}}
  // expected-error @+1 {{'tg.attention' op failed to infer returned types}}
  %o, %l = tg.attention %q, %k, %k causal : (tensor<2x8x32x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>) -> (tensor<2x8x32x64xf32>, tensor<2x8x32xf32>)
  return
}

// -----

// A zero scale.
func.func @attention_zero_scale(%q: tensor<2x8x16x64xf32>) {
  // expected-error @+2 {{scale must be finite and positive, got 0.000000e+00}}
  // expected-error @+1 {{'tg.attention' op failed to infer returned types}}
  %o, %l = tg.attention %q, %q, %q scale = 0.000000e+00 : (tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16xf32>)
  return
}

// -----

// A negative scale.
func.func @attention_negative_scale(%q: tensor<2x8x16x64xf32>) {
  // expected-error @+2 {{scale must be finite and positive, got -1.000000e+00}}
  // expected-error @+1 {{'tg.attention' op failed to infer returned types}}
  %o, %l = tg.attention %q, %q, %q scale = -1.000000e+00 : (tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16xf32>)
  return
}

// -----

// A soft cap of zero (no cap is written by leaving the attribute out).
func.func @attention_zero_softcap(%q: tensor<2x8x16x64xf32>) {
  // expected-error @+2 {{softcap must be finite and positive, got 0.000000e+00}}
  // expected-error @+1 {{'tg.attention' op failed to infer returned types}}
  %o, %l = tg.attention %q, %q, %q softcap = 0.000000e+00 : (tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16xf32>)
  return
}

// -----

// A negative soft cap on the backward.
func.func @attention_grad_negative_softcap(%q: tensor<2x8x16x64xf32>, %lse: tensor<2x8x16xf32>) {
  // expected-error @+2 {{softcap must be finite and positive, got -5.000000e+01}}
  // expected-error @+1 {{'tg.attention_grad' op failed to infer returned types}}
  %dq, %dk, %dv = tg.attention_grad %q, %q, %q, %q, %q, %lse softcap = -5.000000e+01 : (tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>)
  return
}

// -----

// An infinite scale.
func.func @attention_infinite_scale(%q: tensor<2x8x16x64xf32>) {
  // expected-error @+2 {{scale must be finite and positive, got INF}}
  // expected-error @+1 {{'tg.attention' op failed to infer returned types}}
  %o, %l = tg.attention %q, %q, %q scale = 0x7FF0000000000000 : (tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16xf32>)
  return
}

// -----

// A dropout rate of 1 would divide by zero.
func.func @dropout_rate_one(%x: tensor<4xf32>, %seed: tensor<i64>) {
  // expected-error @+1 {{'tg.dropout' op rate must be in [0, 1), got 1.000000e+00}}
  %0 = tg.dropout %x, %seed rate = 1.000000e+00 stream = 0 : tensor<4xf32>, tensor<i64>
  return
}

// -----

// A negative dropout rate.
func.func @dropout_rate_negative(%x: tensor<4xf32>, %seed: tensor<i64>) {
  // expected-error @+1 {{'tg.dropout' op rate must be in [0, 1), got -1.000000e-01}}
  %0 = tg.dropout %x, %seed rate = -1.000000e-01 stream = 0 : tensor<4xf32>, tensor<i64>
  return
}

// -----

// A negative dropout stream.
func.func @dropout_stream_negative(%x: tensor<4xf32>, %seed: tensor<i64>) {
  // expected-error @+1 {{'tg.dropout' op stream must be non-negative, got -1}}
  %0 = tg.dropout %x, %seed rate = 1.000000e-01 stream = -1 : tensor<4xf32>, tensor<i64>
  return
}

// -----

// A dropout's global shape has the operand's rank.
func.func @dropout_global_shape_rank(%x: tensor<4x8xf32>, %seed: tensor<i64>) {
  // expected-error @+1 {{'tg.dropout' op global_shape has 1 dimensions, the numbers 2}}
  %0 = tg.dropout %x, %seed rate = 1.000000e-01 stream = 0 of [32] : tensor<4x8xf32>, tensor<i64>
  return
}

// -----

// A dropout's operand is a block of its global shape: no dimension larger.
func.func @dropout_global_shape_smaller(%x: tensor<4x8xf32>, %seed: tensor<i64>) {
  // expected-error @+1 {{'tg.dropout' op global_shape dimension 1 (4) is smaller than the numbers' (8)}}
  %0 = tg.dropout %x, %seed rate = 1.000000e-01 stream = 0 of [4, 4] : tensor<4x8xf32>, tensor<i64>
  return
}

// -----

// A dropout's global shape counts its elements with 64-bit indices.
func.func @dropout_global_shape_overflow(%x: tensor<4x8xf32>, %seed: tensor<i64>) {
  // expected-error @+1 {{'tg.dropout' op global_shape has more elements than a 64-bit index counts}}
  %0 = tg.dropout %x, %seed rate = 1.000000e-01 stream = 0 of [4611686018427387904, 8] : tensor<4x8xf32>, tensor<i64>
  return
}

// -----

// A negative random stream (the checks every counter-based random op
// shares).
func.func @random_stream_negative(%seed: tensor<i64>) {
  // expected-error @+1 {{'tg.random' op stream must be non-negative, got -2}}
  %0 = tg.random normal %seed stream = -2 : tensor<i64> -> tensor<4xf32>
  return
}

// -----

// The stream is a 32-bit word of the counter.
func.func @dropout_stream_too_large(%x: tensor<4xf32>, %seed: tensor<i64>) {
  // expected-error @+1 {{'tg.dropout' op stream must be below 2^32 (a word of the Philox counter), got 4294967296}}
  %0 = tg.dropout %x, %seed rate = 1.000000e-01 stream = 4294967296 : tensor<4xf32>, tensor<i64>
  return
}

// -----

// A random block's global shape has the result's rank.
func.func @random_global_shape_rank(%seed: tensor<i64>) {
  // expected-error @+1 {{'tg.random' op global_shape has 3 dimensions, the numbers 2}}
  %0 = tg.random uniform %seed stream = 0 of [4, 8, 2] : tensor<i64> -> tensor<4x8xf32>
  return
}

// -----

// A random block lies inside its global shape.
func.func @random_global_shape_smaller(%seed: tensor<i64>) {
  // expected-error @+1 {{'tg.random' op global_shape dimension 0 (2) is smaller than the numbers' (4)}}
  %0 = tg.random uniform %seed stream = 0 of [2, 8] : tensor<i64> -> tensor<4x8xf32>
  return
}

// -----

// Random numbers are floats.
func.func @random_integer_result(%seed: tensor<i64>) {
  // expected-error @+1 {{'tg.random' op result #0 must be}}
  %0 = tg.random uniform %seed stream = 0 : tensor<i64> -> tensor<4xi32>
  return
}

// -----

// The seed is an integer scalar.
func.func @random_float_seed(%seed: tensor<f32>) {
  // expected-error @+1 {{'tg.random' op operand #0 must be}}
  %0 = tg.random uniform %seed stream = 0 : tensor<f32> -> tensor<4xf32>
  return
}

// -----

// An unknown distribution.
func.func @random_unknown_distribution(%seed: tensor<i64>) {
  // expected-error @+1 {{expected}}
  %0 = tg.random gamma %seed stream = 0 : tensor<i64> -> tensor<4xf32>
  return
}

// -----

// A dropout's offset is an integer scalar (an element index).
func.func @dropout_offset_float(%x: tensor<4xf32>, %seed: tensor<i64>, %offset: tensor<f32>) {
  // expected-error @+1 {{'tg.dropout' op operand #2 must be}}
  %0 = tg.dropout %x, %seed offset %offset rate = 1.000000e-01 stream = 0 : tensor<4xf32>, tensor<i64>, tensor<f32>
  return
}

// -----

// Labels that are not the logits' shape without the class dimension.
func.func @cross_entropy_label_shape(%logits: tensor<16x100xf32>, %labels: tensor<8xi64>) {
  // expected-error @+2 {{labels (8) must have the shape of the logits (16x100) without the class dimension}}
  // expected-error @+1 {{'tg.cross_entropy' op failed to infer returned types}}
  %l, %lse = tg.cross_entropy mean %logits, %labels : (tensor<16x100xf32>, tensor<8xi64>) -> (tensor<f32>, tensor<8xf32>)
  return
}

// -----

// Labels with the logits' full shape (the class dimension kept).
func.func @cross_entropy_label_keeps_class_dim(%logits: tensor<16x100xf32>, %labels: tensor<16x100xi64>) {
  // expected-error @+2 {{labels (16x100) must have the shape of the logits (16x100) without the class dimension}}
  // expected-error @+1 {{'tg.cross_entropy' op failed to infer returned types}}
  %l, %lse = tg.cross_entropy sum %logits, %labels : (tensor<16x100xf32>, tensor<16x100xi64>) -> (tensor<f32>, tensor<16x100xf32>)
  return
}

// -----

// The loss is always f32, whatever the logits' type.
func.func @cross_entropy_loss_type(%logits: tensor<16x100xbf16>, %labels: tensor<16xi64>) {
  // expected-error @+2 {{'tg.cross_entropy' op inferred type(s) 'tensor<f32>', 'tensor<16xf32>' are incompatible with return type(s) of operation 'tensor<bf16>', 'tensor<16xf32>'}}
  // expected-error @+1 {{'tg.cross_entropy' op failed to infer returned types}}
  %l, %lse = tg.cross_entropy mean %logits, %labels : (tensor<16x100xbf16>, tensor<16xi64>) -> (tensor<bf16>, tensor<16xf32>)
  return
}

// -----

// rms_norm has only a scale, which must match the last dimension.
func.func @rms_norm_scale_shape(%x: tensor<4x5xf32>, %g: tensor<1x5xf32>) {
  // expected-error @+2 {{scale must be a vector of 5 elements (the last dimension of the input), got 'tensor<1x5xf32>'}}
  // expected-error @+1 {{'tg.rms_norm' op failed to infer returned types}}
  %y, %r = tg.rms_norm %x, %g epsilon = 1.000000e-05 : (tensor<4x5xf32>, tensor<1x5xf32>) -> (tensor<4x5xf32>, tensor<4xf32>)
  return
}

// -----

// Scalar logits have no class dimension.
func.func @cross_entropy_scalar_logits(%logits: tensor<f32>, %labels: tensor<i64>) {
  // expected-error @+2 {{logits must have a class dimension (rank 1 or more), got 'tensor<f32>'}}
  // expected-error @+1 {{'tg.cross_entropy' op failed to infer returned types}}
  %l, %lse = tg.cross_entropy mean %logits, %labels : (tensor<f32>, tensor<i64>) -> (tensor<f32>, tensor<f32>)
  return
}

// -----

// A matrix lhs cannot multiply a batched rhs: the batch is "none".
func.func @matmul_matrix_lhs_batched_rhs(%a: tensor<3x8xf32>, %b: tensor<2x8x5xf32>) {
  // expected-error @+1 {{'tg.matmul' op batch dimensions differ: none and 2 (they must be equal, or rhs must be a matrix)}}
  %0 = tg.matmul %a, %b : (tensor<3x8xf32>, tensor<2x8x5xf32>) -> tensor<2x3x5xf32>
  return
}

// -----

// top_k of more elements than the row has.
func.func @top_k_too_many(%x: tensor<4x3xf32>) {
  // expected-error @+2 {{k = 4 is out of range for a last dimension of 3}}
  // expected-error @+1 {{'tg.top_k' op failed to infer returned types}}
  %v, %i = tg.top_k %x k = 4 : tensor<4x3xf32> -> tensor<4x4xf32>, tensor<4x4xi64>
  return
}

// -----

// top_k of a scalar.
func.func @top_k_scalar(%x: tensor<f32>) {
  // expected-error @+2 {{operand must have rank >= 1}}
  // expected-error @+1 {{'tg.top_k' op failed to infer returned types}}
  %v, %i = tg.top_k %x k = 0 : tensor<f32> -> tensor<f32>, tensor<i64>
  return
}

// -----

// top_k of booleans.
func.func @top_k_bool(%x: tensor<4xi1>) {
  // expected-error @+1 {{'tg.top_k' op operand #0 must be}}
  %v, %i = tg.top_k %x k = 1 : tensor<4xi1> -> tensor<1xi1>, tensor<1xi64>
  return
}

// -----

// An attention bias that is not f32.
func.func @attention_bias_type(%q: tensor<2x4x8x16xbf16>, %b: tensor<2x1x1x8xbf16>) {
  // expected-error @+2 {{bias must be an f32 tensor of shape 2x4x8x8 or with some of those dimensions 1 (broadcast), got 'tensor<2x1x1x8xbf16>'}}
  // expected-error @+1 {{'tg.attention' op failed to infer returned types}}
  %o, %l = tg.attention %q, %q, %q bias %b : (tensor<2x4x8x16xbf16>, tensor<2x4x8x16xbf16>, tensor<2x4x8x16xbf16>, tensor<2x1x1x8xbf16>) -> (tensor<2x4x8x16xbf16>, tensor<2x4x8xf32>)
  return
}

// -----

// An attention bias whose keys are not the attention's.
func.func @attention_bias_keys(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x6x16xf32>, %b: tensor<2x1x1x8xf32>) {
  // expected-error @+2 {{bias must be an f32 tensor of shape 2x4x8x6 or with some of those dimensions 1 (broadcast), got 'tensor<2x1x1x8xf32>'}}
  // expected-error @+1 {{'tg.attention' op failed to infer returned types}}
  %o, %l = tg.attention %q, %k, %k bias %b : (tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x6x16xf32>, tensor<2x1x1x8xf32>) -> (tensor<2x4x8x16xf32>, tensor<2x4x8xf32>)
  return
}

// -----

// An attention bias of rank 2.
func.func @attention_bias_rank(%q: tensor<2x4x8x16xf32>, %b: tensor<8x8xf32>) {
  // expected-error @+2 {{bias must be an f32 tensor of shape 2x4x8x8 or with some of those dimensions 1 (broadcast), got 'tensor<8x8xf32>'}}
  // expected-error @+1 {{'tg.attention' op failed to infer returned types}}
  %o, %l = tg.attention %q, %q, %q bias %b : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<8x8xf32>) -> (tensor<2x4x8x16xf32>, tensor<2x4x8xf32>)
  return
}

// -----

// Attention dropout needs its rate, seed and stream together.
func.func @attention_dropout_without_seed(%q: tensor<2x8x16x64xf32>) {
  // expected-error @+1 {{'tg.attention' op attention dropout needs its rate, seed and stream together}}
  %o, %l = tg.attention %q, %q, %q dropout = 1.000000e-01 stream = 1 : (tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16xf32>)
  return
}

// -----

// A dropout rate of 1 drops every probability.
func.func @attention_dropout_rate_one(%q: tensor<2x8x16x64xf32>, %seed: tensor<i64>) {
  // expected-error @+1 {{'tg.attention' op dropout rate must be in [0, 1), got 1.000000e+00}}
  %o, %l = tg.attention %q, %q, %q dropout = 1.000000e+00 seed %seed stream = 1 : (tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<i64>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16xf32>)
  return
}

// -----

// An offset places a mask that is not there.
func.func @attention_offset_without_dropout(%q: tensor<2x8x16x64xf32>, %offset: tensor<i64>) {
  // expected-error @+1 {{'tg.attention' op offset and global_shape place a dropout mask: they need dropout, seed and stream}}
  %o, %l = tg.attention %q, %q, %q offset %offset : (tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<i64>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16xf32>)
  return
}

// -----

// The whole shape of the mask is that of the probabilities [B, H, Sq, Sk]
// (here [2, 8, 16, 16]), not of the output.
func.func @attention_dropout_global_shape(%q: tensor<2x8x16x64xf32>, %seed: tensor<i64>) {
  // expected-error @+1 {{'tg.attention' op global_shape dimension 3 (8) is smaller than the numbers' (16)}}
  %o, %l = tg.attention %q, %q, %q dropout = 1.000000e-01 seed %seed stream = 1 of [4, 8, 16, 8] : (tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<i64>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16xf32>)
  return
}

// -----

// The backward's dropout needs a seed too.
func.func @attention_grad_dropout_without_seed(%q: tensor<2x8x16x64xf32>, %lse: tensor<2x8x16xf32>) {
  // expected-error @+1 {{'tg.attention_grad' op attention dropout needs its rate, seed and stream together}}
  %dq, %dk, %dv = tg.attention_grad %q, %q, %q, %q, %q, %lse dropout = 1.000000e-01 : (tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>)
  return
}

// -----

// expert_matmul's matrices are a stack of rank 3.
func.func @expert_matmul_weight_rank(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %ids: tensor<4xi64>) {
  // expected-error @+1 {{'tg.expert_matmul' op expert matrices must have rank 3 (E, H, O), got 'tensor<8x16xf32>'}}
  %0 = tg.expert_matmul %x, %w[%ids] : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<4xi64>) -> tensor<4x16xf32>
  return
}

// -----

// The input's width is the matrices' H (the last dimension when transposed).
func.func @expert_matmul_input_width(%x: tensor<4x8xf32>, %w: tensor<2x16x8xf32>, %ids: tensor<4xi64>) {
  // expected-error @+1 {{'tg.expert_matmul' op input (4x8) must have the shape of the ids (4) followed by the matrices' input width (16)}}
  %0 = tg.expert_matmul %x, %w[%ids] : (tensor<4x8xf32>, tensor<2x16x8xf32>, tensor<4xi64>) -> tensor<4x8xf32>
  return
}

// -----

// One id per row of the input.
func.func @expert_matmul_ids(%x: tensor<4x8xf32>, %w: tensor<2x16x8xf32>, %ids: tensor<3xi64>) {
  // expected-error @+1 {{'tg.expert_matmul' op input (4x8) must have the shape of the ids (3) followed by the matrices' input width (8)}}
  %0 = tg.expert_matmul %x, %w[%ids] transpose_b : (tensor<4x8xf32>, tensor<2x16x8xf32>, tensor<3xi64>) -> tensor<4x16xf32>
  return
}

// -----

// The result's width is the matrices' O.
func.func @expert_matmul_result(%x: tensor<4x8xf32>, %w: tensor<2x8x16xf32>, %ids: tensor<4xi64>) {
  // expected-error @+1 {{'tg.expert_matmul' op result (4x8) must have the shape of the ids (4) followed by the matrices' output width (16)}}
  %0 = tg.expert_matmul %x, %w[%ids] : (tensor<4x8xf32>, tensor<2x8x16xf32>, tensor<4xi64>) -> tensor<4x8xf32>
  return
}

// -----

// The input and the matrices have one element type.
func.func @expert_matmul_types(%x: tensor<4x8xbf16>, %w: tensor<2x8x16xf32>, %ids: tensor<4xi64>) {
  // expected-error @+1 {{'tg.expert_matmul' op input and weight must have one element type, got 'bf16' and 'f32'}}
  %0 = tg.expert_matmul %x, %w[%ids] : (tensor<4x8xbf16>, tensor<2x8x16xf32>, tensor<4xi64>) -> tensor<4x16xf32>
  return
}

// -----

// Ids are integers.
func.func @expert_matmul_float_ids(%x: tensor<4x8xf32>, %w: tensor<2x8x16xf32>, %ids: tensor<4xf32>) {
  // expected-error @+1 {{'tg.expert_matmul' op operand #2 must be}}
  %0 = tg.expert_matmul %x, %w[%ids] : (tensor<4x8xf32>, tensor<2x8x16xf32>, tensor<4xf32>) -> tensor<4x16xf32>
  return
}

// -----

// Rows need experts to name.
func.func @expert_matmul_no_experts(%x: tensor<4x8xf32>, %w: tensor<0x8x16xf32>, %ids: tensor<4xi64>) {
  // expected-error @+1 {{'tg.expert_matmul' op no expert for the 4 rows: every id would be out of range}}
  %0 = tg.expert_matmul %x, %w[%ids] : (tensor<4x8xf32>, tensor<0x8x16xf32>, tensor<4xi64>) -> tensor<4x16xf32>
  return
}

// -----

// A block of experts (expert parallelism) is part of a stack at least as
// large.
func.func @expert_matmul_global_experts(%x: tensor<4x8xf32>, %w: tensor<2x8x16xf32>, %ids: tensor<4xi64>) {
  // expected-error @+1 {{'tg.expert_matmul' op global_experts (1) must be at least the block's 2 experts}}
  %0 = tg.expert_matmul %x, %w[%ids] {global_experts = 1 : i64} : (tensor<4x8xf32>, tensor<2x8x16xf32>, tensor<4xi64>) -> tensor<4x16xf32>
  return
}
