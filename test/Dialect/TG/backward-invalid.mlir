// RUN: tgc-opt %s --split-input-file --verify-diagnostics

// Invalid backward ops: every hand-written diagnostic.

// A softmax_grad dimension at the rank.
func.func @softmax_grad_dim_out_of_range(%y: tensor<4x5xf32>, %dy: tensor<4x5xf32>) {
  // expected-error @+1 {{'tg.softmax_grad' op dimension 2 is out of range for rank 2}}
  %0 = tg.softmax_grad %y, %dy dim = 2 : tensor<4x5xf32>
  return
}

// -----

// A negative softmax_grad dimension.
func.func @softmax_grad_dim_negative(%y: tensor<4x5xf32>, %dy: tensor<4x5xf32>) {
  // expected-error @+1 {{'tg.softmax_grad' op dimension -1 is out of range for rank 2}}
  %0 = tg.softmax_grad %y, %dy dim = -1 : tensor<4x5xf32>
  return
}

// -----

// layer_norm_grad's gradient has the input's type (bf16 here), not f32.
func.func @layer_norm_grad_grad_output_type(%dy: tensor<4x8xf32>, %x: tensor<4x8xbf16>, %s: tensor<4xf32>, %g: tensor<8xf32>) {
  // expected-error @+2 {{grad_output has type 'tensor<4x8xf32>', the input 'tensor<4x8xbf16>'}}
  // expected-error @+1 {{'tg.layer_norm_grad' op failed to infer returned types}}
  %dx, %dg, %db = tg.layer_norm_grad %dy, %x, %s, %s, %g : (tensor<4x8xf32>, tensor<4x8xbf16>, tensor<4xf32>, tensor<4xf32>, tensor<8xf32>) -> (tensor<4x8xbf16>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

// layer_norm_grad's gradient has the input's shape.
func.func @layer_norm_grad_grad_output_shape(%dy: tensor<8x4xf32>, %x: tensor<4x8xf32>, %s: tensor<4xf32>, %g: tensor<8xf32>) {
  // expected-error @+2 {{grad_output has type 'tensor<8x4xf32>', the input 'tensor<4x8xf32>'}}
  // expected-error @+1 {{'tg.layer_norm_grad' op failed to infer returned types}}
  %dx, %dg, %db = tg.layer_norm_grad %dy, %x, %s, %s, %g : (tensor<8x4xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

// A layer_norm_grad mean that keeps the normalized dimension.
func.func @layer_norm_grad_mean_shape(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %mean: tensor<4x8xf32>, %rstd: tensor<4xf32>, %g: tensor<8xf32>) {
  // expected-error @+2 {{statistics must have type 'tensor<4xf32>' (the forward's), got 'tensor<4x8xf32>'}}
  // expected-error @+1 {{'tg.layer_norm_grad' op failed to infer returned types}}
  %dx, %dg, %db = tg.layer_norm_grad %dy, %x, %mean, %rstd, %g : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

// A layer_norm_grad rstd over the wrong number of rows.
func.func @layer_norm_grad_rstd_shape(%dy: tensor<2x4x8xf32>, %x: tensor<2x4x8xf32>, %mean: tensor<2x4xf32>, %rstd: tensor<8xf32>, %g: tensor<8xf32>) {
  // expected-error @+2 {{statistics must have type 'tensor<2x4xf32>' (the forward's), got 'tensor<8xf32>'}}
  // expected-error @+1 {{'tg.layer_norm_grad' op failed to infer returned types}}
  %dx, %dg, %db = tg.layer_norm_grad %dy, %x, %mean, %rstd, %g : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

// layer_norm_grad's scale has the size of the last dimension (8), not the first.
func.func @layer_norm_grad_scale_shape(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %s: tensor<4xf32>) {
  // expected-error @+2 {{scale must be a vector of 8 elements (the last dimension of the input), got 'tensor<4xf32>'}}
  // expected-error @+1 {{'tg.layer_norm_grad' op failed to infer returned types}}
  %dx, %dg, %db = tg.layer_norm_grad %dy, %x, %s, %s, %s : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

// layer_norm_grad of a scalar has no dimension to normalize over.
func.func @layer_norm_grad_scalar_input(%x: tensor<f32>, %g: tensor<1xf32>) {
  // expected-error @+2 {{input must have rank 1 or more}}
  // expected-error @+1 {{'tg.layer_norm_grad' op failed to infer returned types}}
  %dx, %dg, %db = tg.layer_norm_grad %x, %x, %x, %x, %g : (tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<1xf32>) -> (tensor<f32>, tensor<1xf32>, tensor<1xf32>)
  return
}

// -----

// rms_norm_grad's gradient has the input's type (bf16 here), not f32.
func.func @rms_norm_grad_grad_output_type(%dy: tensor<4x8xf32>, %x: tensor<4x8xbf16>, %rstd: tensor<4xf32>, %g: tensor<8xbf16>) {
  // expected-error @+2 {{grad_output has type 'tensor<4x8xf32>', the input 'tensor<4x8xbf16>'}}
  // expected-error @+1 {{'tg.rms_norm_grad' op failed to infer returned types}}
  %dx, %dg = tg.rms_norm_grad %dy, %x, %rstd, %g : (tensor<4x8xf32>, tensor<4x8xbf16>, tensor<4xf32>, tensor<8xbf16>) -> (tensor<4x8xbf16>, tensor<8xbf16>)
  return
}

// -----

// An rms_norm_grad rstd that keeps the normalized dimension as a size-1 dimension.
func.func @rms_norm_grad_rstd_shape(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %rstd: tensor<4x1xf32>, %g: tensor<8xf32>) {
  // expected-error @+2 {{statistics must have type 'tensor<4xf32>' (the forward's), got 'tensor<4x1xf32>'}}
  // expected-error @+1 {{'tg.rms_norm_grad' op failed to infer returned types}}
  %dx, %dg = tg.rms_norm_grad %dy, %x, %rstd, %g : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x1xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>)
  return
}

// -----

// rms_norm_grad's scale must be a vector of the last dimension's size.
func.func @rms_norm_grad_scale_shape(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %rstd: tensor<4xf32>, %g: tensor<1x8xf32>) {
  // expected-error @+2 {{scale must be a vector of 8 elements (the last dimension of the input), got 'tensor<1x8xf32>'}}
  // expected-error @+1 {{'tg.rms_norm_grad' op failed to infer returned types}}
  %dx, %dg = tg.rms_norm_grad %dy, %x, %rstd, %g : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<1x8xf32>) -> (tensor<4x8xf32>, tensor<1x8xf32>)
  return
}

// -----

// attention_grad operands of rank 3.
func.func @attention_grad_rank(%q: tensor<2x8x16xf32>, %k: tensor<2x8x16x64xf32>, %lse: tensor<2x8x16xf32>) {
  // expected-error @+2 {{query, key and value must have rank 4 (batch x heads x sequence x head size), got 2x8x16, 2x8x16x64 and 2x8x16x64}}
  // expected-error @+1 {{'tg.attention_grad' op failed to infer returned types}}
  %dq, %dk, %dv = tg.attention_grad %k, %q, %k, %k, %k, %lse : (tensor<2x8x16x64xf32>, tensor<2x8x16xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16xf32>) -> (tensor<2x8x16xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>)
  return
}

// -----

// attention_grad query and key/value of different batch sizes.
func.func @attention_grad_batch(%q: tensor<2x8x16x64xf32>, %k: tensor<3x8x16x64xf32>, %lse: tensor<2x8x16xf32>) {
  // expected-error @+2 {{batch sizes differ: 2, 3 and 3}}
  // expected-error @+1 {{'tg.attention_grad' op failed to infer returned types}}
  %dq, %dk, %dv = tg.attention_grad %q, %q, %k, %k, %q, %lse : (tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<3x8x16x64xf32>, tensor<3x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16xf32>) -> (tensor<2x8x16x64xf32>, tensor<3x8x16x64xf32>, tensor<3x8x16x64xf32>)
  return
}

// -----

// attention_grad key and value with different numbers of heads.
func.func @attention_grad_kv_heads(%q: tensor<2x8x16x64xf32>, %k: tensor<2x2x16x64xf32>, %v: tensor<2x4x16x64xf32>, %lse: tensor<2x8x16xf32>) {
  // expected-error @+2 {{key (2x2x16x64) and value (2x4x16x64) differ in heads or sequence length}}
  // expected-error @+1 {{'tg.attention_grad' op failed to infer returned types}}
  %dq, %dk, %dv = tg.attention_grad %q, %q, %k, %v, %q, %lse : (tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x2x16x64xf32>, tensor<2x4x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x2x16x64xf32>, tensor<2x4x16x64xf32>)
  return
}

// -----

// attention_grad key and value with different sequence lengths.
func.func @attention_grad_kv_sequence(%q: tensor<2x8x16x64xf32>, %k: tensor<2x2x16x64xf32>, %v: tensor<2x2x32x64xf32>, %lse: tensor<2x8x16xf32>) {
  // expected-error @+2 {{key (2x2x16x64) and value (2x2x32x64) differ in heads or sequence length}}
  // expected-error @+1 {{'tg.attention_grad' op failed to infer returned types}}
  %dq, %dk, %dv = tg.attention_grad %q, %q, %k, %v, %q, %lse : (tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x2x16x64xf32>, tensor<2x2x32x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x2x16x64xf32>, tensor<2x2x32x64xf32>)
  return
}

// -----

// Grouped-query attention_grad needs the query heads to be a multiple of the key/value heads.
func.func @attention_grad_gqa_not_multiple(%q: tensor<2x8x16x64xf32>, %k: tensor<2x3x16x64xf32>, %lse: tensor<2x8x16xf32>) {
  // expected-error @+2 {{query heads (8) are not a multiple of key/value heads (3)}}
  // expected-error @+1 {{'tg.attention_grad' op failed to infer returned types}}
  %dq, %dk, %dv = tg.attention_grad %q, %q, %k, %k, %q, %lse : (tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x3x16x64xf32>, tensor<2x3x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x3x16x64xf32>, tensor<2x3x16x64xf32>)
  return
}

// -----

// Zero key/value heads are rejected rather than divided by.
func.func @attention_grad_zero_kv_heads(%q: tensor<2x8x16x64xf32>, %k: tensor<2x0x16x64xf32>, %lse: tensor<2x8x16xf32>) {
  // expected-error @+2 {{query heads (8) are not a multiple of key/value heads (0)}}
  // expected-error @+1 {{'tg.attention_grad' op failed to infer returned types}}
  %dq, %dk, %dv = tg.attention_grad %q, %q, %k, %k, %q, %lse : (tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x0x16x64xf32>, tensor<2x0x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x0x16x64xf32>, tensor<2x0x16x64xf32>)
  return
}

// -----

// attention_grad query and key head sizes differ.
func.func @attention_grad_head_size(%q: tensor<2x8x16x64xf32>, %k: tensor<2x8x16x32xf32>, %lse: tensor<2x8x16xf32>) {
  // expected-error @+2 {{query and key head sizes differ: 64 and 32}}
  // expected-error @+1 {{'tg.attention_grad' op failed to infer returned types}}
  %dq, %dk, %dv = tg.attention_grad %k, %q, %k, %k, %k, %lse : (tensor<2x8x16x32xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x32xf32>, tensor<2x8x16x32xf32>, tensor<2x8x16x32xf32>, tensor<2x8x16xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16x32xf32>, tensor<2x8x16x32xf32>)
  return
}

// -----

// Causal attention_grad with more queries than keys, as the forward rejects it.
func.func @attention_grad_causal_more_queries(%q: tensor<2x8x32x64xf32>, %k: tensor<2x8x16x64xf32>, %lse: tensor<2x8x32xf32>) {
  // expected-error @+2 {{causal attention needs at most as many queries as keys, got 32 queries and 16 keys}}
  // expected-error @+1 {{'tg.attention_grad' op failed to infer returned types}}
  %dq, %dk, %dv = tg.attention_grad %q, %q, %k, %k, %q, %lse causal : (tensor<2x8x32x64xf32>, tensor<2x8x32x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x32x64xf32>, tensor<2x8x32xf32>) -> (tensor<2x8x32x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>)
  return
}

// -----

// A zero attention_grad scale.
func.func @attention_grad_zero_scale(%q: tensor<2x8x16x64xf32>, %lse: tensor<2x8x16xf32>) {
  // expected-error @+2 {{scale must be finite and positive, got 0.000000e+00}}
  // expected-error @+1 {{'tg.attention_grad' op failed to infer returned types}}
  %dq, %dk, %dv = tg.attention_grad %q, %q, %q, %q, %q, %lse scale = 0.000000e+00 : (tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>)
  return
}

// -----

// A negative attention_grad scale.
func.func @attention_grad_negative_scale(%q: tensor<2x8x16x64xf32>, %lse: tensor<2x8x16xf32>) {
  // expected-error @+2 {{scale must be finite and positive, got -1.000000e+00}}
  // expected-error @+1 {{'tg.attention_grad' op failed to infer returned types}}
  %dq, %dk, %dv = tg.attention_grad %q, %q, %q, %q, %q, %lse scale = -1.000000e+00 : (tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>)
  return
}

// -----

// A NaN attention_grad scale.
func.func @attention_grad_nan_scale(%q: tensor<2x8x16x64xf32>, %lse: tensor<2x8x16xf32>) {
  // expected-error @+2 {{scale must be finite and positive, got nan}}
  // expected-error @+1 {{'tg.attention_grad' op failed to infer returned types}}
  %dq, %dk, %dv = tg.attention_grad %q, %q, %q, %q, %q, %lse scale = 0x7FF8000000000000 : (tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16xf32>) -> (tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>)
  return
}

// -----

// attention_grad's grad_output has the forward output's shape: the value head size (32), not the query's (64).
func.func @attention_grad_grad_output_shape(%q: tensor<1x2x8x64xf32>, %v: tensor<1x2x8x32xf32>, %o: tensor<1x2x8x32xf32>, %lse: tensor<1x2x8xf32>) {
  // expected-error @+2 {{grad_output and output must have the forward's output type 'tensor<1x2x8x32xf32>'}}
  // expected-error @+1 {{'tg.attention_grad' op failed to infer returned types}}
  %dq, %dk, %dv = tg.attention_grad %q, %q, %q, %v, %o, %lse : (tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x32xf32>, tensor<1x2x8x32xf32>, tensor<1x2x8xf32>) -> (tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x32xf32>)
  return
}

// -----

// attention_grad's output has the forward output's shape: the query heads (4), not the key/value heads (2).
func.func @attention_grad_output_shape(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %lse: tensor<1x4x8xf32>) {
  // expected-error @+2 {{grad_output and output must have the forward's output type 'tensor<1x4x8x16xf32>'}}
  // expected-error @+1 {{'tg.attention_grad' op failed to infer returned types}}
  %dq, %dk, %dv = tg.attention_grad %q, %q, %k, %k, %k, %lse : (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x4x8xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>)
  return
}

// -----

// attention_grad's output has the query's element type.
func.func @attention_grad_output_element_type(%q: tensor<1x2x8x16xbf16>, %o: tensor<1x2x8x16xf32>, %lse: tensor<1x2x8xf32>) {
  // expected-error @+2 {{grad_output and output must have the forward's output type 'tensor<1x2x8x16xbf16>'}}
  // expected-error @+1 {{'tg.attention_grad' op failed to infer returned types}}
  %dq, %dk, %dv = tg.attention_grad %q, %q, %q, %q, %o, %lse : (tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xf32>, tensor<1x2x8xf32>) -> (tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>)
  return
}

// -----

// attention_grad's logsumexp is f32, whatever the operands' type.
func.func @attention_grad_logsumexp_type(%q: tensor<1x2x8x16xbf16>, %lse: tensor<1x2x8xbf16>) {
  // expected-error @+2 {{logsumexp must have type 'tensor<1x2x8xf32>'}}
  // expected-error @+1 {{'tg.attention_grad' op failed to infer returned types}}
  %dq, %dk, %dv = tg.attention_grad %q, %q, %q, %q, %q, %lse : (tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8xbf16>) -> (tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>)
  return
}

// -----

// attention_grad's logsumexp has one value per query (8), not per key (12).
func.func @attention_grad_logsumexp_shape(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x12x16xf32>, %lse: tensor<1x2x12xf32>) {
  // expected-error @+2 {{logsumexp must have type 'tensor<1x2x8xf32>'}}
  // expected-error @+1 {{'tg.attention_grad' op failed to infer returned types}}
  %dq, %dk, %dv = tg.attention_grad %q, %q, %k, %k, %q, %lse : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x12xf32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x12x16xf32>, tensor<1x2x12x16xf32>)
  return
}

// -----

// embedding_grad's result is a table, a matrix.
func.func @embedding_grad_result_rank(%dy: tensor<4x8xf32>, %ids: tensor<4xi64>) {
  // expected-error @+1 {{'tg.embedding_grad' op result must be a table of rank 2, got 'tensor<100x8x1xf32>'}}
  %0 = tg.embedding_grad %dy[%ids] : (tensor<4x8xf32>, tensor<4xi64>) -> tensor<100x8x1xf32>
  return
}

// -----

// embedding_grad's table has the gradient's element type.
func.func @embedding_grad_element_type(%dy: tensor<4x8xbf16>, %ids: tensor<4xi64>) {
  // expected-error @+1 {{'tg.embedding_grad' op result element type differs from grad_output's}}
  %0 = tg.embedding_grad %dy[%ids] : (tensor<4x8xbf16>, tensor<4xi64>) -> tensor<100x8xf32>
  return
}

// -----

// embedding_grad's gradient has the shape of the ids (4x3), then the table width.
func.func @embedding_grad_indices_shape(%dy: tensor<4x2x8xf32>, %ids: tensor<4x3xi64>) {
  // expected-error @+1 {{'tg.embedding_grad' op grad_output (4x2x8) must have the shape of the indices (4x3) followed by the table width (8)}}
  %0 = tg.embedding_grad %dy[%ids] : (tensor<4x2x8xf32>, tensor<4x3xi64>) -> tensor<100x8xf32>
  return
}

// -----

// embedding_grad's gradient rows have the table width (16), not 8.
func.func @embedding_grad_width(%dy: tensor<4x8xf32>, %ids: tensor<4xi32>) {
  // expected-error @+1 {{'tg.embedding_grad' op grad_output (4x8) must have the shape of the indices (4) followed by the table width (16)}}
  %0 = tg.embedding_grad %dy[%ids] : (tensor<4x8xf32>, tensor<4xi32>) -> tensor<100x16xf32>
  return
}

// -----

// A scalar embedding_grad gradient has no row.
func.func @embedding_grad_scalar_grad(%dy: tensor<f32>, %ids: tensor<i64>) {
  // expected-error @+1 {{'tg.embedding_grad' op grad_output (scalar) must have the shape of the indices (scalar) followed by the table width (8)}}
  %0 = tg.embedding_grad %dy[%ids] : (tensor<f32>, tensor<i64>) -> tensor<100x8xf32>
  return
}

// -----

// cross_entropy_grad labels that are not the logits' shape without the class dimension.
func.func @cross_entropy_grad_label_shape(%dl: tensor<f32>, %logits: tensor<16x100xf32>, %labels: tensor<8xi64>, %lse: tensor<8xf32>) {
  // expected-error @+1 {{'tg.cross_entropy_grad' op labels (8) must have the shape of the logits (16x100) without the class dimension}}
  %0 = tg.cross_entropy_grad mean %dl, %logits, %labels, %lse : (tensor<f32>, tensor<16x100xf32>, tensor<8xi64>, tensor<8xf32>) -> tensor<16x100xf32>
  return
}

// -----

// cross_entropy_grad labels with the logits' full shape (the class dimension kept).
func.func @cross_entropy_grad_label_keeps_class_dim(%dl: tensor<f32>, %logits: tensor<16x100xf32>, %labels: tensor<16x100xi64>, %lse: tensor<16x100xf32>) {
  // expected-error @+1 {{'tg.cross_entropy_grad' op labels (16x100) must have the shape of the logits (16x100) without the class dimension}}
  %0 = tg.cross_entropy_grad sum %dl, %logits, %labels, %lse : (tensor<f32>, tensor<16x100xf32>, tensor<16x100xi64>, tensor<16x100xf32>) -> tensor<16x100xf32>
  return
}

// -----

// Scalar cross_entropy_grad logits have no class dimension.
func.func @cross_entropy_grad_scalar_logits(%dl: tensor<f32>, %logits: tensor<f32>, %labels: tensor<i64>, %lse: tensor<f32>) {
  // expected-error @+1 {{'tg.cross_entropy_grad' op labels (scalar) must have the shape of the logits (scalar) without the class dimension}}
  %0 = tg.cross_entropy_grad mean %dl, %logits, %labels, %lse : (tensor<f32>, tensor<f32>, tensor<i64>, tensor<f32>) -> tensor<f32>
  return
}

// -----

// cross_entropy_grad's logsumexp has one value per token (the labels' shape), not per logit.
func.func @cross_entropy_grad_logsumexp_shape(%dl: tensor<f32>, %logits: tensor<2x8x100xbf16>, %labels: tensor<2x8xi32>, %lse: tensor<16xf32>) {
  // expected-error @+1 {{'tg.cross_entropy_grad' op logsumexp must have type 'tensor<2x8xf32>' (the forward's), got 'tensor<16xf32>'}}
  %0 = tg.cross_entropy_grad mean %dl, %logits, %labels, %lse ignore_index = -100 : (tensor<f32>, tensor<2x8x100xbf16>, tensor<2x8xi32>, tensor<16xf32>) -> tensor<2x8x100xbf16>
  return
}

// -----

// The statistics come from the forward op, which returns them in f32.
func.func @layer_norm_grad_bf16_statistics(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %m: tensor<4xbf16>, %r: tensor<4xbf16>, %g: tensor<8xf32>) {
  // expected-error @+2 {{statistics must have type 'tensor<4xf32>' (the forward's), got 'tensor<4xbf16>'}}
  // expected-error @+1 {{'tg.layer_norm_grad' op failed to infer returned types}}
  %dx, %dg, %db = tg.layer_norm_grad %dy, %x, %m, %r, %g : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xbf16>, tensor<4xbf16>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

// So does cross_entropy its logsumexp.
func.func @cross_entropy_grad_bf16_logsumexp(%d: tensor<f32>, %l: tensor<4x10xf32>, %y: tensor<4xi64>, %lse: tensor<4xbf16>) {
  // expected-error @+1 {{'tg.cross_entropy_grad' op logsumexp must have type 'tensor<4xf32>' (the forward's), got 'tensor<4xbf16>'}}
  %0 = tg.cross_entropy_grad mean %d, %l, %y, %lse : (tensor<f32>, tensor<4x10xf32>, tensor<4xi64>, tensor<4xbf16>) -> tensor<4x10xf32>
  return
}

// -----

// attention_bias_grad: the bias's shape must broadcast to the scores'.
func.func @attention_bias_grad_shape(%q: tensor<2x2x4x16xf32>, %lse: tensor<2x2x4xf32>, %b: tensor<1x3x4x4xf32>) {
  // expected-error @+2 {{bias must be an f32 tensor of shape 2x2x4x4 or with some of those dimensions 1 (broadcast), got 'tensor<1x3x4x4xf32>'}}
  // expected-error @+1 {{'tg.attention_bias_grad' op failed to infer returned types}}
  %db = tg.attention_bias_grad %q, %q, %q, %q, %q, %lse bias %b : (tensor<2x2x4x16xf32>, tensor<2x2x4x16xf32>, tensor<2x2x4x16xf32>, tensor<2x2x4x16xf32>, tensor<2x2x4x16xf32>, tensor<2x2x4xf32>, tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  return
}

// -----

// Its logsumexp is the forward's.
func.func @attention_bias_grad_lse(%q: tensor<2x2x4x16xf32>, %lse: tensor<2x2xf32>, %b: tensor<1x2x4x4xf32>) {
  // expected-error @+2 {{logsumexp must have type 'tensor<2x2x4xf32>'}}
  // expected-error @+1 {{'tg.attention_bias_grad' op failed to infer returned types}}
  %db = tg.attention_bias_grad %q, %q, %q, %q, %q, %lse bias %b : (tensor<2x2x4x16xf32>, tensor<2x2x4x16xf32>, tensor<2x2x4x16xf32>, tensor<2x2x4x16xf32>, tensor<2x2x4x16xf32>, tensor<2x2xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return
}

// -----

// Its dropout needs a seed.
func.func @attention_bias_grad_dropout(%q: tensor<2x2x4x16xf32>, %lse: tensor<2x2x4xf32>, %b: tensor<1x2x4x4xf32>) {
  // expected-error @+1 {{'tg.attention_bias_grad' op attention dropout needs its rate, seed and stream together}}
  %db = tg.attention_bias_grad %q, %q, %q, %q, %q, %lse bias %b dropout = 1.000000e-01 stream = 1 : (tensor<2x2x4x16xf32>, tensor<2x2x4x16xf32>, tensor<2x2x4x16xf32>, tensor<2x2x4x16xf32>, tensor<2x2x4x16xf32>, tensor<2x2x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return
}

// -----

// expert_matmul_grad's result has the matrices' [E, H, O] layout.
func.func @expert_matmul_grad_layout(%x: tensor<4x8xf32>, %dy: tensor<4x16xf32>, %ids: tensor<4xi64>) {
  // expected-error @+1 {{'tg.expert_matmul_grad' op input (4x8) must have the shape of the ids (4) followed by the matrices' input width (16)}}
  %0 = tg.expert_matmul_grad %x, %dy[%ids] : (tensor<4x8xf32>, tensor<4x16xf32>, tensor<4xi64>) -> tensor<2x16x8xf32>
  return
}

// -----

// Its gradient rows follow the ids.
func.func @expert_matmul_grad_rows(%x: tensor<4x8xf32>, %dy: tensor<5x16xf32>, %ids: tensor<4xi64>) {
  // expected-error @+1 {{'tg.expert_matmul_grad' op grad_output (5x16) must have the shape of the ids (4) followed by the matrices' output width (16)}}
  %0 = tg.expert_matmul_grad %x, %dy[%ids] : (tensor<4x8xf32>, tensor<5x16xf32>, tensor<4xi64>) -> tensor<2x8x16xf32>
  return
}

// -----

// One element type throughout.
func.func @expert_matmul_grad_types(%x: tensor<4x8xf32>, %dy: tensor<4x16xf32>, %ids: tensor<4xi64>) {
  // expected-error @+1 {{'tg.expert_matmul_grad' op input, grad_output and result must have one element type, got 'f32', 'f32' and 'bf16'}}
  %0 = tg.expert_matmul_grad %x, %dy[%ids] : (tensor<4x8xf32>, tensor<4x16xf32>, tensor<4xi64>) -> tensor<2x8x16xbf16>
  return
}
