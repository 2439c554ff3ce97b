// RUN: tgc-opt %s --split-input-file --tg-recompute='budget=33660000' | FileCheck %s
// RUN: tgc-opt %s --split-input-file --tg-recompute='budget=33660000 explain' --verify-diagnostics > /dev/null
// RUN: tgc-opt %s --split-input-file --tg-recompute | FileCheck %s --check-prefix=NONE
// RUN: tgc-opt %s --split-input-file --tg-recompute='strategy=full' | FileCheck %s --check-prefix=FULL
// RUN: tgc-opt %s --split-input-file --tg-recompute='budget=1GiB strategy=full' | FileCheck %s --check-prefix=FULL
// RUN: tgc-opt %s --split-input-file --tg-recompute='budget=1GiB' | FileCheck %s --check-prefix=NONE

// The peak (the 32 MiB GEMM workspace, the two 16 KiB activations, ...) is
// 33669124 bytes. A budget 9 KB lower needs one activation recomputed: the
// tanh, whose operand (the matmul) is not kept, so both run again just
// before the first backward op that reads the tanh; the exp (read three
// times by the backward) is kept.
// CHECK-LABEL: func.func @chain
// CHECK:       %[[MM:.+]] = tg.matmul %arg0, %arg1 :
// CHECK-NEXT:  %[[T:.+]] = tg.tanh %[[MM]]
// CHECK-NEXT:  %[[E:.+]] = tg.exp %[[T]]
// CHECK:       tg.mul %{{.+}}, %[[E]]
// CHECK:       %[[MM2:.+]] = tg.matmul %arg0, %arg1 :
// CHECK-NEXT:  %[[T2:.+]] = tg.tanh %[[MM2]]
// CHECK-NEXT:  tg.mul %[[T2]], %[[T2]]
// CHECK-NOT:   tg.exp
// CHECK:       return
// Without a budget (or with one the step fits in) nothing changes.
// NONE-LABEL: func.func @chain
// NONE-COUNT-2: tg.matmul
// NONE-NOT:   tg.matmul
// NONE-NOT:   tg.tanh
// The full baseline recomputes every activation of the block.
// FULL-LABEL: func.func @chain
// FULL:      tg.matmul %arg0, %arg1 :
// FULL-NEXT: tg.tanh
// FULL-NEXT: tg.exp
// FULL:      tg.matmul %arg0, %arg1 :
// FULL-NEXT: tg.tanh
// FULL-NEXT: tg.exp
// expected-remark @+1 {{tg-recompute: budget 33660000 bytes, peak 33669124 -> 33652740 bytes, 1 of 2 activations recomputed, extra time 6.02e-06 s (1 blocks, 1 distinct)}}
func.func @chain(%arg0: tensor<64x64xf32> {tg.role = "input"}, %arg1: tensor<64x64xf32> {tg.name = "w", tg.role = "param"}) -> (tensor<f32> {tg.role = "loss"}, tensor<64x64xf32> {tg.name = "w.grad", tg.role = "grad"}) {
  %0 = tg.matmul %arg0, %arg1 : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  // expected-remark @+1 {{tg-recompute: recomputed, 16384 bytes, recompute time 3.01e-06 s}}
  %1 = tg.tanh %0 : tensor<64x64xf32>
  // expected-remark @+1 {{tg-recompute: kept, 16384 bytes, recompute time 3.01e-06 s}}
  %2 = tg.exp %1 : tensor<64x64xf32>
  %3 = tg.mul %2, %2 : tensor<64x64xf32>
  %4 = tg.reduce sum %3 dims = [0, 1] : tensor<64x64xf32> -> tensor<f32>
  %5 = tg.constant dense<1.000000e+00> : tensor<f32>
  %6 = tg.broadcast_in_dim %5 dims = [] : tensor<f32> -> tensor<64x64xf32>
  %7 = tg.mul %6, %2 : tensor<64x64xf32>
  %8 = tg.mul %6, %2 : tensor<64x64xf32>
  %9 = tg.add %7, %8 : tensor<64x64xf32>
  %10 = tg.mul %9, %2 : tensor<64x64xf32>
  %11 = tg.mul %1, %1 : tensor<64x64xf32>
  %12 = tg.constant dense<1.000000e+00> : tensor<64x64xf32>
  %13 = tg.sub %12, %11 : tensor<64x64xf32>
  %14 = tg.mul %10, %13 : tensor<64x64xf32>
  %15 = tg.matmul %arg0, %14 transpose_a : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  return %4, %15 : tensor<f32>, tensor<64x64xf32>
}

// -----

// tg-schedule runs a backward view as soon as its operand exists, so in a
// scheduled step the backward's reshape of the tanh sits in the forward.
// The recomputation still lands in the backward, before the first reader
// that is not a view (the mul), with the reshape cloned next to it; the
// original reshape is gone.
// CHECK-LABEL: func.func @view_in_forward
// CHECK:       tg.tanh
// CHECK-NOT:   tg.reshape
// CHECK:       tg.reduce sum
// CHECK:       %[[MM2:.+]] = tg.matmul %arg0, %arg1 :
// CHECK-NEXT:  %[[T2:.+]] = tg.tanh %[[MM2]]
// CHECK-NEXT:  %[[R2:.+]] = tg.reshape %[[T2]] : tensor<64x64xf32> -> tensor<4096xf32>
// CHECK-NEXT:  tg.mul %[[R2]], %[[R2]] : tensor<4096xf32>
// CHECK:       return
// NONE-LABEL:  func.func @view_in_forward
// NONE-COUNT-2: tg.reshape
// The full baseline too recomputes after the loss.
// FULL-LABEL:  func.func @view_in_forward
// FULL:        tg.reduce sum
// FULL:        %[[T:.+]] = tg.tanh
// FULL:        %[[R:.+]] = tg.reshape %[[T]]
// FULL-NEXT:   tg.mul %[[R]], %[[R]]
// expected-remark @+1 {{tg-recompute: budget 33660000 bytes, peak 33669124 -> 33652740 bytes, 1 of 2 activations recomputed}}
func.func @view_in_forward(%arg0: tensor<64x64xf32> {tg.role = "input"}, %arg1: tensor<64x64xf32> {tg.name = "w", tg.role = "param"}) -> (tensor<f32> {tg.role = "loss"}, tensor<64x64xf32> {tg.name = "w.grad", tg.role = "grad"}) {
  %0 = tg.matmul %arg0, %arg1 : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  // expected-remark @+1 {{tg-recompute: recomputed}}
  %1 = tg.tanh %0 : tensor<64x64xf32>
  %r = tg.reshape %1 : tensor<64x64xf32> -> tensor<4096xf32>
  // expected-remark @+1 {{tg-recompute: kept}}
  %2 = tg.exp %1 : tensor<64x64xf32>
  %3 = tg.mul %2, %2 : tensor<64x64xf32>
  %4 = tg.reduce sum %3 dims = [0, 1] : tensor<64x64xf32> -> tensor<f32>
  %5 = tg.constant dense<1.000000e+00> : tensor<f32>
  %6 = tg.broadcast_in_dim %5 dims = [] : tensor<f32> -> tensor<64x64xf32>
  %7 = tg.mul %6, %2 : tensor<64x64xf32>
  %8 = tg.mul %6, %2 : tensor<64x64xf32>
  %9 = tg.add %7, %8 : tensor<64x64xf32>
  %10 = tg.mul %9, %2 : tensor<64x64xf32>
  %s = tg.mul %r, %r : tensor<4096xf32>
  %11 = tg.reshape %s : tensor<4096xf32> -> tensor<64x64xf32>
  %12 = tg.constant dense<1.000000e+00> : tensor<64x64xf32>
  %13 = tg.sub %12, %11 : tensor<64x64xf32>
  %14 = tg.mul %10, %13 : tensor<64x64xf32>
  %15 = tg.matmul %arg0, %14 transpose_a : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  return %4, %15 : tensor<f32>, tensor<64x64xf32>
}
