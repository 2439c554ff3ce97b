// RUN: tgc-opt %s --split-input-file --tg-microbatch=micro-batches=2 | FileCheck %s

// The batch arguments double; the body runs on each half; loss and gradient
// are the means.
// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[X:.*]]: tensor<4x3xf32> {tg.role = "input"}, %[[W:.*]]: tensor<3xf32> {tg.name = "w", tg.role = "param"})
// CHECK: %[[X0:.*]] = tg.slice %[[X]] [0:2, 0:3]
// CHECK: %[[L0:.*]] = tg.reduce sum
// CHECK: %[[X1:.*]] = tg.slice %[[X]] [2:4, 0:3]
// CHECK: %[[L1:.*]] = tg.reduce sum
// CHECK: %[[LS:.*]] = tg.add %[[L0]], %[[L1]]
// CHECK: %[[GS:.*]] = tg.add
// CHECK: %[[HALF:.*]] = tg.constant dense<5.000000e-01> : tensor<f32>
// CHECK: %[[LOSS:.*]] = tg.mul %[[LS]], %[[HALF]]
// CHECK: %[[GHALF:.*]] = tg.constant dense<5.000000e-01> : tensor<3xf32>
// CHECK: %[[G:.*]] = tg.mul %[[GS]], %[[GHALF]]
// CHECK: return %[[LOSS]], %[[G]]
func.func @step(%x: tensor<2x3xf32> {tg.role = "input"}, %w: tensor<3xf32> {tg.role = "param", tg.name = "w"})
    -> (tensor<f32> {tg.role = "loss"}, tensor<3xf32> {tg.role = "grad", tg.name = "w.grad"}) {
  %b = tg.broadcast_in_dim %w dims = [1] : tensor<3xf32> -> tensor<2x3xf32>
  %p = tg.mul %x, %b : tensor<2x3xf32>
  %loss = tg.reduce sum %p dims = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  %g = tg.reduce sum %x dims = [0] : tensor<2x3xf32> -> tensor<3xf32>
  return %loss, %g : tensor<f32>, tensor<3xf32>
}

// -----

// A function that is not a differentiated step is left alone.
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%{{.*}}: tensor<2x3xf32> {tg.role = "input"})
func.func @forward(%x: tensor<2x3xf32> {tg.role = "input"}) -> (tensor<f32> {tg.role = "loss"}) {
  %loss = tg.reduce sum %x dims = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  return %loss : tensor<f32>
}
