// RUN: tgc-opt %s --split-input-file --tg-schedule | FileCheck %s
// RUN: tgc-opt %s --split-input-file --tg-schedule='explain' --verify-diagnostics > /dev/null

// Each parameter's update runs as soon as its gradient exists, so the 16 KiB
// gradient of w dies before exp's 16 KiB result is allocated: the peak drops
// by one such buffer.
// CHECK-LABEL: func.func @update_early
// CHECK:       %[[GW:.+]] = tg.matmul
// CHECK-NEXT:  tg.sgd %arg0, %[[GW]]
// CHECK-NEXT:  tg.exp
// CHECK-NEXT:  %[[GB:.+]] = tg.reduce sum
// CHECK-NEXT:  tg.sgd %arg1, %[[GB]]
// expected-remark @+1 {{tg-schedule: simulated peak 82436 -> 66052 bytes (-19.87%)}}
func.func @update_early(%w: tensor<64x64xf32> {tg.role = "param", tg.name = "w"},
                        %b: tensor<64xf32> {tg.role = "param", tg.name = "b"},
                        %x: tensor<64x64xf32> {tg.role = "input"},
                        %dy: tensor<64x64xf32> {tg.role = "input"},
                        %lr: tensor<f32> {tg.role = "hyper"})
    -> (tensor<64x64xf32> {tg.role = "param", tg.name = "w", tg.aliases = 0 : i64},
        tensor<64xf32> {tg.role = "param", tg.name = "b", tg.aliases = 1 : i64}) {
  %gw = tg.matmul %x, %dy transpose_a : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %e = tg.exp %dy : tensor<64x64xf32>
  %gb = tg.reduce sum %e dims = [0] : tensor<64x64xf32> -> tensor<64xf32>
  %w2 = tg.sgd %w, %gw, %lr momentum = 0.0 weight_decay = 0.0 : tensor<64x64xf32>, tensor<f32>
  %b2 = tg.sgd %b, %gb, %lr momentum = 0.0 weight_decay = 0.0 : tensor<64xf32>, tensor<f32>
  return %w2, %b2 : tensor<64x64xf32>, tensor<64xf32>
}

// -----

// Consuming the first two values before computing the third lowers the peak
// from five buffers to four; operands still come before their users.
// CHECK-LABEL: func.func @consume_first
// CHECK:       %[[A:.+]] = tg.exp %arg0
// CHECK-NEXT:  %[[B:.+]] = tg.tanh %arg0
// CHECK-NEXT:  %[[D:.+]] = tg.add %[[A]], %[[B]]
// CHECK-NEXT:  %[[C:.+]] = tg.sigmoid %arg0
// CHECK-NEXT:  tg.add %[[D]], %[[C]]
// expected-remark @+1 {{tg-schedule: simulated peak 5120 -> 4096 bytes (-20.00%)}}
func.func @consume_first(%x: tensor<256xf32> {tg.role = "input"}) -> tensor<256xf32> {
  %a = tg.exp %x : tensor<256xf32>
  %b = tg.tanh %x : tensor<256xf32>
  %c = tg.sigmoid %x : tensor<256xf32>
  %d = tg.add %a, %b : tensor<256xf32>
  %e = tg.add %d, %c : tensor<256xf32>
  return %e : tensor<256xf32>
}

// -----

// An order no variant improves on is kept as it is.
// CHECK-LABEL: func.func @kept
// CHECK:       tg.constant
// CHECK-NEXT:  tg.exp %arg0
// CHECK-NEXT:  tg.mul
// expected-remark @+1 {{tg-schedule: simulated peak 16 -> 16 bytes (+0.00%)}}
func.func @kept(%x: tensor<1xf32> {tg.role = "input"}) -> tensor<1xf32> {
  %two = tg.constant dense<2.0> : tensor<1xf32>
  %0 = tg.exp %x : tensor<1xf32>
  %1 = tg.mul %0, %two : tensor<1xf32>
  return %1 : tensor<1xf32>
}

// -----

// A broadcast of a scalar is materialized just before its first reader, as
// a constant is, instead of holding 4 KiB across the ops in between.
// CHECK-LABEL: func.func @expansion_late
// CHECK:       %[[S:.+]] = tg.reduce sum %arg0
// CHECK-NEXT:  %[[E:.+]] = tg.exp %arg0
// CHECK-NEXT:  %[[T:.+]] = tg.tanh %[[E]]
// CHECK-NEXT:  %[[U:.+]] = tg.add %[[E]], %[[T]]
// CHECK-NEXT:  %[[B:.+]] = tg.broadcast_in_dim %[[S]]
// CHECK-NEXT:  tg.mul %[[U]], %[[B]]
// expected-remark @+1 {{tg-schedule: simulated peak 20480 -> 16388 bytes (-19.98%)}}
func.func @expansion_late(%x: tensor<1024xf32> {tg.role = "input"}) -> tensor<1024xf32> {
  %s = tg.reduce sum %x dims = [0] : tensor<1024xf32> -> tensor<f32>
  %b = tg.broadcast_in_dim %s dims = [] : tensor<f32> -> tensor<1024xf32>
  %e = tg.exp %x : tensor<1024xf32>
  %t = tg.tanh %e : tensor<1024xf32>
  %u = tg.add %e, %t : tensor<1024xf32>
  %m = tg.mul %u, %b : tensor<1024xf32>
  return %m : tensor<1024xf32>
}
