// RUN: tgc-opt %s --split-input-file --tg-autodiff --verify-diagnostics | FileCheck %s

// A linear layer and a loss: one gradient per param, named after it; no
// gradient is built for the input.
// CHECK-LABEL: func.func @linear
// CHECK-SAME: -> (tensor<f32> {tg.role = "loss"}, tensor<8x2xf32> {tg.name = "w.grad", tg.role = "grad"}, tensor<2xf32> {tg.name = "b.grad", tg.role = "grad"})
// CHECK: %[[LOSS:.*]], %[[LSE:.*]] = tg.cross_entropy mean %[[LOGITS:.*]], %arg3
// CHECK: %[[ONE:.*]] = tg.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[DL:.*]] = tg.cross_entropy_grad mean %[[ONE]], %[[LOGITS]], %arg3, %[[LSE]]
// CHECK-DAG: %[[DB:.*]] = tg.reduce sum %[[DL]] dims = [0]
// CHECK-DAG: %[[DW:.*]] = tg.matmul %arg0, %[[DL]] transpose_a
// CHECK-NOT: transpose_b
// CHECK: return %[[LOSS]], %[[DW]], %[[DB]]
func.func @linear(%x: tensor<4x8xf32> {tg.role = "input"},
                  %w: tensor<8x2xf32> {tg.role = "param", tg.name = "w"},
                  %b: tensor<2xf32> {tg.role = "param", tg.name = "b"},
                  %y: tensor<4xi64> {tg.role = "label"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %0 = tg.matmul %x, %w : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %1 = tg.broadcast_in_dim %b dims = [1] : tensor<2xf32> -> tensor<4x2xf32>
  %2 = tg.add %0, %1 : tensor<4x2xf32>
  %loss, %lse = tg.cross_entropy mean %2, %y : (tensor<4x2xf32>, tensor<4xi64>) -> (tensor<f32>, tensor<4xf32>)
  return %loss : tensor<f32>
}

// -----

// A value used twice accumulates both gradients with an add.
// CHECK-LABEL: func.func @fan_out
// CHECK: %[[T:.*]] = tg.tanh %arg0
// CHECK: %[[ONE:.*]] = tg.constant dense<1.000000e+00> : tensor<f32>
// CHECK: tg.broadcast_in_dim %[[ONE]]
// CHECK: %[[A:.*]] = tg.mul %{{.*}}, %[[T]]
// CHECK: %[[B:.*]] = tg.mul %{{.*}}, %[[T]]
// CHECK: tg.add %[[A]], %[[B]]
// CHECK: return
func.func @fan_out(%p: tensor<4xf32> {tg.role = "param", tg.name = "p"}) -> (tensor<f32> {tg.role = "loss"}) {
  %t = tg.tanh %p : tensor<4xf32>
  %sq = tg.mul %t, %t : tensor<4xf32>
  %loss = tg.reduce sum %sq dims = [0] : tensor<4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// A parameter that does not reach the loss gets zeros, and a remark.
// CHECK-LABEL: func.func @unused
// CHECK: %[[Z:.*]] = tg.constant dense<0.000000e+00> : tensor<3xf32>
// CHECK: return %{{.*}}, %{{.*}}, %[[Z]]
func.func @unused(%p: tensor<4xf32> {tg.role = "param", tg.name = "p"},
                  // expected-remark @+1 {{parameter 'q' does not influence the loss: its gradient is zero}}
                  %q: tensor<3xf32> {tg.role = "param", tg.name = "q"}) -> (tensor<f32> {tg.role = "loss"}) {
  %loss = tg.reduce sum %p dims = [0] : tensor<4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Dropout's backward is the same dropout (seed and stream) of the gradient.
// CHECK-LABEL: func.func @dropout
// CHECK: tg.dropout %arg0, %arg1 rate = 1.000000e-01 stream = 7
// CHECK: tg.dropout %{{.*}}, %arg1 rate = 1.000000e-01 stream = 7
func.func @dropout(%p: tensor<4xf32> {tg.role = "param", tg.name = "p"},
                   %seed: tensor<i64> {tg.role = "hyper"}) -> (tensor<f32> {tg.role = "loss"}) {
  %d = tg.dropout %p, %seed rate = 1.000000e-01 stream = 7 : tensor<4xf32>, tensor<i64>
  %loss = tg.reduce sum %d dims = [0] : tensor<4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Other results are kept; a function without a loss is left alone.
// CHECK-LABEL: func.func @extra_outputs
// CHECK-SAME: -> (tensor<4xf32> {tg.name = "out", tg.role = "output"}, tensor<f32> {tg.role = "loss"}, tensor<4xf32> {tg.name = "p.grad", tg.role = "grad"})
// CHECK-LABEL: func.func @no_loss
// CHECK-SAME: -> tensor<4xf32>
func.func @extra_outputs(%p: tensor<4xf32> {tg.role = "param", tg.name = "p"})
    -> (tensor<4xf32> {tg.role = "output", tg.name = "out"}, tensor<f32> {tg.role = "loss"}) {
  %e = tg.exp %p : tensor<4xf32>
  %loss = tg.reduce sum %e dims = [0] : tensor<4xf32> -> tensor<f32>
  return %e, %loss : tensor<4xf32>, tensor<f32>
}
func.func @no_loss(%p: tensor<4xf32> {tg.role = "param"}) -> tensor<4xf32> {
  return %p : tensor<4xf32>
}

// -----

// Layer norm, attention and GELU use their dedicated backward ops.
// CHECK-LABEL: func.func @block
// CHECK-DAG: tg.gelu_grad tanh
// CHECK-DAG: tg.attention_grad
// CHECK-SAME: causal
// CHECK-DAG: tg.layer_norm_grad
func.func @block(%x: tensor<1x2x4x8xf32> {tg.role = "param", tg.name = "x"},
                 %g: tensor<8xf32> {tg.role = "param", tg.name = "g"},
                 %b: tensor<8xf32> {tg.role = "param", tg.name = "b"}) -> (tensor<f32> {tg.role = "loss"}) {
  %y, %m, %r = tg.layer_norm %x, %g, %b epsilon = 1.000000e-05 : (tensor<1x2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>)
  %o, %lse = tg.attention %y, %y, %y causal : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4xf32>)
  %a = tg.gelu tanh %o : tensor<1x2x4x8xf32>
  %loss = tg.reduce sum %a dims = [0, 1, 2, 3] : tensor<1x2x4x8xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// A mask computed from an input: attention_grad reads the bias, and no
// gradient of the bias is built (nothing trained reaches it).
// CHECK-LABEL: func.func @attention_mask_input
// CHECK:         %[[BIAS:.+]] = tg.select
// CHECK:         tg.attention %{{.+}}, %{{.+}}, %{{.+}} bias %[[BIAS]]
// CHECK:         tg.attention_grad %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} bias %[[BIAS]]
// CHECK-NOT:     tg.exp
// CHECK:         return
func.func @attention_mask_input(%x: tensor<2x2x4x8xf32> {tg.role = "param", tg.name = "x"},
                                %keep: tensor<2x1x1x4xi1> {tg.role = "input", tg.name = "keep"}) -> (tensor<f32> {tg.role = "loss"}) {
  %zero = tg.constant dense<0.000000e+00> : tensor<2x1x1x4xf32>
  %hide = tg.constant dense<0xFF800000> : tensor<2x1x1x4xf32>
  %bias = tg.select %keep, %zero, %hide : tensor<2x1x1x4xi1>, tensor<2x1x1x4xf32>
  %o, %lse = tg.attention %x, %x, %x bias %bias : (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x1x1x4xf32>) -> (tensor<2x2x4x8xf32>, tensor<2x2x4xf32>)
  %loss = tg.reduce sum %o dims = [0, 1, 2, 3] : tensor<2x2x4x8xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// A trained bias: its gradient dS = P * (dO V^T - rowsum(dO * O)), summed
// over the batch it is broadcast along, is tg.attention_bias_grad (no
// [B, H, Sq, Sk] tensor).
// CHECK-LABEL: func.func @attention_bias_param
// CHECK:         tg.attention_grad
// CHECK-SAME:    bias %[[B:[^ ]+]]
// CHECK:         %[[DB:.+]] = tg.attention_bias_grad {{.*}} bias %[[B]] : {{.*}} -> tensor<1x2x4x4xf32>
// CHECK-NOT:     tg.exp
// CHECK:         return {{.*}}%[[DB]]
func.func @attention_bias_param(%x: tensor<2x2x4x8xf32> {tg.role = "param", tg.name = "x"},
                                %b: tensor<1x2x4x4xf32> {tg.role = "param", tg.name = "b"}) -> (tensor<f32> {tg.role = "loss"}) {
  %o, %lse = tg.attention %x, %x, %x bias %b : (tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<2x2x4x8xf32>, tensor<1x2x4x4xf32>) -> (tensor<2x2x4x8xf32>, tensor<2x2x4xf32>)
  %loss = tg.reduce sum %o dims = [0, 1, 2, 3] : tensor<2x2x4x8xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// A float made of integer bits (ONNX's Cast to float8e8m0 clears and sets
// the f32 bits) carries no gradient back: p's gradient comes only through
// the product, as p * bitcast(...) each.
// CHECK-LABEL: func.func @bitcast_of_bits
// CHECK-COUNT-2: tg.bitcast
// CHECK-NOT:     tg.bitcast
// CHECK:         return
func.func @bitcast_of_bits(%p: tensor<4xf32> {tg.role = "param", tg.name = "p"}) -> (tensor<f32> {tg.role = "loss"}) {
  %bits = tg.bitcast %p : tensor<4xf32> -> tensor<4xi32>
  %mask = tg.constant dense<2139095040> : tensor<4xi32>
  %exponent = tg.bitwise and, %bits, %mask : tensor<4xi32>
  %power = tg.bitcast %exponent : tensor<4xi32> -> tensor<4xf32>
  %y = tg.mul %p, %power : tensor<4xf32>
  %loss = tg.reduce sum %y dims = [0] : tensor<4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// padding_idx: the positions whose id is the padding row pass no gradient
// to the table (PyTorch's nn.Embedding(padding_idx=0)).
// CHECK-LABEL: func.func @embedding_padding_idx
// CHECK: tg.embedding %arg1[%arg0] {padding_idx = 0 : i64}
// CHECK: %[[DY:.*]] = tg.broadcast_in_dim
// CHECK: %[[PAD:.*]] = tg.constant dense<0> : tensor<2x3xi64>
// CHECK: %[[KEEP:.*]] = tg.compare ne, %arg0, %[[PAD]]
// CHECK: %[[MASK:.*]] = tg.broadcast_in_dim %[[KEEP]] dims = [0, 1] : tensor<2x3xi1> -> tensor<2x3x4xi1>
// CHECK: %[[ZERO:.*]] = tg.constant dense<0.000000e+00> : tensor<2x3x4xf32>
// CHECK: %[[KEPT:.*]] = tg.select %[[MASK]], %[[DY]], %[[ZERO]]
// CHECK: %[[DT:.*]] = tg.embedding_grad %[[KEPT]][%arg0]
// CHECK: return %{{.*}}, %[[DT]]
func.func @embedding_padding_idx(%ids: tensor<2x3xi64> {tg.role = "input"},
    %t: tensor<5x4xf32> {tg.role = "param", tg.name = "t"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %0 = tg.embedding %t[%ids] {padding_idx = 0 : i64} : (tensor<5x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  %1 = tg.reduce sum %0 dims = [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>
  return %1 : tensor<f32>
}
