// RUN: tgc-opt %s --split-input-file --tg-lora='rank=2 alpha=4 targets=*' 2>/dev/null | FileCheck %s
// RUN: tgc-opt %s --split-input-file --tg-lora='rank=2' | FileCheck %s --check-prefix=ALL
// RUN: tgc-opt %s --split-input-file --tg-lora='rank=2' --tg-autodiff | FileCheck %s --check-prefix=GRAD
// RUN: tgc-opt %s --split-input-file --tg-lora='rank=2 targets=*' 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK

// A linear layer: A [in, r] and B [r, out] (B zeros) after the other
// arguments, PEFT's names for a `P.weight`; y + ((x @ A) @ B) * alpha/r right
// after the matmul, and every reader of y reads the sum. The whole base
// model, the bias too, is frozen.
// CHECK-LABEL: func.func @linear
// CHECK-SAME: %arg1: tensor<8x16xf32> {tg.frozen, tg.name = "fc1.weight", tg.role = "param"}
// CHECK-SAME: %arg2: tensor<16xf32> {tg.frozen, tg.name = "fc1.bias", tg.role = "param"}
// CHECK-SAME: %[[A:arg4]]: tensor<8x2xf32> {tg.name = "fc1.lora_A.weight", tg.role = "param"}
// CHECK-SAME: %[[B:arg5]]: tensor<2x16xf32> {tg.init = "zeros", tg.name = "fc1.lora_B.weight", tg.role = "param"}
// CHECK: %[[Y:.*]] = tg.matmul %arg0, %arg1 :
// CHECK-NEXT: %[[DOWN:.*]] = tg.matmul %arg0, %[[A]] : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
// CHECK-NEXT: %[[UP:.*]] = tg.matmul %[[DOWN]], %[[B]] : (tensor<4x2xf32>, tensor<2x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT: %[[S:.*]] = tg.constant dense<2.000000e+00> : tensor<4x16xf32>
// CHECK-NEXT: %[[SCALED:.*]] = tg.mul %[[UP]], %[[S]]
// CHECK-NEXT: %[[SUM:.*]] = tg.add %[[Y]], %[[SCALED]]
// CHECK: tg.add %[[SUM]], %{{.*}} : tensor<4x16xf32>
// Without targets every parameter used only as a matmul weight is adapted;
// alpha = rank: a scaling of 1.
// ALL-LABEL: func.func @linear
// ALL: tg.name = "fc1.lora_A.weight"
// ALL: tg.constant dense<1.000000e+00> : tensor<4x16xf32>
// Differentiated: gradients of the adapters only.
// GRAD-LABEL: func.func @linear
// GRAD-SAME: -> (tensor<f32> {tg.role = "loss"}, tensor<8x2xf32> {tg.name = "fc1.lora_A.weight.grad", tg.role = "grad"}, tensor<2x16xf32> {tg.name = "fc1.lora_B.weight.grad", tg.role = "grad"})
func.func @linear(%x: tensor<4x8xf32> {tg.role = "input"},
                  %w: tensor<8x16xf32> {tg.role = "param", tg.name = "fc1.weight"},
                  %bias: tensor<16xf32> {tg.role = "param", tg.name = "fc1.bias"},
                  %y: tensor<4xi64> {tg.role = "label"}) -> (tensor<f32> {tg.role = "loss"}) {
  %h = tg.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %b = tg.broadcast_in_dim %bias dims = [1] : tensor<16xf32> -> tensor<4x16xf32>
  %o = tg.add %h, %b : tensor<4x16xf32>
  %loss, %lse = tg.cross_entropy mean %o, %y : (tensor<4x16xf32>, tensor<4xi64>) -> (tensor<f32>, tensor<4xf32>)
  return %loss : tensor<f32>
}

// -----

// A weight used transposed (x @ W^T, W stored [out, in] as nn.Linear does):
// A [in, r], B [r, out] with in and out as the matmul uses them; a name
// without `.weight` gets `.lora_A`/`.lora_B` appended.
// CHECK-LABEL: func.func @transposed
// CHECK-SAME: %[[A:arg2]]: tensor<8x2xf32> {tg.name = "onnx::MatMul_7.lora_A", tg.role = "param"}
// CHECK-SAME: %[[B:arg3]]: tensor<2x6xf32> {tg.init = "zeros", tg.name = "onnx::MatMul_7.lora_B", tg.role = "param"}
// CHECK: tg.matmul %arg0, %arg1 transpose_b : (tensor<3x4x8xf32>, tensor<6x8xf32>) -> tensor<3x4x6xf32>
// CHECK-NEXT: %[[DOWN:.*]] = tg.matmul %arg0, %[[A]] : (tensor<3x4x8xf32>, tensor<8x2xf32>) -> tensor<3x4x2xf32>
// CHECK-NEXT: tg.matmul %[[DOWN]], %[[B]] : (tensor<3x4x2xf32>, tensor<2x6xf32>) -> tensor<3x4x6xf32>
func.func @transposed(%x: tensor<3x4x8xf32> {tg.role = "input"},
                      %w: tensor<6x8xf32> {tg.role = "param", tg.name = "onnx::MatMul_7"}) -> (tensor<f32> {tg.role = "loss"}) {
  %h = tg.matmul %x, %w transpose_b : (tensor<3x4x8xf32>, tensor<6x8xf32>) -> tensor<3x4x6xf32>
  %loss = tg.reduce sum %h dims = [0, 1, 2] : tensor<3x4x6xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// An nn.Linear weight [out, in] as ONNX exports read it, through a transpose
// of its last two dimensions: in and out as the matmul uses them.
// CHECK-LABEL: func.func @through_transpose
// CHECK-SAME: %[[A:arg2]]: tensor<8x2xf32> {tg.name = "q_proj.lora_A.weight", tg.role = "param"}
// CHECK-SAME: %[[B:arg3]]: tensor<2x6xf32> {tg.init = "zeros", tg.name = "q_proj.lora_B.weight", tg.role = "param"}
// CHECK: %[[T:.*]] = tg.transpose %arg1
// CHECK-NEXT: tg.matmul %arg0, %[[T]] :
// CHECK-NEXT: %[[DOWN:.*]] = tg.matmul %arg0, %[[A]] : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
// CHECK-NEXT: tg.matmul %[[DOWN]], %[[B]] : (tensor<4x2xf32>, tensor<2x6xf32>) -> tensor<4x6xf32>
func.func @through_transpose(%x: tensor<4x8xf32> {tg.role = "input"},
                             %w: tensor<6x8xf32> {tg.role = "param", tg.name = "q_proj.weight"}) -> (tensor<f32> {tg.role = "loss"}) {
  %t = tg.transpose %w perm = [1, 0] : tensor<6x8xf32> -> tensor<8x6xf32>
  %h = tg.matmul %x, %t : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
  %loss = tg.reduce sum %h dims = [0, 1] : tensor<4x6xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// A batched weight (one matrix per group) gets batched adapters; an input
// transposed by the matmul (transpose_a) is transposed for A too.
// CHECK-LABEL: func.func @batched
// CHECK-SAME: %[[A:arg2]]: tensor<3x8x2xf32> {tg.name = "experts.lora_A", tg.role = "param"}
// CHECK-SAME: %[[B:arg3]]: tensor<3x2x5xf32> {tg.init = "zeros", tg.name = "experts.lora_B", tg.role = "param"}
// CHECK: %[[DOWN:.*]] = tg.matmul %arg0, %[[A]] transpose_a : (tensor<3x8x4xf32>, tensor<3x8x2xf32>) -> tensor<3x4x2xf32>
// CHECK-NEXT: tg.matmul %[[DOWN]], %[[B]] : (tensor<3x4x2xf32>, tensor<3x2x5xf32>) -> tensor<3x4x5xf32>
func.func @batched(%x: tensor<3x8x4xf32> {tg.role = "input"},
                   %w: tensor<3x8x5xf32> {tg.role = "param", tg.name = "experts"}) -> (tensor<f32> {tg.role = "loss"}) {
  %h = tg.matmul %x, %w transpose_a : (tensor<3x8x4xf32>, tensor<3x8x5xf32>) -> tensor<3x4x5xf32>
  %loss = tg.reduce sum %h dims = [0, 1, 2] : tensor<3x4x5xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// A weight read by two matmuls has one adapter, which both matmuls use.
// CHECK-LABEL: func.func @shared
// CHECK-SAME: %[[A:arg2]]: tensor<8x2xf32> {tg.name = "shared.lora_A.weight", tg.role = "param"}
// CHECK-SAME: %[[B:arg3]]: tensor<2x8xf32> {tg.init = "zeros", tg.name = "shared.lora_B.weight", tg.role = "param"})
// CHECK: tg.matmul %arg0, %arg1
// CHECK-NEXT: tg.matmul %arg0, %[[A]]
// CHECK-NEXT: tg.matmul %{{.*}}, %[[B]]
// CHECK: %[[H:.*]] = tg.add
// CHECK: tg.matmul %[[H]], %arg1
// CHECK-NEXT: tg.matmul %[[H]], %[[A]]
// CHECK-NEXT: tg.matmul %{{.*}}, %[[B]]
func.func @shared(%x: tensor<4x8xf32> {tg.role = "input"},
                  %w: tensor<8x8xf32> {tg.role = "param", tg.name = "shared.weight"}) -> (tensor<f32> {tg.role = "loss"}) {
  %h = tg.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %o = tg.matmul %h, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %loss = tg.reduce sum %o dims = [0, 1] : tensor<4x8xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// A table that tg.embedding reads is no matmul weight, even where a matmul
// reads it too (GPT-2's tied LM head): no adapter, but frozen with the rest
// of the base model.
// REMARK: remark: tg-lora: parameter 'wte.weight' gets no adapter: it is also read by 'tg.embedding'
// CHECK-LABEL: func.func @tied
// CHECK-SAME: %arg1: tensor<10x8xf32> {tg.frozen, tg.name = "wte.weight", tg.role = "param"}
// CHECK-SAME: tg.name = "head.lora_A.weight"
// CHECK-NOT: wte.lora
func.func @tied(%ids: tensor<4xi64> {tg.role = "input"},
                %wte: tensor<10x8xf32> {tg.role = "param", tg.name = "wte.weight"},
                %w: tensor<8x8xf32> {tg.role = "param", tg.name = "head.weight"}) -> (tensor<f32> {tg.role = "loss"}) {
  %e = tg.embedding %wte[%ids] : (tensor<10x8xf32>, tensor<4xi64>) -> tensor<4x8xf32>
  %h = tg.matmul %e, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %l = tg.matmul %h, %wte transpose_b : (tensor<4x8xf32>, tensor<10x8xf32>) -> tensor<4x10xf32>
  %loss = tg.reduce sum %l dims = [0, 1] : tensor<4x10xf32> -> tensor<f32>
  return %loss : tensor<f32>
}
