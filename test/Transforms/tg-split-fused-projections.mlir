// RUN: tgc-opt %s --split-input-file --tg-split-fused-projections | FileCheck %s

// GPT-2's c_attn: x @ W + b read as three equal slices of the last
// dimension becomes three projections; W [64, 192] is viewed as [64, 3, 64]
// and b [192] as [3, 64], each projection reading its part.
// CHECK-LABEL: func.func @fused_qkv
// CHECK-SAME: %[[W:[^:]+]]: tensor<64x3x64xf32> {tg.name = "c_attn.weight"
// CHECK-SAME: %[[B:[^:]+]]: tensor<3x64xf32> {tg.name = "c_attn.bias"
// CHECK-NOT: tensor<4x192xf32>
// CHECK: %[[W0:.+]] = tg.slice %[[W]] [0:64, 0:1, 0:64]
// CHECK-NEXT: %[[R0:.+]] = tg.reshape %[[W0]] : tensor<64x1x64xf32> -> tensor<64x64xf32>
// CHECK-NEXT: %[[Q:.+]] = tg.matmul %arg0, %[[R0]] : (tensor<4x64xf32>, tensor<64x64xf32>) -> tensor<4x64xf32>
// CHECK-NEXT: %[[B0:.+]] = tg.slice %[[B]] [0:1, 0:64]
// CHECK-NEXT: %[[BR0:.+]] = tg.reshape %[[B0]] : tensor<1x64xf32> -> tensor<64xf32>
// CHECK-NEXT: %[[BB0:.+]] = tg.broadcast_in_dim %[[BR0]] dims = [1] : tensor<64xf32> -> tensor<4x64xf32>
// CHECK-NEXT: %[[QB:.+]] = tg.add %[[Q]], %[[BB0]] : tensor<4x64xf32>
// CHECK: tg.slice %[[W]] [0:64, 1:2, 0:64]
// CHECK: tg.slice %[[B]] [1:2, 0:64]
// CHECK: tg.slice %[[W]] [0:64, 2:3, 0:64]
// CHECK: tg.slice %[[B]] [2:3, 0:64]
// CHECK: %[[V:.+]] = tg.add
// CHECK: return %[[QB]], %{{.+}}, %[[V]]
func.func @fused_qkv(%x: tensor<4x64xf32> {tg.role = "input"},
    %w: tensor<64x192xf32> {tg.role = "param", tg.name = "c_attn.weight"},
    %b: tensor<192xf32> {tg.role = "param", tg.name = "c_attn.bias"})
    -> (tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>) {
  %y = tg.matmul %x, %w : (tensor<4x64xf32>, tensor<64x192xf32>) -> tensor<4x192xf32>
  %bb = tg.broadcast_in_dim %b dims = [1] : tensor<192xf32> -> tensor<4x192xf32>
  %z = tg.add %y, %bb : tensor<4x192xf32>
  %q = tg.slice %z [0:4, 0:64] : tensor<4x192xf32> -> tensor<4x64xf32>
  %k = tg.slice %z [0:4, 64:128] : tensor<4x192xf32> -> tensor<4x64xf32>
  %v = tg.slice %z [0:4, 128:192] : tensor<4x192xf32> -> tensor<4x64xf32>
  return %q, %k, %v : tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>
}

// -----

// A PyTorch export reads the [3h, h] weight through a transpose: the view
// splits its first dimension, and each part is transposed again.
// CHECK-LABEL: func.func @transposed
// CHECK-SAME: tensor<2x8x16xf32>
// CHECK: %[[P:.+]] = tg.slice %arg1 [0:1, 0:8, 0:16] : tensor<2x8x16xf32> -> tensor<1x8x16xf32>
// CHECK-NEXT: %[[R:.+]] = tg.reshape %[[P]] : tensor<1x8x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT: %[[T:.+]] = tg.transpose %[[R]] perm = [1, 0] : tensor<8x16xf32> -> tensor<16x8xf32>
// CHECK-NEXT: tg.matmul %arg0, %[[T]] : (tensor<2x16xf32>, tensor<16x8xf32>) -> tensor<2x8xf32>
func.func @transposed(%x: tensor<2x16xf32> {tg.role = "input"},
    %w: tensor<16x16xf32> {tg.role = "param", tg.name = "qkv.weight"})
    -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %t = tg.transpose %w perm = [1, 0] : tensor<16x16xf32> -> tensor<16x16xf32>
  %y = tg.matmul %x, %t : (tensor<2x16xf32>, tensor<16x16xf32>) -> tensor<2x16xf32>
  %a = tg.slice %y [0:2, 0:8] : tensor<2x16xf32> -> tensor<2x8xf32>
  %b = tg.slice %y [0:2, 8:16] : tensor<2x16xf32> -> tensor<2x8xf32>
  return %a, %b : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// A weight read elsewhere too keeps its old shape for that reader.
// CHECK-LABEL: func.func @also_read
// CHECK-SAME: tensor<4x2x4xf32>
// CHECK: %[[WHOLE:.+]] = tg.reshape %arg1 : tensor<4x2x4xf32> -> tensor<4x8xf32>
// CHECK: tg.add %[[WHOLE]], %[[WHOLE]]
func.func @also_read(%x: tensor<2x4xf32> {tg.role = "input"},
    %w: tensor<4x8xf32> {tg.role = "param", tg.name = "w"})
    -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<4x8xf32>) {
  %y = tg.matmul %x, %w : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<2x8xf32>
  %a = tg.slice %y [0:2, 0:4] : tensor<2x8xf32> -> tensor<2x4xf32>
  %b = tg.slice %y [0:2, 4:8] : tensor<2x8xf32> -> tensor<2x4xf32>
  %d = tg.add %w, %w : tensor<4x8xf32>
  return %a, %b, %d : tensor<2x4xf32>, tensor<2x4xf32>, tensor<4x8xf32>
}

// -----

// Not split: unequal slices, a slice of another dimension, another reader
// of the projection, and a right-hand side that is no parameter.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-4: tg.matmul {{.*}} -> tensor<2x8xf32>
// CHECK-NOT: tg.matmul
func.func @kept(%x: tensor<2x4xf32> {tg.role = "input"},
    %w: tensor<4x8xf32> {tg.role = "param", tg.name = "w"},
    %u: tensor<4x8xf32> {tg.role = "param", tg.name = "u"},
    %s: tensor<4x8xf32> {tg.role = "param", tg.name = "s"},
    %i: tensor<4x8xf32> {tg.role = "input"})
    -> (tensor<2x2xf32>, tensor<2x6xf32>, tensor<1x8xf32>, tensor<2x4xf32>, tensor<2x8xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %y = tg.matmul %x, %w : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<2x8xf32>
  %a = tg.slice %y [0:2, 0:2] : tensor<2x8xf32> -> tensor<2x2xf32>
  %b = tg.slice %y [0:2, 2:8] : tensor<2x8xf32> -> tensor<2x6xf32>
  %z = tg.matmul %x, %u : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<2x8xf32>
  %c = tg.slice %z [0:1, 0:8] : tensor<2x8xf32> -> tensor<1x8xf32>
  %v = tg.matmul %x, %s : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<2x8xf32>
  %d = tg.slice %v [0:2, 0:4] : tensor<2x8xf32> -> tensor<2x4xf32>
  %n = tg.matmul %x, %i : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<2x8xf32>
  %e = tg.slice %n [0:2, 0:4] : tensor<2x8xf32> -> tensor<2x4xf32>
  %f = tg.slice %n [0:2, 4:8] : tensor<2x8xf32> -> tensor<2x4xf32>
  return %a, %b, %c, %d, %v, %e, %f : tensor<2x2xf32>, tensor<2x6xf32>, tensor<1x8xf32>, tensor<2x4xf32>, tensor<2x8xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// A mixture of experts' fused gate and up products (Mixtral: [E, 2f, h]
// applied transposed, read as two blocks of the output): the stack is
// viewed as [E, 2, f, h], and each product reads its half of every expert.
// CHECK-LABEL: func.func @experts
// CHECK-SAME: %[[W:[^:]+]]: tensor<4x2x6x8xf32> {tg.name = "experts.gate_up_proj"
// CHECK: %[[G:.+]] = tg.slice %[[W]] [0:4, 0:1, 0:6, 0:8] : tensor<4x2x6x8xf32> -> tensor<4x1x6x8xf32>
// CHECK-NEXT: %[[GR:.+]] = tg.reshape %[[G]] : tensor<4x1x6x8xf32> -> tensor<4x6x8xf32>
// CHECK-NEXT: %[[GATE:.+]] = tg.expert_matmul %arg0, %[[GR]][%arg1] transpose_b : (tensor<5x8xf32>, tensor<4x6x8xf32>, tensor<5xi64>) -> tensor<5x6xf32>
// CHECK: tg.slice %[[W]] [0:4, 1:2, 0:6, 0:8]
// CHECK: %[[UP:.+]] = tg.expert_matmul
// CHECK: return %[[GATE]], %[[UP]]
func.func @experts(%x: tensor<5x8xf32> {tg.role = "input"},
    %ids: tensor<5xi64> {tg.role = "input"},
    %w: tensor<4x12x8xf32> {tg.role = "param", tg.name = "experts.gate_up_proj"})
    -> (tensor<5x6xf32>, tensor<5x6xf32>) {
  %y = tg.expert_matmul %x, %w[%ids] transpose_b : (tensor<5x8xf32>, tensor<4x12x8xf32>, tensor<5xi64>) -> tensor<5x12xf32>
  %g = tg.slice %y [0:5, 0:6] : tensor<5x12xf32> -> tensor<5x6xf32>
  %u = tg.slice %y [0:5, 6:12] : tensor<5x12xf32> -> tensor<5x6xf32>
  return %g, %u : tensor<5x6xf32>, tensor<5x6xf32>
}

// -----

// GPT-OSS's experts: [E, h, 2f] with a bias row per expert gathered by the
// same ids, read as interleaved parts (gate the even columns, up the odd).
// Both are viewed with the parts innermost: [E, h, f, 2] and [E, f, 2].
// CHECK-LABEL: func.func @interleaved_experts
// CHECK-SAME: %[[W:[^:]+]]: tensor<4x8x6x2xf32> {tg.name = "experts.gate_up_proj"
// CHECK-SAME: %[[B:[^:]+]]: tensor<4x6x2xf32> {tg.name = "experts.gate_up_proj_bias"
// CHECK: %[[W0:.+]] = tg.slice %[[W]] [0:4, 0:8, 0:6, 0:1] : tensor<4x8x6x2xf32> -> tensor<4x8x6x1xf32>
// CHECK-NEXT: %[[R0:.+]] = tg.reshape %[[W0]] : tensor<4x8x6x1xf32> -> tensor<4x8x6xf32>
// CHECK-NEXT: %[[P0:.+]] = tg.expert_matmul %arg0, %[[R0]][%arg1] : (tensor<5x8xf32>, tensor<4x8x6xf32>, tensor<5xi64>) -> tensor<5x6xf32>
// CHECK-NEXT: %[[B0:.+]] = tg.slice %[[B]] [0:4, 0:6, 0:1] : tensor<4x6x2xf32> -> tensor<4x6x1xf32>
// CHECK-NEXT: %[[BR0:.+]] = tg.reshape %[[B0]] : tensor<4x6x1xf32> -> tensor<4x6xf32>
// CHECK-NEXT: %[[E0:.+]] = tg.embedding %[[BR0]][%arg1] : (tensor<4x6xf32>, tensor<5xi64>) -> tensor<5x6xf32>
// CHECK-NEXT: %[[GATE:.+]] = tg.add %[[P0]], %[[E0]] : tensor<5x6xf32>
// CHECK: tg.slice %[[W]] [0:4, 0:8, 0:6, 1:2]
// CHECK: tg.slice %[[B]] [0:4, 0:6, 1:2]
// CHECK: %[[UP:.+]] = tg.add
// CHECK: return %[[GATE]], %[[UP]]
func.func @interleaved_experts(%x: tensor<5x8xf32> {tg.role = "input"},
    %ids: tensor<5xi64> {tg.role = "input"},
    %w: tensor<4x8x12xf32> {tg.role = "param", tg.name = "experts.gate_up_proj"},
    %b: tensor<4x12xf32> {tg.role = "param", tg.name = "experts.gate_up_proj_bias"})
    -> (tensor<5x6xf32>, tensor<5x6xf32>) {
  %y = tg.expert_matmul %x, %w[%ids] : (tensor<5x8xf32>, tensor<4x8x12xf32>, tensor<5xi64>) -> tensor<5x12xf32>
  %bias = tg.embedding %b[%ids] : (tensor<4x12xf32>, tensor<5xi64>) -> tensor<5x12xf32>
  %z = tg.add %y, %bias : tensor<5x12xf32>
  %g = tg.slice %z [0:5, 0:12:2] : tensor<5x12xf32> -> tensor<5x6xf32>
  %u = tg.slice %z [0:5, 1:12:2] : tensor<5x12xf32> -> tensor<5x6xf32>
  return %g, %u : tensor<5x6xf32>, tensor<5x6xf32>
}

// -----

// Not split: interleaved slices that skip a part or overlap, and an
// expert's bias gathered by other ids than the product's.
// CHECK-LABEL: func.func @kept_experts
// CHECK-COUNT-3: tg.expert_matmul {{.*}} -> tensor<5x12xf32>
// CHECK-NOT: tg.expert_matmul
func.func @kept_experts(%x: tensor<5x8xf32> {tg.role = "input"},
    %ids: tensor<5xi64> {tg.role = "input"},
    %other: tensor<5xi64> {tg.role = "input"},
    %w: tensor<4x8x12xf32> {tg.role = "param", tg.name = "w"},
    %v: tensor<4x8x12xf32> {tg.role = "param", tg.name = "v"},
    %u: tensor<4x8x12xf32> {tg.role = "param", tg.name = "u"},
    %b: tensor<4x12xf32> {tg.role = "param", tg.name = "b"})
    -> (tensor<5x4xf32>, tensor<5x4xf32>, tensor<5x6xf32>, tensor<5x6xf32>, tensor<5x6xf32>, tensor<5x6xf32>) {
  %y = tg.expert_matmul %x, %w[%ids] : (tensor<5x8xf32>, tensor<4x8x12xf32>, tensor<5xi64>) -> tensor<5x12xf32>
  %a0 = tg.slice %y [0:5, 0:12:3] : tensor<5x12xf32> -> tensor<5x4xf32>
  %a1 = tg.slice %y [0:5, 1:12:3] : tensor<5x12xf32> -> tensor<5x4xf32>
  %z = tg.expert_matmul %x, %v[%ids] : (tensor<5x8xf32>, tensor<4x8x12xf32>, tensor<5xi64>) -> tensor<5x12xf32>
  %b0 = tg.slice %z [0:5, 0:12:2] : tensor<5x12xf32> -> tensor<5x6xf32>
  %b1 = tg.slice %z [0:5, 0:12:2] : tensor<5x12xf32> -> tensor<5x6xf32>
  %t = tg.expert_matmul %x, %u[%ids] : (tensor<5x8xf32>, tensor<4x8x12xf32>, tensor<5xi64>) -> tensor<5x12xf32>
  %bias = tg.embedding %b[%other] : (tensor<4x12xf32>, tensor<5xi64>) -> tensor<5x12xf32>
  %s = tg.add %t, %bias : tensor<5x12xf32>
  %c0 = tg.slice %s [0:5, 0:6] : tensor<5x12xf32> -> tensor<5x6xf32>
  %c1 = tg.slice %s [0:5, 6:12] : tensor<5x12xf32> -> tensor<5x6xf32>
  return %a0, %a1, %b0, %b1, %c0, %c1 : tensor<5x4xf32>, tensor<5x4xf32>, tensor<5x6xf32>, tensor<5x6xf32>, tensor<5x6xf32>, tensor<5x6xf32>
}
