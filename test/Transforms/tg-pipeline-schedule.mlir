// RUN: tgc-opt %s --split-input-file --tg-pipeline-split=stages=2 --tg-pipeline-schedule | FileCheck %s

// Two layers on two stages: the activation moves from stage 0 to stage 1
// through a send/recv pair; the mask, computed from the input alone and
// cheaper than a message, is computed again on stage 1 instead of sent.
// CHECK-LABEL: func.func @two
// CHECK: %[[M0:.*]] = tg.neg %[[X:.*]] {tg.stage = 0 : i64}
// CHECK: %[[H0:.*]] = tg.matmul {{.*}} {tg.stage = 0 : i64}
// CHECK: %[[A0:.*]] = tg.mul %[[H0]], %[[M0]] {tg.stage = 0 : i64}
// CHECK: %[[S:.*]] = shard.send %[[A0]] on @mesh grid_axes = [0] destination = [1] {tg.stage = 0 : i64}
// CHECK: %[[R:.*]] = shard.recv %[[S]] on @mesh grid_axes = [0] source = [0] {tg.stage = 1 : i64}
// CHECK: %[[H1:.*]] = tg.matmul %[[R]], {{.*}} {tg.stage = 1 : i64}
// CHECK: %[[M1:.*]] = tg.neg %[[X]] {tg.stage = 1 : i64}
// CHECK: tg.mul %[[H1]], %[[M1]] {tg.stage = 1 : i64}
// CHECK-NOT: shard.send
module {
  shard.grid @mesh(shape = 2) {tg.mesh_axes = ["pp"]}
  func.func @two(%x: tensor<64x256xf32> {tg.role = "input"},
                 %w0: tensor<256x256xf32> {tg.role = "param", tg.name = "layers.0.w"},
                 %w1: tensor<256x256xf32> {tg.role = "param", tg.name = "layers.1.w"})
      -> (tensor<64x256xf32> {tg.role = "output"}) {
    %m = tg.neg %x : tensor<64x256xf32>
    %h0 = tg.matmul %x, %w0 : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
    %a0 = tg.mul %h0, %m : tensor<64x256xf32>
    %h1 = tg.matmul %a0, %w1 : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
    %a1 = tg.mul %h1, %m : tensor<64x256xf32>
    return %a1 : tensor<64x256xf32>
  }
}

// -----

// A scalar crosses as a one-element tensor.
// CHECK-LABEL: func.func @scalar
// CHECK: %[[S:.*]] = tg.reduce sum {{.*}} {tg.stage = 0 : i64}
// CHECK: %[[V:.*]] = tg.reshape %[[S]] {tg.stage = 0 : i64} : tensor<f32> -> tensor<1xf32>
// CHECK: %[[T:.*]] = shard.send %[[V]]
// CHECK: %[[R:.*]] = shard.recv %[[T]]
// CHECK: tg.reshape %[[R]] {tg.stage = 1 : i64} : tensor<1xf32> -> tensor<f32>
module {
  shard.grid @mesh(shape = 2) {tg.mesh_axes = ["pp"]}
  func.func @scalar(%x: tensor<64x256xf32> {tg.role = "input"},
                    %w0: tensor<256x256xf32> {tg.role = "param", tg.name = "layers.0.w"},
                    %w1: tensor<256x256xf32> {tg.role = "param", tg.name = "layers.1.w"})
      -> (tensor<64x256xf32> {tg.role = "output"}) {
    %h0 = tg.matmul %x, %w0 : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
    %s = tg.reduce sum %h0 dims = [0, 1] : tensor<64x256xf32> -> tensor<f32>
    %h1 = tg.matmul %h0, %w1 : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
    %b = tg.broadcast_in_dim %s dims = [] : tensor<f32> -> tensor<64x256xf32>
    %a1 = tg.mul %h1, %b : tensor<64x256xf32>
    return %a1 : tensor<64x256xf32>
  }
}
