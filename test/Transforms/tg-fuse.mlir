// RUN: tgc-opt %s --split-input-file --tg-fuse | FileCheck %s
// RUN: tgc-opt %s --split-input-file --tg-fuse=no-epilogue | FileCheck %s --check-prefix=NOEPI
// RUN: tgc-opt %s --split-input-file --tg-fuse=no-fuse-optimizer | FileCheck %s --check-prefix=NOHORIZ
// RUN: tgc-opt %s --split-input-file --tg-fuse=max-region-ops=2 | FileCheck %s --check-prefix=MAX2
// RUN: tgc-opt %s --split-input-file --tg-fuse=explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: tgc-opt %s --split-input-file --tg-fuse=peak-rise=10 | FileCheck %s --check-prefix=RISE10
// RUN: tgc-opt %s --split-input-file --tg-fuse=max-bucket-tries=1 2>&1 | FileCheck %s --check-prefix=TRIES1
// RUN: tgc-opt %s --split-input-file --tg-fuse='max-bucket-tries=1 explain' -o /dev/null 2>&1 | FileCheck %s --check-prefix=TRIES1-EXPLAIN

// A chain of elementwise ops becomes one loop kernel.
// CHECK-LABEL: func.func @chain
// CHECK: %[[F:.*]] = tg.fusion(%arg0, %arg1) {kind = "loop"}
// CHECK: tg.add
// CHECK: tg.relu
// CHECK: tg.exp
// CHECK: tg.yield
// CHECK-NOT: tg.fusion
// CHECK: return %[[F]]
// At most two ops per region: the add and the relu, the exp alone.
// MAX2-LABEL: func.func @chain
// MAX2: tg.fusion
// MAX2-NEXT: ^bb0
// MAX2-NEXT: tg.add
// MAX2-NEXT: tg.relu
// MAX2-NEXT: tg.yield
// MAX2: tg.exp
// EXPLAIN: remark: tg-fuse: loop region of 3 ops, saves 512 bytes
func.func @chain(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = tg.add %a, %b : tensor<4x8xf32>
  %1 = tg.relu %0 : tensor<4x8xf32>
  %2 = tg.exp %1 : tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// A softmax (two reductions over the same rows and their elementwise
// producers and consumers) becomes one row-reduction kernel.
// CHECK-LABEL: func.func @softmax
// CHECK: tg.fusion(%arg0) {kind = "reduction"}
// CHECK-COUNT-2: tg.reduce
// CHECK: tg.div
// CHECK-NOT: tg.fusion
// EXPLAIN: remark: tg-fuse: reduction region of 7 ops, saves 1344 bytes
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = tg.reduce max %x dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  %mb = tg.broadcast_in_dim %m dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  %s = tg.sub %x, %mb : tensor<4x8xf32>
  %e = tg.exp %s : tensor<4x8xf32>
  %z = tg.reduce sum %e dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  %zb = tg.broadcast_in_dim %z dims = [0] : tensor<4xf32> -> tensor<4x8xf32>
  %r = tg.div %e, %zb : tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// A reduction over other rows does not join: two kernels.
// CHECK-LABEL: func.func @different_rows
// CHECK: tg.fusion
// CHECK: tg.reduce sum %{{.*}} dims = [1]
// CHECK: tg.yield
// CHECK-NOT: tg.fusion
// CHECK: tg.reduce sum %{{.*}} dims = [0]
func.func @different_rows(%x: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<f32>) {
  %e = tg.exp %x : tensor<4x8xf32>
  %r = tg.reduce sum %e dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  %t = tg.reduce sum %r dims = [0] : tensor<4xf32> -> tensor<f32>
  return %r, %t : tensor<4xf32>, tensor<f32>
}

// -----

// A matmul with bias, tanh GELU, residual add and a cast is one cuBLASLt
// call: GELU_BIAS epilogue, the residual as C, the cast as D's type.
// CHECK-LABEL: func.func @epilogue
// CHECK: tg.fusion(%arg0, %arg1, %arg2, %arg3) {epilogue = "CUBLASLT_EPILOGUE_GELU_BIAS", epilogue_c, kind = "gemm"}
// CHECK: tg.matmul
// CHECK: tg.broadcast_in_dim
// CHECK: tg.gelu
// CHECK: tg.convert
// CHECK-NOT: tg.fusion
// Without epilogues the matmul stays alone; the elementwise tail is a loop
// kernel (the bias broadcast joins it).
// NOEPI-LABEL: func.func @epilogue
// NOEPI: tg.matmul
// NOEPI: tg.fusion({{.*}}) {kind = "loop"}
// NOEPI-NOT: tg.matmul
// NOEPI: return
// EXPLAIN: remark: tg-fuse: gemm region of 6 ops (CUBLASLT_EPILOGUE_GELU_BIAS), saves 1280 bytes
func.func @epilogue(%x: tensor<4x8xbf16>, %w: tensor<8x16xbf16>, %b: tensor<16xbf16>, %res: tensor<4x16xbf16>) -> tensor<4x16xf32> {
  %0 = tg.matmul %x, %w : (tensor<4x8xbf16>, tensor<8x16xbf16>) -> tensor<4x16xbf16>
  %bb = tg.broadcast_in_dim %b dims = [1] : tensor<16xbf16> -> tensor<4x16xbf16>
  %1 = tg.add %0, %bb : tensor<4x16xbf16>
  %2 = tg.gelu tanh %1 : tensor<4x16xbf16>
  %3 = tg.add %2, %res : tensor<4x16xbf16>
  %4 = tg.convert %3 : tensor<4x16xbf16> -> tensor<4x16xf32>
  return %4 : tensor<4x16xf32>
}

// -----

// The pre-activation is also read by the backward: GELU with an aux output.
// CHECK-LABEL: func.func @epilogue_aux
// CHECK: %[[F:.*]]:2 = tg.fusion(%arg0, %arg1, %arg2) {epilogue = "CUBLASLT_EPILOGUE_GELU_AUX_BIAS", kind = "gemm"}
// CHECK: tg.gelu_grad tanh %[[F]]#0
func.func @epilogue_aux(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>, %dy: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %0 = tg.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %bb = tg.broadcast_in_dim %b dims = [1] : tensor<16xf32> -> tensor<4x16xf32>
  %1 = tg.add %0, %bb : tensor<4x16xf32>
  %2 = tg.gelu tanh %1 : tensor<4x16xf32>
  %3 = tg.gelu_grad tanh %1, %dy : tensor<4x16xf32>
  return %2, %3 : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// erf GELU has no cuBLASLt epilogue: the matmul keeps its bias only.
// CHECK-LABEL: func.func @erf_gelu
// CHECK: tg.fusion({{.*}}) {epilogue = "CUBLASLT_EPILOGUE_BIAS", kind = "gemm"}
// CHECK: tg.yield
// CHECK-NEXT: }
// CHECK-NEXT: tg.gelu erf
func.func @erf_gelu(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %0 = tg.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %bb = tg.broadcast_in_dim %b dims = [1] : tensor<16xf32> -> tensor<4x16xf32>
  %1 = tg.add %0, %bb : tensor<4x16xf32>
  %2 = tg.gelu erf %1 : tensor<4x16xf32>
  return %2 : tensor<4x16xf32>
}

// -----

// Elementwise ops on both sides of a matmul without an epilogue are not
// fused across it, and the matmul is never duplicated into its two readers
// (which, reading the same tensors, share one sibling kernel).
// CHECK-LABEL: func.func @across_matmul
// CHECK: tg.exp
// CHECK-NEXT: %[[MM:.*]] = tg.matmul
// CHECK-NEXT: tg.fusion(%[[MM]], %arg2) {kind = "loop"}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tg.mul
// CHECK-NEXT: tg.sub
func.func @across_matmul(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %y: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %e = tg.exp %x : tensor<4x8xf32>
  %0 = tg.matmul %e, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = tg.mul %0, %y : tensor<4x16xf32>
  %2 = tg.sub %0, %y : tensor<4x16xf32>
  return %1, %2 : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// A broadcast read by two kernels is cheaper to recompute than to write and
// read: each region gets a copy and the original is gone.
// CHECK-LABEL: func.func @duplicate_broadcast
// CHECK-NOT: tg.broadcast_in_dim
// CHECK: tg.fusion
// CHECK: tg.broadcast_in_dim
// CHECK: tg.fusion
// CHECK: tg.broadcast_in_dim
func.func @duplicate_broadcast(%s: tensor<f32>, %x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %b = tg.broadcast_in_dim %s dims = [] : tensor<f32> -> tensor<4x8xf32>
  %0 = tg.mul %x, %b : tensor<4x8xf32>
  %m = tg.matmul %0, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = tg.mul %m, %b : tensor<4x8xf32>
  %2 = tg.exp %1 : tensor<4x8xf32>
  return %0, %2 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// An elementwise op read by two kernels reads as many bytes as it writes:
// it is not duplicated but joins its first reader's region as an output.
// CHECK-LABEL: func.func @no_duplicate_add
// CHECK-COUNT-1: tg.add
// CHECK-NOT: tg.add
func.func @no_duplicate_add(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = tg.add %a, %b : tensor<4x8xf32>
  %1 = tg.exp %0 : tensor<4x8xf32>
  %m = tg.matmul %1, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %2 = tg.mul %m, %0 : tensor<4x8xf32>
  %3 = tg.tanh %2 : tensor<4x8xf32>
  return %1, %3 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// The updates of one optimizer kind and element type become one
// multi-tensor kernel per group; the f16 update is its own group.
// CHECK-LABEL: func.func @multi_tensor
// CHECK: tg.fusion({{.*}}) {kind = "multi_tensor"}
// CHECK-COUNT-2: tg.adamw
// CHECK: tg.yield
// CHECK-NOT: tg.fusion
// NOHORIZ-LABEL: func.func @multi_tensor
// NOHORIZ-NOT: tg.fusion
func.func @multi_tensor(%p0: tensor<8xf32> {tg.role = "param"}, %g0: tensor<8xf32>, %m0: tensor<8xf32> {tg.role = "state"}, %v0: tensor<8xf32> {tg.role = "state"},
                        %p1: tensor<4x4xf32> {tg.role = "param"}, %g1: tensor<4x4xf32>, %m1: tensor<4x4xf32> {tg.role = "state"}, %v1: tensor<4x4xf32> {tg.role = "state"},
                        %p2: tensor<8xf16> {tg.role = "param"}, %g2: tensor<8xf16>, %m2: tensor<8xf16> {tg.role = "state"}, %v2: tensor<8xf16> {tg.role = "state"},
                        %lr: tensor<f32> {tg.role = "hyper"}, %t: tensor<i64> {tg.role = "hyper"})
    -> (tensor<8xf32> {tg.aliases = 0 : i64}, tensor<4x4xf32> {tg.aliases = 4 : i64}, tensor<8xf16> {tg.aliases = 8 : i64}) {
  %a0, %a1, %a2 = tg.adamw %p0, %g0, %m0, %v0, %lr, %t betas = (9.000000e-01, 9.990000e-01) epsilon = 1.000000e-08 weight_decay = 1.000000e-02 : tensor<8xf32>, tensor<f32>, tensor<i64>
  %b0, %b1, %b2 = tg.adamw %p1, %g1, %m1, %v1, %lr, %t betas = (9.000000e-01, 9.990000e-01) epsilon = 1.000000e-08 weight_decay = 1.000000e-02 : tensor<4x4xf32>, tensor<f32>, tensor<i64>
  %c0, %c1, %c2 = tg.adamw %p2, %g2, %m2, %v2, %lr, %t betas = (9.000000e-01, 9.990000e-01) epsilon = 1.000000e-08 weight_decay = 1.000000e-02 : tensor<8xf16>, tensor<f32>, tensor<i64>
  return %a0, %b0, %c0 : tensor<8xf32>, tensor<4x4xf32>, tensor<8xf16>
}

// -----

// Fusing the exp into the reduction would place the region after %t and
// keep %v (16 KiB) alive past it: the peak would rise, so the region is
// undone and the ops keep their places.
// CHECK-LABEL: func.func @raises_peak
// NOHORIZ-LABEL: func.func @raises_peak
// CHECK: tg.matmul
// CHECK-NEXT: tg.reduce
// CHECK-NEXT: tg.matmul
// CHECK-NEXT: tg.exp
// CHECK-NOT: tg.fusion
// EXPLAIN: remark: tg-fuse: not fused: the reduction region of 2 ops raises the peak memory
func.func @raises_peak(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64xf32>) {
  %v = tg.matmul %x, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %a = tg.reduce sum %v dims = [1] : tensor<64x64xf32> -> tensor<64xf32>
  %t = tg.matmul %w, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %c = tg.exp %a : tensor<64xf32>
  return %t, %c : tensor<64x64xf32>, tensor<64xf32>
}

// -----

// A bias cast from its f32 master copy and broadcast is still a cuBLASLt
// bias: the cast joins the GEMM region with the broadcast.
// CHECK-LABEL: func.func @cast_bias
// CHECK: tg.fusion(%arg0, %arg1, %arg2) {epilogue = "CUBLASLT_EPILOGUE_RELU_BIAS", kind = "gemm"}
// CHECK: tg.matmul
// CHECK: tg.convert
// CHECK: tg.broadcast_in_dim
// CHECK: tg.relu
// CHECK-NOT: tg.fusion
func.func @cast_bias(%x: tensor<4x8xbf16>, %w: tensor<8x16xbf16>, %b: tensor<16xf32>) -> tensor<4x16xbf16> {
  %0 = tg.matmul %x, %w : (tensor<4x8xbf16>, tensor<8x16xbf16>) -> tensor<4x16xbf16>
  %c = tg.convert %b : tensor<16xf32> -> tensor<16xbf16>
  %bb = tg.broadcast_in_dim %c dims = [1] : tensor<16xbf16> -> tensor<4x16xbf16>
  %1 = tg.add %0, %bb : tensor<4x16xbf16>
  %2 = tg.relu %1 : tensor<4x16xbf16>
  return %2 : tensor<4x16xbf16>
}

// -----

// The casts of master weights read only arguments: one multi-tensor kernel
// casts both; the matmuls read its results. The second cast is live one
// matmul earlier, below the peak at the second matmul.
// CHECK-LABEL: func.func @weight_casts
// CHECK: %[[C:.*]]:2 = tg.fusion(%arg1, %arg2) {kind = "multi_tensor"}
// CHECK-COUNT-2: tg.convert
// CHECK: tg.matmul %arg0, %[[C]]#0
// CHECK: tg.matmul %{{.*}}, %[[C]]#1
// NOHORIZ-LABEL: func.func @weight_casts
// NOHORIZ-NOT: tg.fusion
func.func @weight_casts(%x: tensor<64x8xbf16>, %w1: tensor<8x8xf32>, %w2: tensor<8x8xf32>) -> tensor<64x8xbf16> {
  %c1 = tg.convert %w1 : tensor<8x8xf32> -> tensor<8x8xbf16>
  %c2 = tg.convert %w2 : tensor<8x8xf32> -> tensor<8x8xbf16>
  %0 = tg.matmul %x, %c1 : (tensor<64x8xbf16>, tensor<8x8xbf16>) -> tensor<64x8xbf16>
  %1 = tg.matmul %0, %c2 : (tensor<64x8xbf16>, tensor<8x8xbf16>) -> tensor<64x8xbf16>
  return %1 : tensor<64x8xbf16>
}

// -----

// Multi-tensor buckets follow gradient readiness. One region of all four
// updates would keep %g0 and %g1 live through %big (the peak) until %g3 is
// ready: refused. Its halves, the updates of %g0, %g1 (before %big) and of
// %g2, %g3 (after), are two regions that leave the peak where it was. With
// peak-rise=10 the 2 KiB more (5%) is allowed: one region. With one try
// allowed (max-bucket-tries=1) only the whole run is tried.
// CHECK-LABEL: func.func @readiness_buckets
// CHECK: tg.matmul
// CHECK-NEXT: tg.matmul
// CHECK-NEXT: tg.fusion({{.*}}) {kind = "multi_tensor"}
// CHECK-COUNT-2: tg.adamw
// CHECK: tg.yield
// CHECK-NEXT: }
// CHECK-COUNT-5: tg.matmul
// CHECK-NEXT: tg.fusion({{.*}}) {kind = "multi_tensor"}
// CHECK-COUNT-2: tg.adamw
// CHECK-NOT: tg.fusion
// EXPLAIN: remark: tg-fuse: not fused: the multi_tensor region of 4 ops raises the peak memory of the scheduled step to {{[0-9]+}} bytes (limit {{[0-9]+}}); its halves are tried
// EXPLAIN-COUNT-2: remark: tg-fuse: multi_tensor region of 2 ops, saves 12 bytes
// RISE10-LABEL: func.func @readiness_buckets
// RISE10-COUNT-7: tg.matmul
// RISE10-NEXT: tg.fusion({{.*}}) {kind = "multi_tensor"}
// RISE10-COUNT-4: tg.adamw
// RISE10-NOT: tg.fusion
// TRIES1-LABEL: func.func @readiness_buckets
// TRIES1-NOT: tg.fusion
// TRIES1-LABEL: func.func @not_across_peak
// TRIES1-EXPLAIN: remark: tg-fuse: not fused: the multi_tensor region of 4 ops
// TRIES1-EXPLAIN: remark: tg-fuse: max-bucket-tries reached; 2 runs of updates left as separate kernels
func.func @readiness_buckets(
    %p0: tensor<16x16xf32> {tg.role = "param"}, %m0: tensor<16x16xf32> {tg.role = "state"}, %v0: tensor<16x16xf32> {tg.role = "state"},
    %p1: tensor<16x16xf32> {tg.role = "param"}, %m1: tensor<16x16xf32> {tg.role = "state"}, %v1: tensor<16x16xf32> {tg.role = "state"},
    %p2: tensor<16x16xf32> {tg.role = "param"}, %m2: tensor<16x16xf32> {tg.role = "state"}, %v2: tensor<16x16xf32> {tg.role = "state"},
    %p3: tensor<16x16xf32> {tg.role = "param"}, %m3: tensor<16x16xf32> {tg.role = "state"}, %v3: tensor<16x16xf32> {tg.role = "state"},
    %lr: tensor<f32> {tg.role = "hyper"}, %t: tensor<i64> {tg.role = "hyper"},
    %a: tensor<16x16xf32> {tg.role = "input"}, %wa: tensor<64x16xf32> {tg.role = "input"}, %wb: tensor<16x64xf32> {tg.role = "input"})
    -> (tensor<16x16xf32> {tg.aliases = 0 : i64}, tensor<16x16xf32> {tg.aliases = 1 : i64}, tensor<16x16xf32> {tg.aliases = 2 : i64},
        tensor<16x16xf32> {tg.aliases = 3 : i64}, tensor<16x16xf32> {tg.aliases = 4 : i64}, tensor<16x16xf32> {tg.aliases = 5 : i64},
        tensor<16x16xf32> {tg.aliases = 6 : i64}, tensor<16x16xf32> {tg.aliases = 7 : i64}, tensor<16x16xf32> {tg.aliases = 8 : i64},
        tensor<16x16xf32> {tg.aliases = 9 : i64}, tensor<16x16xf32> {tg.aliases = 10 : i64}, tensor<16x16xf32> {tg.aliases = 11 : i64}) {
  %g0 = tg.matmul %a, %a : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %u0:3 = tg.adamw %p0, %g0, %m0, %v0, %lr, %t betas = (9.000000e-01, 9.990000e-01) epsilon = 1.000000e-08 weight_decay = 1.000000e-02 : tensor<16x16xf32>, tensor<f32>, tensor<i64>
  %g1 = tg.matmul %g0, %a : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %u1:3 = tg.adamw %p1, %g1, %m1, %v1, %lr, %t betas = (9.000000e-01, 9.990000e-01) epsilon = 1.000000e-08 weight_decay = 1.000000e-02 : tensor<16x16xf32>, tensor<f32>, tensor<i64>
  %h = tg.matmul %wa, %g1 : (tensor<64x16xf32>, tensor<16x16xf32>) -> tensor<64x16xf32>
  %big = tg.matmul %h, %wb : (tensor<64x16xf32>, tensor<16x64xf32>) -> tensor<64x64xf32>
  %q = tg.matmul %wb, %big : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  %g2 = tg.matmul %q, %wa : (tensor<16x64xf32>, tensor<64x16xf32>) -> tensor<16x16xf32>
  %u2:3 = tg.adamw %p2, %g2, %m2, %v2, %lr, %t betas = (9.000000e-01, 9.990000e-01) epsilon = 1.000000e-08 weight_decay = 1.000000e-02 : tensor<16x16xf32>, tensor<f32>, tensor<i64>
  %g3 = tg.matmul %g2, %a : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %u3:3 = tg.adamw %p3, %g3, %m3, %v3, %lr, %t betas = (9.000000e-01, 9.990000e-01) epsilon = 1.000000e-08 weight_decay = 1.000000e-02 : tensor<16x16xf32>, tensor<f32>, tensor<i64>
  return %u0#0, %u0#1, %u0#2, %u1#0, %u1#1, %u1#2, %u2#0, %u2#1, %u2#2, %u3#0, %u3#1, %u3#2
      : tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>,
        tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>
}

// -----

// Two updates whose gradients are ready on either side of the peak (%big)
// are not bucketed: the first gradient would stay live through it (with
// peak-rise=10 they are).
// CHECK-LABEL: func.func @not_across_peak
// CHECK-NOT: tg.fusion
// CHECK: return
// EXPLAIN: remark: tg-fuse: not fused: the multi_tensor region of 2 ops raises the peak memory of the scheduled step to {{[0-9]+}} bytes (limit {{[0-9]+}})
// EXPLAIN-NOT: its halves
// RISE10-LABEL: func.func @not_across_peak
// RISE10: tg.fusion({{.*}}) {kind = "multi_tensor"}
func.func @not_across_peak(
    %p1: tensor<16x16xf32> {tg.role = "param"}, %m1: tensor<16x16xf32> {tg.role = "state"}, %v1: tensor<16x16xf32> {tg.role = "state"},
    %p2: tensor<16x16xf32> {tg.role = "param"}, %m2: tensor<16x16xf32> {tg.role = "state"}, %v2: tensor<16x16xf32> {tg.role = "state"},
    %lr: tensor<f32> {tg.role = "hyper"}, %t: tensor<i64> {tg.role = "hyper"},
    %a: tensor<16x16xf32> {tg.role = "input"}, %wa: tensor<64x16xf32> {tg.role = "input"}, %wb: tensor<16x64xf32> {tg.role = "input"})
    -> (tensor<16x16xf32> {tg.aliases = 0 : i64}, tensor<16x16xf32> {tg.aliases = 1 : i64}, tensor<16x16xf32> {tg.aliases = 2 : i64},
        tensor<16x16xf32> {tg.aliases = 3 : i64}, tensor<16x16xf32> {tg.aliases = 4 : i64}, tensor<16x16xf32> {tg.aliases = 5 : i64}) {
  %g1 = tg.matmul %a, %a : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %u1:3 = tg.adamw %p1, %g1, %m1, %v1, %lr, %t betas = (9.000000e-01, 9.990000e-01) epsilon = 1.000000e-08 weight_decay = 1.000000e-02 : tensor<16x16xf32>, tensor<f32>, tensor<i64>
  %h = tg.matmul %wa, %g1 : (tensor<64x16xf32>, tensor<16x16xf32>) -> tensor<64x16xf32>
  %big = tg.matmul %h, %wb : (tensor<64x16xf32>, tensor<16x64xf32>) -> tensor<64x64xf32>
  %q = tg.matmul %wb, %big : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  %g2 = tg.matmul %q, %wa : (tensor<16x64xf32>, tensor<64x16xf32>) -> tensor<16x16xf32>
  %u2:3 = tg.adamw %p2, %g2, %m2, %v2, %lr, %t betas = (9.000000e-01, 9.990000e-01) epsilon = 1.000000e-08 weight_decay = 1.000000e-02 : tensor<16x16xf32>, tensor<f32>, tensor<i64>
  return %u1#0, %u1#1, %u1#2, %u2#0, %u2#1, %u2#2
      : tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>
}

// -----

// The backward of a GELU: the data-gradient GEMM applies the GELU gradient
// with the forward's pre-activation as aux and writes the bias gradient (the
// column sums of its output) too: DGELU_BGRAD.
// CHECK-LABEL: func.func @dgelu_bgrad
// NOHORIZ-LABEL: func.func @dgelu_bgrad
// CHECK: %[[F:.*]]:2 = tg.fusion(%arg0, %arg1, %arg2) {epilogue = "CUBLASLT_EPILOGUE_DGELU_BGRAD", kind = "gemm"}
// CHECK: tg.matmul
// CHECK-NEXT: tg.gelu_grad tanh
// CHECK-NEXT: tg.reduce sum
// CHECK: return %[[F]]#0, %[[F]]#1
func.func @dgelu_bgrad(%dy: tensor<4x16xf32>, %w: tensor<8x16xf32>, %pre: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>) {
  %0 = tg.matmul %dy, %w transpose_b : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  %1 = tg.gelu_grad tanh %0, %pre : tensor<4x8xf32>
  %2 = tg.reduce sum %1 dims = [0] : tensor<4x8xf32> -> tensor<8xf32>
  return %1, %2 : tensor<4x8xf32>, tensor<8xf32>
}

// -----

// DGELU alone, on a batched GEMM output.
// CHECK-LABEL: func.func @dgelu
// CHECK: tg.fusion(%arg0, %arg1, %arg2) {epilogue = "CUBLASLT_EPILOGUE_DGELU", kind = "gemm"}
func.func @dgelu(%dy: tensor<2x4x16xf32>, %w: tensor<8x16xf32>, %pre: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %0 = tg.matmul %dy, %w transpose_b : (tensor<2x4x16xf32>, tensor<8x16xf32>) -> tensor<2x4x8xf32>
  %1 = tg.gelu_grad tanh %0, %pre : tensor<2x4x8xf32>
  return %1 : tensor<2x4x8xf32>
}

// -----

// Must not: erf GELU's gradient (cuBLASLt's DGELU is the tanh one's), and a
// sum over the rows instead of the columns is no bias gradient.
// CHECK-LABEL: func.func @no_dgelu
// CHECK: %[[MM:.*]] = tg.matmul
// CHECK-NEXT: tg.gelu_grad erf %[[MM]]
// CHECK: %[[F:.*]] = tg.fusion({{.*}}) {epilogue = "CUBLASLT_EPILOGUE_DGELU", kind = "gemm"}
// CHECK: tg.yield
// CHECK-NEXT: }
// CHECK-NEXT: tg.reduce sum %[[F]] dims = [1]
func.func @no_dgelu(%dy: tensor<4x16xf32>, %w: tensor<8x16xf32>, %pre: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>) {
  %0 = tg.matmul %dy, %w transpose_b : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  %1 = tg.gelu_grad erf %0, %pre : tensor<4x8xf32>
  %2 = tg.matmul %dy, %w transpose_b : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  %3 = tg.gelu_grad tanh %2, %pre : tensor<4x8xf32>
  %4 = tg.reduce sum %3 dims = [1] : tensor<4x8xf32> -> tensor<4xf32>
  return %1, %3, %4 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>
}

// -----

// The weight gradient X^T dY also writes dY's column sums, the bias
// gradient, reducing B over the contracted dimension (BGRADB), through the
// reshape that flattens the batch.
// CHECK-LABEL: func.func @bgradb
// CHECK: %[[F:.*]]:2 = tg.fusion({{.*}}) {epilogue = "CUBLASLT_EPILOGUE_BGRADB", kind = "gemm"}
// CHECK: tg.reduce sum {{.*}} dims = [0, 1]
// CHECK-NEXT: tg.matmul
// CHECK: return %[[F]]#1, %[[F]]#0
func.func @bgradb(%x: tensor<2x4x8xf32>, %dy: tensor<2x4x16xf32>) -> (tensor<8x16xf32>, tensor<16xf32>) {
  %db = tg.reduce sum %dy dims = [0, 1] : tensor<2x4x16xf32> -> tensor<16xf32>
  %x2 = tg.reshape %x : tensor<2x4x8xf32> -> tensor<8x8xf32>
  %dy2 = tg.reshape %dy : tensor<2x4x16xf32> -> tensor<8x16xf32>
  %dw = tg.matmul %x2, %dy2 transpose_a : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %dw, %db : tensor<8x16xf32>, tensor<16xf32>
}

// -----

// The same with the summed operand as a transposed A (BGRADA).
// CHECK-LABEL: func.func @bgrada
// CHECK: tg.fusion(%arg0, %arg1) {epilogue = "CUBLASLT_EPILOGUE_BGRADA", kind = "gemm"}
func.func @bgrada(%dy: tensor<8x16xf32>, %x: tensor<8x4xf32>) -> (tensor<16x4xf32>, tensor<16xf32>) {
  %dw = tg.matmul %dy, %x transpose_a : (tensor<8x16xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
  %db = tg.reduce sum %dy dims = [0] : tensor<8x16xf32> -> tensor<16xf32>
  return %dw, %db : tensor<16x4xf32>, tensor<16xf32>
}

// -----

// Must not: a sum over the dimension the GEMM does not contract (B read
// transposed; the rows of A's transpose).
// CHECK-LABEL: func.func @no_bgrad
// CHECK-NOT: tg.fusion
// CHECK: return
func.func @no_bgrad(%x: tensor<8x8xf32>, %dy: tensor<16x8xf32>, %dy3: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8xf32>, tensor<8x16xf32>, tensor<8xf32>) {
  %dw = tg.matmul %x, %dy transpose_b : (tensor<8x8xf32>, tensor<16x8xf32>) -> tensor<8x16xf32>
  %db = tg.reduce sum %dy dims = [0] : tensor<16x8xf32> -> tensor<8xf32>
  %dw2 = tg.matmul %x, %dy3 transpose_a : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %rs = tg.reduce sum %dy3 dims = [1] : tensor<8x16xf32> -> tensor<8xf32>
  return %dw, %db, %dw2, %rs : tensor<8x16xf32>, tensor<8xf32>, tensor<8x16xf32>, tensor<8xf32>
}

// -----

// Sibling fusion: the three head splits of one QKV projection read the same
// tensor and write as many elements each: one kernel reads it once.
// CHECK-LABEL: func.func @qkv_siblings
// CHECK: %[[F:.*]]:3 = tg.fusion(%arg0) {kind = "loop"}
// CHECK-COUNT-3: tg.transpose
// CHECK: return %[[F]]#0, %[[F]]#1, %[[F]]#2
// NOHORIZ-LABEL: func.func @qkv_siblings
func.func @qkv_siblings(%qkv: tensor<2x4x24xf32>) -> (tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>) {
  %q = tg.slice %qkv [0:2:1, 0:4:1, 0:8:1] : tensor<2x4x24xf32> -> tensor<2x4x8xf32>
  %q2 = tg.reshape %q : tensor<2x4x8xf32> -> tensor<2x4x2x4xf32>
  %q3 = tg.transpose %q2 perm = [0, 2, 1, 3] : tensor<2x4x2x4xf32> -> tensor<2x2x4x4xf32>
  %k = tg.slice %qkv [0:2:1, 0:4:1, 8:16:1] : tensor<2x4x24xf32> -> tensor<2x4x8xf32>
  %k2 = tg.reshape %k : tensor<2x4x8xf32> -> tensor<2x4x2x4xf32>
  %k3 = tg.transpose %k2 perm = [0, 2, 1, 3] : tensor<2x4x2x4xf32> -> tensor<2x2x4x4xf32>
  %v = tg.slice %qkv [0:2:1, 0:4:1, 16:24:1] : tensor<2x4x24xf32> -> tensor<2x4x8xf32>
  %v2 = tg.reshape %v : tensor<2x4x8xf32> -> tensor<2x4x2x4xf32>
  %v3 = tg.transpose %v2 perm = [0, 2, 1, 3] : tensor<2x4x2x4xf32> -> tensor<2x2x4x4xf32>
  return %q3, %k3, %v3 : tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>
}

// -----

// A second reader after a matmul that reads the first one's result: the
// sibling kernel runs where the first one did, before the matmul.
// CHECK-LABEL: func.func @sibling_placed_early
// CHECK: %[[F:.*]]:2 = tg.fusion(%arg0) {kind = "loop"}
// CHECK: tg.matmul %[[F]]#0, %arg1
// CHECK: return {{.*}}, %[[F]]#1
func.func @sibling_placed_early(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %a = tg.exp %x : tensor<4x8xf32>
  %b = tg.tanh %a : tensor<4x8xf32>
  %0 = tg.matmul %b, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %c = tg.neg %x : tensor<4x8xf32>
  %d = tg.abs %c : tensor<4x8xf32>
  return %0, %d : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Must not: readers of the same tensor that loop over different element
// counts (a slice's consumer and a full-size chain) stay apart.
// CHECK-LABEL: func.func @not_siblings
// CHECK-DAG: tg.fusion(%arg0) {kind = "loop"} : (tensor<4x8xf32>) -> tensor<2x8xf32>
// CHECK-DAG: tg.fusion(%arg0) {kind = "loop"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
func.func @not_siblings(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<2x8xf32>) {
  %a = tg.exp %x : tensor<4x8xf32>
  %b = tg.tanh %a : tensor<4x8xf32>
  %s = tg.slice %x [0:2:1, 0:8:1] : tensor<4x8xf32> -> tensor<2x8xf32>
  %t = tg.neg %s : tensor<2x8xf32>
  return %b, %t : tensor<4x8xf32>, tensor<2x8xf32>
}

// -----

// A micro-batch's bf16 weight gradient added to the f32 accumulator: the
// widening cast stays with the sum, so the GEMM writes bf16 and one loop
// reads it and the accumulator, instead of the GEMM writing f32 for a
// loop to read back.
// CHECK-LABEL: func.func @accumulate_widened
// CHECK: %[[G:.+]] = tg.matmul %arg0, %arg1 transpose_a {{.*}} -> tensor<8x4xbf16>
// CHECK: tg.fusion(%[[G]], %arg2) {kind = "loop"}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tg.convert
// CHECK-NEXT: tg.add
func.func @accumulate_widened(%x: tensor<16x8xbf16>, %dy: tensor<16x4xbf16>, %acc: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %g = tg.matmul %x, %dy transpose_a : (tensor<16x8xbf16>, tensor<16x4xbf16>) -> tensor<8x4xbf16>
  %c = tg.convert %g : tensor<8x4xbf16> -> tensor<8x4xf32>
  %s = tg.add %acc, %c : tensor<8x4xf32>
  return %s : tensor<8x4xf32>
}
