// RUN: tgc-opt %s --split-input-file | tgc-opt --split-input-file | FileCheck %s
// RUN: tgc-opt %s --split-input-file --mlir-print-op-generic | tgc-opt --split-input-file | FileCheck %s

// Round trip of the backward ops, in custom syntax and in generic form.

// softmax_grad takes the forward's output, then the gradient, along a middle dimension.
// CHECK-LABEL: func.func @softmax_grad_middle_dim
// CHECK-SAME:    (%[[Y:[^:]+]]: tensor<4x10x6xf32>, %[[DY:[^:]+]]: tensor<4x10x6xf32>)
// CHECK:         %[[R:.+]] = tg.softmax_grad %[[Y]], %[[DY]] dim = 1 : tensor<4x10x6xf32>
// CHECK:         return %[[R]]
func.func @softmax_grad_middle_dim(%y: tensor<4x10x6xf32>, %dy: tensor<4x10x6xf32>) -> tensor<4x10x6xf32> {
  %0 = tg.softmax_grad %y, %dy dim = 1 : tensor<4x10x6xf32>
  return %0 : tensor<4x10x6xf32>
}

// -----

// softmax_grad of bf16 attention probabilities along the last dimension.
// CHECK-LABEL: func.func @softmax_grad_bf16
// CHECK-SAME:    (%[[Y:[^:]+]]: tensor<8x12x128x128xbf16>, %[[DY:[^:]+]]: tensor<8x12x128x128xbf16>)
// CHECK:         %[[R:.+]] = tg.softmax_grad %[[Y]], %[[DY]] dim = 3 : tensor<8x12x128x128xbf16>
// CHECK:         return %[[R]]
func.func @softmax_grad_bf16(%y: tensor<8x12x128x128xbf16>, %dy: tensor<8x12x128x128xbf16>) -> tensor<8x12x128x128xbf16> {
  %0 = tg.softmax_grad %y, %dy dim = 3 : tensor<8x12x128x128xbf16>
  return %0 : tensor<8x12x128x128xbf16>
}

// -----

// gelu_grad prints its approximation before the gradient and the input.
// CHECK-LABEL: func.func @gelu_grad
// CHECK-SAME:    (%[[DY:[^:]+]]: tensor<8x128x3072xf32>, %[[X:[^:]+]]: tensor<8x128x3072xf32>, %[[DYB:[^:]+]]: tensor<16xbf16>, %[[XB:[^:]+]]: tensor<16xbf16>)
// CHECK:         %[[E:.+]] = tg.gelu_grad erf %[[DY]], %[[X]] : tensor<8x128x3072xf32>
// CHECK:         %[[T:.+]] = tg.gelu_grad tanh %[[DY]], %[[X]] : tensor<8x128x3072xf32>
// CHECK:         %[[B:.+]] = tg.gelu_grad tanh %[[DYB]], %[[XB]] : tensor<16xbf16>
// CHECK:         return %[[E]], %[[T]], %[[B]]
func.func @gelu_grad(%dy: tensor<8x128x3072xf32>, %x: tensor<8x128x3072xf32>, %dyb: tensor<16xbf16>, %xb: tensor<16xbf16>) -> (tensor<8x128x3072xf32>, tensor<8x128x3072xf32>, tensor<16xbf16>) {
  %0 = tg.gelu_grad erf %dy, %x : tensor<8x128x3072xf32>
  %1 = tg.gelu_grad tanh %dy, %x : tensor<8x128x3072xf32>
  %2 = tg.gelu_grad tanh %dyb, %xb : tensor<16xbf16>
  return %0, %1, %2 : tensor<8x128x3072xf32>, tensor<8x128x3072xf32>, tensor<16xbf16>
}

// -----

// layer_norm_grad of f32 values: the gradients of the input, the scale and the bias.
// CHECK-LABEL: func.func @layer_norm_grad
// CHECK-SAME:    (%[[DY:[^:]+]]: tensor<4x8xf32>, %[[X:[^:]+]]: tensor<4x8xf32>, %[[MEAN:[^:]+]]: tensor<4xf32>, %[[RSTD:[^:]+]]: tensor<4xf32>, %[[G:[^:]+]]: tensor<8xf32>)
// CHECK:         %[[DX:.+]], %[[DG:.+]], %[[DB:.+]] = tg.layer_norm_grad %[[DY]], %[[X]], %[[MEAN]], %[[RSTD]], %[[G]] : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
// CHECK:         return %[[DX]], %[[DG]], %[[DB]]
func.func @layer_norm_grad(%dy: tensor<4x8xf32>, %x: tensor<4x8xf32>, %mean: tensor<4xf32>, %rstd: tensor<4xf32>, %g: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %dx, %dg, %db = tg.layer_norm_grad %dy, %x, %mean, %rstd, %g : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %dx, %dg, %db : tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// layer_norm_grad of a bf16 input with an f32 scale: the parameter gradients have the scale's type.
// CHECK-LABEL: func.func @layer_norm_grad_bf16_input_f32_scale
// CHECK-SAME:    (%[[DY:[^:]+]]: tensor<8x128x768xbf16>, %[[X:[^:]+]]: tensor<8x128x768xbf16>, %[[MEAN:[^:]+]]: tensor<8x128xf32>, %[[RSTD:[^:]+]]: tensor<8x128xf32>, %[[G:[^:]+]]: tensor<768xf32>)
// CHECK:         %[[DX:.+]], %[[DG:.+]], %[[DB:.+]] = tg.layer_norm_grad %[[DY]], %[[X]], %[[MEAN]], %[[RSTD]], %[[G]] : (tensor<8x128x768xbf16>, tensor<8x128x768xbf16>, tensor<8x128xf32>, tensor<8x128xf32>, tensor<768xf32>) -> (tensor<8x128x768xbf16>, tensor<768xf32>, tensor<768xf32>)
// CHECK:         return %[[DX]], %[[DG]], %[[DB]]
func.func @layer_norm_grad_bf16_input_f32_scale(%dy: tensor<8x128x768xbf16>, %x: tensor<8x128x768xbf16>, %mean: tensor<8x128xf32>, %rstd: tensor<8x128xf32>, %g: tensor<768xf32>) -> (tensor<8x128x768xbf16>, tensor<768xf32>, tensor<768xf32>) {
  %dx, %dg, %db = tg.layer_norm_grad %dy, %x, %mean, %rstd, %g : (tensor<8x128x768xbf16>, tensor<8x128x768xbf16>, tensor<8x128xf32>, tensor<8x128xf32>, tensor<768xf32>) -> (tensor<8x128x768xbf16>, tensor<768xf32>, tensor<768xf32>)
  return %dx, %dg, %db : tensor<8x128x768xbf16>, tensor<768xf32>, tensor<768xf32>
}

// -----

// rms_norm_grad has one statistic, rstd, and no bias gradient.
// CHECK-LABEL: func.func @rms_norm_grad
// CHECK-SAME:    (%[[DY:[^:]+]]: tensor<2x64x256xf32>, %[[X:[^:]+]]: tensor<2x64x256xf32>, %[[RSTD:[^:]+]]: tensor<2x64xf32>, %[[G:[^:]+]]: tensor<256xf32>)
// CHECK:         %[[DX:.+]], %[[DG:.+]] = tg.rms_norm_grad %[[DY]], %[[X]], %[[RSTD]], %[[G]] : (tensor<2x64x256xf32>, tensor<2x64x256xf32>, tensor<2x64xf32>, tensor<256xf32>) -> (tensor<2x64x256xf32>, tensor<256xf32>)
// CHECK:         return %[[DX]], %[[DG]]
func.func @rms_norm_grad(%dy: tensor<2x64x256xf32>, %x: tensor<2x64x256xf32>, %rstd: tensor<2x64xf32>, %g: tensor<256xf32>) -> (tensor<2x64x256xf32>, tensor<256xf32>) {
  %dx, %dg = tg.rms_norm_grad %dy, %x, %rstd, %g : (tensor<2x64x256xf32>, tensor<2x64x256xf32>, tensor<2x64xf32>, tensor<256xf32>) -> (tensor<2x64x256xf32>, tensor<256xf32>)
  return %dx, %dg : tensor<2x64x256xf32>, tensor<256xf32>
}

// -----

// rms_norm_grad of a bf16 input with a bf16 scale.
// CHECK-LABEL: func.func @rms_norm_grad_bf16
// CHECK:         tg.rms_norm_grad %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : (tensor<16x32xbf16>, tensor<16x32xbf16>, tensor<16xf32>, tensor<32xbf16>) -> (tensor<16x32xbf16>, tensor<32xbf16>)
func.func @rms_norm_grad_bf16(%dy: tensor<16x32xbf16>, %x: tensor<16x32xbf16>, %rstd: tensor<16xf32>, %g: tensor<32xbf16>) -> (tensor<16x32xbf16>, tensor<32xbf16>) {
  %dx, %dg = tg.rms_norm_grad %dy, %x, %rstd, %g : (tensor<16x32xbf16>, tensor<16x32xbf16>, tensor<16xf32>, tensor<32xbf16>) -> (tensor<16x32xbf16>, tensor<32xbf16>)
  return %dx, %dg : tensor<16x32xbf16>, tensor<32xbf16>
}

// -----

// attention_grad without causal or scale prints neither keyword.
// CHECK-LABEL: func.func @attention_grad
// CHECK-SAME:    (%[[DO:[^:]+]]: tensor<2x4x16x32xf32>, %[[Q:[^:]+]]: tensor<2x4x16x32xf32>, %[[K:[^:]+]]: tensor<2x4x16x32xf32>, %[[V:[^:]+]]: tensor<2x4x16x32xf32>, %[[O:[^:]+]]: tensor<2x4x16x32xf32>, %[[LSE:[^:]+]]: tensor<2x4x16xf32>)
// CHECK:         %[[DQ:.+]], %[[DK:.+]], %[[DV:.+]] = tg.attention_grad %[[DO]], %[[Q]], %[[K]], %[[V]], %[[O]], %[[LSE]] : (tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16xf32>) -> (tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>)
// CHECK:         return %[[DQ]], %[[DK]], %[[DV]]
func.func @attention_grad(%do: tensor<2x4x16x32xf32>, %q: tensor<2x4x16x32xf32>, %k: tensor<2x4x16x32xf32>, %v: tensor<2x4x16x32xf32>, %o: tensor<2x4x16x32xf32>, %lse: tensor<2x4x16xf32>) -> (tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>) {
  %dq, %dk, %dv = tg.attention_grad %do, %q, %k, %v, %o, %lse : (tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16xf32>) -> (tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>)
  return %dq, %dk, %dv : tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>
}

// -----

// attention_grad with causal and scale, as the forward had them (bf16, fewer queries than keys).
// CHECK-LABEL: func.func @attention_grad_causal_scale
// CHECK-SAME:    (%[[DO:[^:]+]]: tensor<8x12x64x64xbf16>, %[[Q:[^:]+]]: tensor<8x12x64x64xbf16>, %[[K:[^:]+]]: tensor<8x12x128x64xbf16>, %[[V:[^:]+]]: tensor<8x12x128x64xbf16>, %[[O:[^:]+]]: tensor<8x12x64x64xbf16>, %[[LSE:[^:]+]]: tensor<8x12x64xf32>)
// CHECK:         %[[DQ:.+]], %[[DK:.+]], %[[DV:.+]] = tg.attention_grad %[[DO]], %[[Q]], %[[K]], %[[V]], %[[O]], %[[LSE]] causal scale = 1.250000e-01 : (tensor<8x12x64x64xbf16>, tensor<8x12x64x64xbf16>, tensor<8x12x128x64xbf16>, tensor<8x12x128x64xbf16>, tensor<8x12x64x64xbf16>, tensor<8x12x64xf32>) -> (tensor<8x12x64x64xbf16>, tensor<8x12x128x64xbf16>, tensor<8x12x128x64xbf16>)
// CHECK:         return %[[DQ]], %[[DK]], %[[DV]]
func.func @attention_grad_causal_scale(%do: tensor<8x12x64x64xbf16>, %q: tensor<8x12x64x64xbf16>, %k: tensor<8x12x128x64xbf16>, %v: tensor<8x12x128x64xbf16>, %o: tensor<8x12x64x64xbf16>, %lse: tensor<8x12x64xf32>) -> (tensor<8x12x64x64xbf16>, tensor<8x12x128x64xbf16>, tensor<8x12x128x64xbf16>) {
  %dq, %dk, %dv = tg.attention_grad %do, %q, %k, %v, %o, %lse causal scale = 1.250000e-01 : (tensor<8x12x64x64xbf16>, tensor<8x12x64x64xbf16>, tensor<8x12x128x64xbf16>, tensor<8x12x128x64xbf16>, tensor<8x12x64x64xbf16>, tensor<8x12x64xf32>) -> (tensor<8x12x64x64xbf16>, tensor<8x12x128x64xbf16>, tensor<8x12x128x64xbf16>)
  return %dq, %dk, %dv : tensor<8x12x64x64xbf16>, tensor<8x12x128x64xbf16>, tensor<8x12x128x64xbf16>
}

// -----

// attention_grad with a scale but not causal.
// CHECK-LABEL: func.func @attention_grad_scale_only
// CHECK:         tg.attention_grad %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} scale = 5.000000e-01 : (tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4xf32>) -> (tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>)
func.func @attention_grad_scale_only(%q: tensor<1x1x4x16xf32>, %lse: tensor<1x1x4xf32>) -> (tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>) {
  %dq, %dk, %dv = tg.attention_grad %q, %q, %q, %q, %q, %lse scale = 5.000000e-01 : (tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4xf32>) -> (tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>)
  return %dq, %dk, %dv : tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>
}

// -----

// Grouped-query attention_grad: the key/value gradients have the key/value heads (2), not the query heads (8).
// CHECK-LABEL: func.func @attention_grad_grouped_query
// CHECK-SAME:    (%[[DO:[^:]+]]: tensor<2x8x32x16xf16>, %[[Q:[^:]+]]: tensor<2x8x32x64xf16>, %[[K:[^:]+]]: tensor<2x2x32x64xf16>, %[[V:[^:]+]]: tensor<2x2x32x16xf16>, %[[O:[^:]+]]: tensor<2x8x32x16xf16>, %[[LSE:[^:]+]]: tensor<2x8x32xf32>)
// CHECK:         %[[DQ:.+]], %[[DK:.+]], %[[DV:.+]] = tg.attention_grad %[[DO]], %[[Q]], %[[K]], %[[V]], %[[O]], %[[LSE]] causal : (tensor<2x8x32x16xf16>, tensor<2x8x32x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x16xf16>, tensor<2x8x32x16xf16>, tensor<2x8x32xf32>) -> (tensor<2x8x32x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x16xf16>)
// CHECK:         return %[[DQ]], %[[DK]], %[[DV]]
func.func @attention_grad_grouped_query(%do: tensor<2x8x32x16xf16>, %q: tensor<2x8x32x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x16xf16>, %o: tensor<2x8x32x16xf16>, %lse: tensor<2x8x32xf32>) -> (tensor<2x8x32x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x16xf16>) {
  %dq, %dk, %dv = tg.attention_grad %do, %q, %k, %v, %o, %lse causal : (tensor<2x8x32x16xf16>, tensor<2x8x32x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x16xf16>, tensor<2x8x32x16xf16>, tensor<2x8x32xf32>) -> (tensor<2x8x32x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x16xf16>)
  return %dq, %dk, %dv : tensor<2x8x32x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x16xf16>
}

// -----

// embedding_grad with i64 ids scatters into a table of the result's size.
// CHECK-LABEL: func.func @embedding_grad_i64_ids
// CHECK-SAME:    (%[[DY:[^:]+]]: tensor<8x128x768xf32>, %[[IDS:[^:]+]]: tensor<8x128xi64>)
// CHECK:         %[[R:.+]] = tg.embedding_grad %[[DY]][%[[IDS]]] : (tensor<8x128x768xf32>, tensor<8x128xi64>) -> tensor<50257x768xf32>
// CHECK:         return %[[R]]
func.func @embedding_grad_i64_ids(%dy: tensor<8x128x768xf32>, %ids: tensor<8x128xi64>) -> tensor<50257x768xf32> {
  %0 = tg.embedding_grad %dy[%ids] : (tensor<8x128x768xf32>, tensor<8x128xi64>) -> tensor<50257x768xf32>
  return %0 : tensor<50257x768xf32>
}

// -----

// embedding_grad with i32 ids of rank 1 into a bf16 table.
// CHECK-LABEL: func.func @embedding_grad_i32_ids
// CHECK-SAME:    (%[[DY:[^:]+]]: tensor<16x64xbf16>, %[[POS:[^:]+]]: tensor<16xi32>)
// CHECK:         %[[R:.+]] = tg.embedding_grad %[[DY]][%[[POS]]] : (tensor<16x64xbf16>, tensor<16xi32>) -> tensor<1024x64xbf16>
// CHECK:         return %[[R]]
func.func @embedding_grad_i32_ids(%dy: tensor<16x64xbf16>, %pos: tensor<16xi32>) -> tensor<1024x64xbf16> {
  %0 = tg.embedding_grad %dy[%pos] : (tensor<16x64xbf16>, tensor<16xi32>) -> tensor<1024x64xbf16>
  return %0 : tensor<1024x64xbf16>
}

// -----

// cross_entropy_grad with mean reduction, with and without ignore_index.
// CHECK-LABEL: func.func @cross_entropy_grad_mean
// CHECK-SAME:    (%[[DL:[^:]+]]: tensor<f32>, %[[LOGITS:[^:]+]]: tensor<1024x50257xf32>, %[[LABELS:[^:]+]]: tensor<1024xi64>, %[[LSE:[^:]+]]: tensor<1024xf32>)
// CHECK:         %[[G0:.+]] = tg.cross_entropy_grad mean %[[DL]], %[[LOGITS]], %[[LABELS]], %[[LSE]] ignore_index = -100 : (tensor<f32>, tensor<1024x50257xf32>, tensor<1024xi64>, tensor<1024xf32>) -> tensor<1024x50257xf32>
// CHECK:         %[[G1:.+]] = tg.cross_entropy_grad mean %[[DL]], %[[LOGITS]], %[[LABELS]], %[[LSE]] : (tensor<f32>, tensor<1024x50257xf32>, tensor<1024xi64>, tensor<1024xf32>) -> tensor<1024x50257xf32>
// CHECK:         return %[[G0]], %[[G1]]
func.func @cross_entropy_grad_mean(%dloss: tensor<f32>, %logits: tensor<1024x50257xf32>, %labels: tensor<1024xi64>, %lse: tensor<1024xf32>) -> (tensor<1024x50257xf32>, tensor<1024x50257xf32>) {
  %0 = tg.cross_entropy_grad mean %dloss, %logits, %labels, %lse ignore_index = -100 : (tensor<f32>, tensor<1024x50257xf32>, tensor<1024xi64>, tensor<1024xf32>) -> tensor<1024x50257xf32>
  %1 = tg.cross_entropy_grad mean %dloss, %logits, %labels, %lse : (tensor<f32>, tensor<1024x50257xf32>, tensor<1024xi64>, tensor<1024xf32>) -> tensor<1024x50257xf32>
  return %0, %1 : tensor<1024x50257xf32>, tensor<1024x50257xf32>
}

// -----

// cross_entropy_grad with sum reduction over bf16 logits of rank 3, with and without ignore_index.
// CHECK-LABEL: func.func @cross_entropy_grad_sum
// CHECK-SAME:    (%[[DL:[^:]+]]: tensor<f32>, %[[LOGITS:[^:]+]]: tensor<4x32x1000xbf16>, %[[LABELS:[^:]+]]: tensor<4x32xi32>, %[[LSE:[^:]+]]: tensor<4x32xf32>)
// CHECK:         %[[G0:.+]] = tg.cross_entropy_grad sum %[[DL]], %[[LOGITS]], %[[LABELS]], %[[LSE]] ignore_index = 0 : (tensor<f32>, tensor<4x32x1000xbf16>, tensor<4x32xi32>, tensor<4x32xf32>) -> tensor<4x32x1000xbf16>
// CHECK:         %[[G1:.+]] = tg.cross_entropy_grad sum %[[DL]], %[[LOGITS]], %[[LABELS]], %[[LSE]] : (tensor<f32>, tensor<4x32x1000xbf16>, tensor<4x32xi32>, tensor<4x32xf32>) -> tensor<4x32x1000xbf16>
// CHECK:         return %[[G0]], %[[G1]]
func.func @cross_entropy_grad_sum(%dloss: tensor<f32>, %logits: tensor<4x32x1000xbf16>, %labels: tensor<4x32xi32>, %lse: tensor<4x32xf32>) -> (tensor<4x32x1000xbf16>, tensor<4x32x1000xbf16>) {
  %0 = tg.cross_entropy_grad sum %dloss, %logits, %labels, %lse ignore_index = 0 : (tensor<f32>, tensor<4x32x1000xbf16>, tensor<4x32xi32>, tensor<4x32xf32>) -> tensor<4x32x1000xbf16>
  %1 = tg.cross_entropy_grad sum %dloss, %logits, %labels, %lse : (tensor<f32>, tensor<4x32x1000xbf16>, tensor<4x32xi32>, tensor<4x32xf32>) -> tensor<4x32x1000xbf16>
  return %0, %1 : tensor<4x32x1000xbf16>, tensor<4x32x1000xbf16>
}

// -----

// attention_grad with the forward's bias.
// CHECK-LABEL: func.func @attention_grad_bias
// CHECK:         tg.attention_grad %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} bias %{{.+}} scale = 2.500000e-01 : (tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16xf32>, tensor<1x4x16x16xf32>) -> (tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>)
func.func @attention_grad_bias(%do: tensor<2x4x16x32xf32>, %q: tensor<2x4x16x32xf32>, %k: tensor<2x4x16x32xf32>, %v: tensor<2x4x16x32xf32>, %o: tensor<2x4x16x32xf32>, %lse: tensor<2x4x16xf32>, %b: tensor<1x4x16x16xf32>) -> tensor<2x4x16x32xf32> {
  %dq, %dk, %dv = tg.attention_grad %do, %q, %k, %v, %o, %lse bias %b scale = 2.500000e-01 : (tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16xf32>, tensor<1x4x16x16xf32>) -> (tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>)
  return %dq : tensor<2x4x16x32xf32>
}

// -----

// attention_grad with the forward's soft cap and no scale.
// CHECK-LABEL: func.func @attention_grad_softcap
// CHECK:         tg.attention_grad %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} causal softcap = 3.000000e+01 : (tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4xf32>) -> (tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>)
func.func @attention_grad_softcap(%q: tensor<1x1x4x16xf32>, %lse: tensor<1x1x4xf32>) -> (tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>) {
  %dq, %dk, %dv = tg.attention_grad %q, %q, %q, %q, %q, %lse causal softcap = 3.000000e+01 : (tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4xf32>) -> (tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>)
  return %dq, %dk, %dv : tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>
}

// -----

// attention_grad with the forward's dropout.
// CHECK-LABEL: func.func @attention_grad_dropout
// CHECK:         tg.attention_grad %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} causal dropout = 2.500000e-01 seed %{{.+}} stream = 3 : (tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4xf32>, tensor<i64>) -> (tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>)
func.func @attention_grad_dropout(%q: tensor<1x1x4x16xf32>, %lse: tensor<1x1x4xf32>, %seed: tensor<i64>) -> (tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>) {
  %dq, %dk, %dv = tg.attention_grad %q, %q, %q, %q, %q, %lse causal dropout = 2.500000e-01 seed %seed stream = 3 : (tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4xf32>, tensor<i64>) -> (tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>)
  return %dq, %dk, %dv : tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>, tensor<1x1x4x16xf32>
}

// -----

// attention_bias_grad: the gradient of a bias broadcast over the batch,
// with the forward's soft cap and dropout.
// CHECK-LABEL: func.func @attention_bias_grad
// CHECK:         tg.attention_bias_grad %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} bias %{{.+}} causal softcap = 3.000000e+01 dropout = 1.000000e-01 seed %{{.+}} stream = 2 : (tensor<2x2x4x16xf32>, tensor<2x2x4x16xf32>, tensor<2x1x4x16xf32>, tensor<2x1x4x16xf32>, tensor<2x2x4x16xf32>, tensor<2x2x4xf32>, tensor<1x2x4x4xf32>, tensor<i64>) -> tensor<1x2x4x4xf32>
func.func @attention_bias_grad(%q: tensor<2x2x4x16xf32>, %kv: tensor<2x1x4x16xf32>, %lse: tensor<2x2x4xf32>, %b: tensor<1x2x4x4xf32>, %seed: tensor<i64>) -> tensor<1x2x4x4xf32> {
  %db = tg.attention_bias_grad %q, %q, %kv, %kv, %q, %lse bias %b causal softcap = 3.000000e+01 dropout = 1.000000e-01 seed %seed stream = 2 : (tensor<2x2x4x16xf32>, tensor<2x2x4x16xf32>, tensor<2x1x4x16xf32>, tensor<2x1x4x16xf32>, tensor<2x2x4x16xf32>, tensor<2x2x4xf32>, tensor<1x2x4x4xf32>, tensor<i64>) -> tensor<1x2x4x4xf32>
  return %db : tensor<1x2x4x4xf32>
}

// -----

// expert_matmul_grad sums each expert's rows into its matrix, in the
// matrices' layout.
// CHECK-LABEL: func.func @expert_matmul_grad
// CHECK-SAME:    (%[[X:[^:]+]]: tensor<16x64xf32>, %[[DY:[^:]+]]: tensor<16x32xf32>, %[[IDS:[^:]+]]: tensor<16xi64>)
// CHECK:         %[[A:.+]] = tg.expert_matmul_grad %[[X]], %[[DY]][%[[IDS]]] : (tensor<16x64xf32>, tensor<16x32xf32>, tensor<16xi64>) -> tensor<8x64x32xf32>
// CHECK:         %[[B:.+]] = tg.expert_matmul_grad %[[X]], %[[DY]][%[[IDS]]] transpose_b : (tensor<16x64xf32>, tensor<16x32xf32>, tensor<16xi64>) -> tensor<8x32x64xf32>
// CHECK:         return %[[A]], %[[B]]
func.func @expert_matmul_grad(%x: tensor<16x64xf32>, %dy: tensor<16x32xf32>, %ids: tensor<16xi64>) -> (tensor<8x64x32xf32>, tensor<8x32x64xf32>) {
  %0 = tg.expert_matmul_grad %x, %dy[%ids] : (tensor<16x64xf32>, tensor<16x32xf32>, tensor<16xi64>) -> tensor<8x64x32xf32>
  %1 = tg.expert_matmul_grad %x, %dy[%ids] transpose_b : (tensor<16x64xf32>, tensor<16x32xf32>, tensor<16xi64>) -> tensor<8x32x64xf32>
  return %0, %1 : tensor<8x64x32xf32>, tensor<8x32x64xf32>
}
