// RUN: tgc-opt %s --split-input-file --tg-raise=explain=true -verify-diagnostics -o /dev/null
// RUN: grep -v expected-remark %s | tgc-opt --split-input-file --tg-raise -o /dev/null 2>&1 | FileCheck %s --allow-empty --check-prefix=QUIET
// QUIET-NOT: remark

// tg-raise's explain option: a remark per reason an attention is left
// decomposed, at the first attention it keeps so (its product with the
// values), with how many more share it. A raised attention, and a softmax
// that is not an attention's, say nothing.

// Attention dropout on the probabilities is tg.attention's own: raised,
// nothing to say. A dropout of probabilities that are also read elsewhere
// keeps its attention decomposed.
func.func @dropout(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %seed: tensor<i64>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>) {
  %s = tg.matmul %q, %k transpose_b : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %p = tg.softmax %s dim = 3 : tensor<1x2x4x4xf32>
  %d = tg.dropout %p, %seed rate = 1.000000e-01 stream = 1 : tensor<1x2x4x4xf32>, tensor<i64>
  %o = tg.matmul %d, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %s2 = tg.matmul %o, %k transpose_b : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %p2 = tg.softmax %s2 dim = 3 : tensor<1x2x4x4xf32>
  %d2 = tg.dropout %p2, %seed rate = 1.000000e-01 stream = 2 : tensor<1x2x4x4xf32>, tensor<i64>
  // expected-remark @+1 {{an intermediate of the decomposition (the scores or the probabilities) is also used outside it}}
  %o2 = tg.matmul %d2, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o2, %p2 : tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>
}

// -----

// The probabilities are also returned (an attention-weights output).
func.func @probabilities_used(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>) {
  %s = tg.matmul %q, %k transpose_b : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %p = tg.softmax %s dim = 3 : tensor<1x2x4x4xf32>
  // expected-remark @+1 {{an intermediate of the decomposition (the scores or the probabilities) is also used outside it}}
  %o = tg.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o, %p : tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>
}

// -----

// A mask added inside the soft cap.
func.func @mask_inside_softcap(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %m: tensor<1x2x4x4xf32>) -> tensor<1x2x4x8xf32> {
  %s = tg.matmul %q, %k transpose_b : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %a = tg.add %s, %m : tensor<1x2x4x4xf32>
  %cap = tg.constant dense<3.000000e+01> : tensor<1x2x4x4xf32>
  %d = tg.div %a, %cap : tensor<1x2x4x4xf32>
  %t = tg.tanh %d : tensor<1x2x4x4xf32>
  %c = tg.mul %t, %cap : tensor<1x2x4x4xf32>
  %p = tg.softmax %c dim = 3 : tensor<1x2x4x4xf32>
  // expected-remark @+1 {{`tg.add` between the scores' product and the soft cap (a mask inside the cap is capped with the scores)}}
  %o = tg.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// A mask computed at run time added under another that selects.
func.func @two_runtime_masks(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %m: tensor<1x2x4x4xf32>, %pred: tensor<1x2x4x4xi1>) -> tensor<1x2x4x8xf32> {
  %s = tg.matmul %q, %k transpose_b : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %a = tg.add %s, %m : tensor<1x2x4x4xf32>
  %hide = tg.constant dense<0xFF800000> : tensor<1x2x4x4xf32>
  %b = tg.select %pred, %hide, %a : tensor<1x2x4x4xi1>, tensor<1x2x4x4xf32>
  %p = tg.softmax %b dim = 3 : tensor<1x2x4x4xf32>
  // expected-remark @+1 {{`tg.add` on the scores is not what tg.attention takes: scales, masks computed at run time (added, or one select), one constant mask and a soft cap}}
  %o = tg.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Raised: nothing to explain. A softmax over a rank-2 tensor feeding a
// product (a router) is no attention.
func.func @raised_and_router(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %x: tensor<4x3xf32>, %w: tensor<3x5xf32>) -> (tensor<1x2x4x8xf32>, tensor<4x5xf32>) {
  %s = tg.matmul %q, %k transpose_b : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %p = tg.softmax %s dim = 3 : tensor<1x2x4x4xf32>
  %o = tg.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %r = tg.softmax %x dim = 1 : tensor<4x3xf32>
  %y = tg.matmul %r, %w : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  return %o, %y : tensor<1x2x4x8xf32>, tensor<4x5xf32>
}

// -----

// Batch and heads merged into 3-D products of arguments, the softmax over
// the 4-D scores between reshapes (BLOOM's, whose q, k and v are views of
// 4-D tensors, is raised: tg-raise.mlir).
func.func @merged_heads(%q: tensor<4x4x8xf32>, %k: tensor<4x8x4xf32>, %v: tensor<4x4x8xf32>) -> tensor<4x4x8xf32> {
  %s = tg.matmul %q, %k : (tensor<4x4x8xf32>, tensor<4x8x4xf32>) -> tensor<4x4x4xf32>
  %s4 = tg.reshape %s : tensor<4x4x4xf32> -> tensor<2x2x4x4xf32>
  %p = tg.softmax %s4 dim = 3 : tensor<2x2x4x4xf32>
  %p3 = tg.reshape %p : tensor<2x2x4x4xf32> -> tensor<4x4x4xf32>
  // expected-remark @+1 {{its products are 3-D, the batch and the heads merged ([B * H, S, D]), and not views of [B, H, S, D] tensors, which tg-raise would read as BLOOM's}}
  %o = tg.matmul %p3, %v : (tensor<4x4x4xf32>, tensor<4x4x8xf32>) -> tensor<4x4x8xf32>
  return %o : tensor<4x4x8xf32>
}

// -----

// The probabilities scaled by a constant written first (a prob_mod).
func.func @scaled_probabilities(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %s = tg.matmul %q, %k transpose_b : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %p = tg.softmax %s dim = 3 : tensor<1x2x4x4xf32>
  %half = tg.constant dense<5.000000e-01> : tensor<1x2x4x4xf32>
  %h = tg.mul %half, %p : tensor<1x2x4x4xf32>
  // expected-remark @+1 {{`tg.mul` between the softmax and the product with the values}}
  %o = tg.matmul %h, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}
