// RUN: tgc-opt %s --split-input-file --tg-schedule | FileCheck %s
// RUN: tgc-opt %s --split-input-file --tg-schedule='overlap=false' | FileCheck %s --check-prefix=MEMORY
// RUN: tgc-opt %s --split-input-file --tg-schedule='explain' --verify-diagnostics > /dev/null

// tg-schedule's overlap of communication with compute, on dp=2 steps (one
// device's program). On H100s the all-reduce of a 4 MiB gradient takes
// 13.3 us over NVLink and each 1024^3 f32 matmul 32 us.

// The memory order updates w2 right after its all-reduce, so the compute
// stream waits 13.3 us for it. Overlapped, the update runs after the next
// matmul, once the all-reduce is done: only the last all-reduce is exposed.
// CHECK-LABEL: func.func @gradients
// CHECK:       %[[GW2:.+]] = tg.matmul %arg0, %arg1 transpose_a
// CHECK-NEXT:  %[[R2:.+]] = shard.all_reduce %[[GW2]]
// CHECK-NEXT:  %[[DH:.+]] = tg.matmul %arg1, %arg0 transpose_b
// CHECK-NEXT:  tg.sgd %arg3, %[[R2]]
// CHECK-NEXT:  %[[GW1:.+]] = tg.matmul %arg0, %[[DH]] transpose_a
// CHECK-NEXT:  %[[R1:.+]] = shard.all_reduce %[[GW1]]
// CHECK-NEXT:  tg.sgd %arg2, %[[R1]]
// MEMORY-LABEL: func.func @gradients
// MEMORY:       %[[GW2:.+]] = tg.matmul %arg0, %arg1 transpose_a
// MEMORY-NEXT:  %[[R2:.+]] = shard.all_reduce %[[GW2]]
// MEMORY-NEXT:  tg.sgd %arg3, %[[R2]]
// MEMORY-NEXT:  tg.matmul %arg1, %arg0 transpose_b
module {
  shard.grid @mesh(shape = 2) {tg.mesh_axes = ["dp"]}
  // expected-remark @+1 {{tg-schedule: simulated peak 33554436 -> 29360132 bytes (-12.50%); overlapped: modelled step 0.0001453 -> 0.000132 s, exposed communication 2.664e-05 -> 1.332e-05 s}}
  func.func @gradients(%x: tensor<1024x1024xf32> {tg.role = "input"},
                       %dy: tensor<1024x1024xf32> {tg.role = "input"},
                       %w1: tensor<1024x1024xf32> {tg.role = "param", tg.name = "l.0.w"},
                       %w2: tensor<1024x1024xf32> {tg.role = "param", tg.name = "l.1.w"},
                       %lr: tensor<f32> {tg.role = "hyper"})
      -> (tensor<1024x1024xf32> {tg.role = "param", tg.name = "l.0.w", tg.aliases = 2 : i64},
          tensor<1024x1024xf32> {tg.role = "param", tg.name = "l.1.w", tg.aliases = 3 : i64}) {
    %gw2 = tg.matmul %x, %dy transpose_a : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    %r2 = shard.all_reduce %gw2 on @mesh grid_axes = [0] : tensor<1024x1024xf32> -> tensor<1024x1024xf32>
    %dh = tg.matmul %dy, %x transpose_b : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    %gw1 = tg.matmul %x, %dh transpose_a : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    %r1 = shard.all_reduce %gw1 on @mesh grid_axes = [0] : tensor<1024x1024xf32> -> tensor<1024x1024xf32>
    %w2n = tg.sgd %w2, %r2, %lr momentum = 0.0 weight_decay = 0.0 : tensor<1024x1024xf32>, tensor<f32>
    %w1n = tg.sgd %w1, %r1, %lr momentum = 0.0 weight_decay = 0.0 : tensor<1024x1024xf32>, tensor<f32>
    return %w1n, %w2n : tensor<1024x1024xf32>, tensor<1024x1024xf32>
  }
}

// -----

// ZeRO-3: each layer's parameter gathers (h.1.w and h.1.b are layer h.1) are
// issued before the first use of the previous layer's, so they run during
// its matmul; the first layer's go together before its first use. The
// prefetched 4 MiB of h.1.w is live one matmul longer: the peak rises.
// CHECK-LABEL: func.func @prefetch
// CHECK:       %[[G0:.+]] = shard.all_gather %arg1
// CHECK-NEXT:  %[[C0:.+]] = shard.all_gather %arg2
// CHECK-NEXT:  %[[G1:.+]] = shard.all_gather %arg3
// CHECK-NEXT:  %[[C1:.+]] = shard.all_gather %arg4
// CHECK-NEXT:  tg.matmul %arg0, %[[G0]]
// CHECK:       %[[G2:.+]] = shard.all_gather %arg5
// CHECK-NEXT:  tg.matmul %{{.+}}, %[[G1]]
// CHECK:       tg.matmul %{{.+}}, %[[G2]]
// MEMORY-LABEL: func.func @prefetch
// MEMORY:       shard.all_gather %arg1
// MEMORY-NEXT:  tg.matmul
// MEMORY-NEXT:  shard.all_gather %arg2
module {
  shard.grid @mesh(shape = 2) {tg.mesh_axes = ["dp"]}
  // expected-remark @+1 {{tg-schedule: simulated peak 23072768 -> 27271168 bytes (+18.20%); overlapped: modelled step 0.0001512 -> 0.0001338 s, exposed communication 2.399e-05 -> 6.66e-06 s}}
  func.func @prefetch(%x: tensor<1024x1024xf32> {tg.role = "input"},
                      %w0: tensor<512x1024xf32> {tg.role = "param", tg.name = "h.0.w"},
                      %b0: tensor<512xf32> {tg.role = "param", tg.name = "h.0.b"},
                      %w1: tensor<512x1024xf32> {tg.role = "param", tg.name = "h.1.w"},
                      %b1: tensor<512xf32> {tg.role = "param", tg.name = "h.1.b"},
                      %w2: tensor<512x1024xf32> {tg.role = "param", tg.name = "h.2.w"})
      -> (tensor<1024x1024xf32> {tg.role = "output"}) {
    %g0 = shard.all_gather %w0 on @mesh grid_axes = [0] gather_axis = 0 : tensor<512x1024xf32> -> tensor<1024x1024xf32>
    %y0 = tg.matmul %x, %g0 : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    %c0 = shard.all_gather %b0 on @mesh grid_axes = [0] gather_axis = 0 : tensor<512xf32> -> tensor<1024xf32>
    %e0 = tg.broadcast_in_dim %c0 dims = [1] : tensor<1024xf32> -> tensor<1024x1024xf32>
    %z0 = tg.add %y0, %e0 : tensor<1024x1024xf32>
    %g1 = shard.all_gather %w1 on @mesh grid_axes = [0] gather_axis = 0 : tensor<512x1024xf32> -> tensor<1024x1024xf32>
    %y1 = tg.matmul %z0, %g1 : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    %c1 = shard.all_gather %b1 on @mesh grid_axes = [0] gather_axis = 0 : tensor<512xf32> -> tensor<1024xf32>
    %e1 = tg.broadcast_in_dim %c1 dims = [1] : tensor<1024xf32> -> tensor<1024x1024xf32>
    %z1 = tg.add %y1, %e1 : tensor<1024x1024xf32>
    %g2 = shard.all_gather %w2 on @mesh grid_axes = [0] gather_axis = 0 : tensor<512x1024xf32> -> tensor<1024x1024xf32>
    %y2 = tg.matmul %z1, %g2 : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    return %y2 : tensor<1024x1024xf32>
  }
}
