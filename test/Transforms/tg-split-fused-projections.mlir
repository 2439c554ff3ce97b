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
