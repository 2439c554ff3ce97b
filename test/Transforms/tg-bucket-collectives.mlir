// RUN: tgc-opt %s --split-input-file --tg-bucket-collectives | FileCheck %s
// RUN: tgc-opt %s --split-input-file --tg-bucket-collectives='bucket-bytes=10000' | FileCheck %s --check-prefix=SMALL
// RUN: tgc-opt %s --split-input-file --tg-bucket-collectives='bucket-bytes=0' | FileCheck %s --check-prefix=OFF
// RUN: tgc-opt %s --split-input-file --tg-bucket-collectives --tg-memory-plan | FileCheck %s --check-prefix=PLAN
// RUN: tgc-opt %s --split-input-file --tg-bucket-collectives='gather=always' | FileCheck %s --check-prefix=GATHER

// Three gradients of a dp=2 step, computed in the order gb, gw, gv: one
// bucket, laid out in that order and issued right after gv, the last one;
// each update reads its slice of the reduced bucket.
// CHECK-LABEL: func.func @bucket
// CHECK:       %[[GB:.+]] = tg.reduce sum %arg1
// CHECK:       %[[GW:.+]] = tg.matmul %arg0, %arg1
// CHECK:       %[[GV:.+]] = tg.matmul %arg1, %arg0
// CHECK-NEXT:  %[[FW:.+]] = tg.reshape %[[GW]] : tensor<64x64xf32> -> tensor<4096xf32>
// CHECK-NEXT:  %[[FV:.+]] = tg.reshape %[[GV]] : tensor<64x64xf32> -> tensor<4096xf32>
// CHECK-NEXT:  %[[B:.+]] = tg.concat %[[GB]], %[[FW]], %[[FV]] dim = 0 : (tensor<64xf32>, tensor<4096xf32>, tensor<4096xf32>) -> tensor<8256xf32>
// CHECK-NEXT:  %[[R:.+]] = shard.all_reduce %[[B]] on @mesh grid_axes = [0] : tensor<8256xf32> -> tensor<8256xf32>
// CHECK-NEXT:  %[[RB:.+]] = tg.slice %[[R]] [0:64] : tensor<8256xf32> -> tensor<64xf32>
// CHECK-NEXT:  %[[SW:.+]] = tg.slice %[[R]] [64:4160] : tensor<8256xf32> -> tensor<4096xf32>
// CHECK-NEXT:  %[[RW:.+]] = tg.reshape %[[SW]] : tensor<4096xf32> -> tensor<64x64xf32>
// CHECK-NEXT:  %[[SV:.+]] = tg.slice %[[R]] [4160:8256] : tensor<8256xf32> -> tensor<4096xf32>
// CHECK-NEXT:  %[[RV:.+]] = tg.reshape %[[SV]] : tensor<4096xf32> -> tensor<64x64xf32>
// CHECK-NOT:   shard.all_reduce
// CHECK:       tg.sgd %arg2, %[[RW]]
// CHECK-NEXT:  tg.sgd %arg3, %[[RB]]
// CHECK-NEXT:  tg.sgd %arg4, %[[RV]]
// A bucket of 10000 bytes closes after gw (16640 bytes with gb); gv's
// all-reduce is left alone, a bucket of one.
// SMALL-LABEL: func.func @bucket
// SMALL:       tg.concat %{{.+}}, %{{.+}} dim = 0 : (tensor<64xf32>, tensor<4096xf32>) -> tensor<4160xf32>
// SMALL:       shard.all_reduce %{{.+}} : tensor<4160xf32> -> tensor<4160xf32>
// SMALL:       shard.all_reduce %{{.+}} : tensor<64x64xf32> -> tensor<64x64xf32>
// OFF-LABEL:   func.func @bucket
// OFF-NOT:     tg.concat
// The memory plan has each producer write its gradient in place inside the
// bucket (gb at its start, gw 256 bytes on, gv 16640 bytes on) and reads
// the slices where they lie.
// PLAN-LABEL: func.func @bucket
// PLAN:       tg.reduce sum %arg1 {{.*}}tg.offsets = array<i64: [[B:[0-9]+]]>
// PLAN:       tg.matmul %arg0, %arg1 {{.*}}tg.offsets = array<i64: [[W:[0-9]+]]>
// PLAN:       tg.matmul %arg1, %arg0 {{.*}}tg.offsets = array<i64: [[V:[0-9]+]]>
// PLAN:       tg.reshape {{.*}}tg.offsets = array<i64: [[W]]>
// PLAN:       tg.reshape {{.*}}tg.offsets = array<i64: [[V]]>
// PLAN:       tg.concat {{.*}}tg.offsets = array<i64: [[B]]>
// PLAN:       shard.all_reduce {{.*}}tg.offsets = array<i64: [[R:[0-9]+]]>
// PLAN:       tg.slice {{.*}}tg.offsets = array<i64: [[R]]>
module {
  shard.grid @mesh(shape = 2) {tg.mesh_axes = ["dp"]}
  func.func @bucket(%x: tensor<64x64xf32> {tg.role = "input"},
                    %dy: tensor<64x64xf32> {tg.role = "input"},
                    %w: tensor<64x64xf32> {tg.role = "param", tg.name = "w"},
                    %b: tensor<64xf32> {tg.role = "param", tg.name = "b"},
                    %v: tensor<64x64xf32> {tg.role = "param", tg.name = "v"},
                    %lr: tensor<f32> {tg.role = "hyper"})
      -> (tensor<64x64xf32> {tg.role = "param", tg.name = "w", tg.aliases = 2 : i64},
          tensor<64xf32> {tg.role = "param", tg.name = "b", tg.aliases = 3 : i64},
          tensor<64x64xf32> {tg.role = "param", tg.name = "v", tg.aliases = 4 : i64}) {
    %gb = tg.reduce sum %dy dims = [0] : tensor<64x64xf32> -> tensor<64xf32>
    %rb = shard.all_reduce %gb on @mesh grid_axes = [0] : tensor<64xf32> -> tensor<64xf32>
    %gw = tg.matmul %x, %dy transpose_a : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    %rw = shard.all_reduce %gw on @mesh grid_axes = [0] : tensor<64x64xf32> -> tensor<64x64xf32>
    %gv = tg.matmul %dy, %x transpose_b : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    %rv = shard.all_reduce %gv on @mesh grid_axes = [0] : tensor<64x64xf32> -> tensor<64x64xf32>
    %w2 = tg.sgd %w, %rw, %lr momentum = 0.0 weight_decay = 0.0 : tensor<64x64xf32>, tensor<f32>
    %b2 = tg.sgd %b, %rb, %lr momentum = 0.0 weight_decay = 0.0 : tensor<64xf32>, tensor<f32>
    %v2 = tg.sgd %v, %rv, %lr momentum = 0.0 weight_decay = 0.0 : tensor<64x64xf32>, tensor<f32>
    return %w2, %b2, %v2 : tensor<64x64xf32>, tensor<64xf32>, tensor<64x64xf32>
  }
}

// -----

// What is not bucketed together: gradients reduced over other axes, other
// element types, a loss's all-reduce (not a gradient). gw's all-reduce is
// read (by the update of w) before gv exists, so gw and gv cannot wait for
// each other: no bucket.
// CHECK-LABEL: func.func @apart
// CHECK-NOT:   tg.concat
// CHECK:       return
module {
  shard.grid @mesh(shape = 2x2) {tg.mesh_axes = ["dp", "tp"]}
  func.func @apart(%x: tensor<64x64xf32> {tg.role = "input"},
                   %dy: tensor<64x64xf32> {tg.role = "input"},
                   %w: tensor<64x64xf32> {tg.role = "param", tg.name = "w"},
                   %v: tensor<64x64xf32> {tg.role = "param", tg.name = "v"},
                   %u: tensor<64x64xf32> {tg.role = "param", tg.name = "u"},
                   %h: tensor<64xbf16> {tg.role = "param", tg.name = "h"},
                   %lr: tensor<f32> {tg.role = "hyper"})
      -> (tensor<f32> {tg.role = "loss"},
          tensor<64x64xf32> {tg.role = "param", tg.name = "w", tg.aliases = 2 : i64},
          tensor<64x64xf32> {tg.role = "param", tg.name = "v", tg.aliases = 3 : i64},
          tensor<64x64xf32> {tg.role = "param", tg.name = "u", tg.aliases = 4 : i64},
          tensor<64xbf16> {tg.role = "param", tg.name = "h", tg.aliases = 5 : i64}) {
    %l = tg.reduce sum %x dims = [0, 1] : tensor<64x64xf32> -> tensor<f32>
    %rl = shard.all_reduce %l on @mesh grid_axes = [0] : tensor<f32> -> tensor<f32>
    %gw = tg.matmul %x, %dy transpose_a : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    %rw = shard.all_reduce %gw on @mesh grid_axes = [0] : tensor<64x64xf32> -> tensor<64x64xf32>
    %w2 = tg.sgd %w, %rw, %lr momentum = 0.0 weight_decay = 0.0 : tensor<64x64xf32>, tensor<f32>
    %gv = tg.matmul %dy, %x transpose_b : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    %rv = shard.all_reduce %gv on @mesh grid_axes = [0] : tensor<64x64xf32> -> tensor<64x64xf32>
    %gu = tg.matmul %dy, %dy : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    %ru = shard.all_reduce %gu on @mesh grid_axes = [1] : tensor<64x64xf32> -> tensor<64x64xf32>
    %gh = tg.exp %h : tensor<64xbf16>
    %rh = shard.all_reduce %gh on @mesh grid_axes = [0] : tensor<64xbf16> -> tensor<64xbf16>
    %v2 = tg.sgd %v, %rv, %lr momentum = 0.0 weight_decay = 0.0 : tensor<64x64xf32>, tensor<f32>
    %u2 = tg.sgd %u, %ru, %lr momentum = 0.0 weight_decay = 0.0 : tensor<64x64xf32>, tensor<f32>
    %h2 = tg.sgd %h, %rh, %lr momentum = 0.0 weight_decay = 0.0 : tensor<64xbf16>, tensor<f32>
    return %rl, %w2, %v2, %u2, %h2 : tensor<f32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64xbf16>
  }
}

// -----

// A gradient of 100 f32 (400 bytes, not a multiple of 256) ends its
// bucket: what followed it would not start aligned. ga and gb go together,
// gc starts the next bucket, alone (no all-reduce of one is rewritten).
// CHECK-LABEL: func.func @unaligned
// CHECK:       tg.concat %{{.+}}, %{{.+}} dim = 0 : (tensor<64xf32>, tensor<100xf32>) -> tensor<164xf32>
// CHECK-NOT:   tg.concat
// CHECK:       return
module {
  shard.grid @mesh(shape = 2) {tg.mesh_axes = ["dp"]}
  func.func @unaligned(%x: tensor<64xf32> {tg.role = "input"},
                       %y: tensor<100xf32> {tg.role = "input"},
                       %a: tensor<64xf32> {tg.role = "param", tg.name = "a"},
                       %b: tensor<100xf32> {tg.role = "param", tg.name = "b"},
                       %c: tensor<64xf32> {tg.role = "param", tg.name = "c"},
                       %lr: tensor<f32> {tg.role = "hyper"})
      -> (tensor<64xf32> {tg.role = "param", tg.name = "a", tg.aliases = 2 : i64},
          tensor<100xf32> {tg.role = "param", tg.name = "b", tg.aliases = 3 : i64},
          tensor<64xf32> {tg.role = "param", tg.name = "c", tg.aliases = 4 : i64}) {
    %ga = tg.exp %x : tensor<64xf32>
    %ra = shard.all_reduce %ga on @mesh grid_axes = [0] : tensor<64xf32> -> tensor<64xf32>
    %gb = tg.exp %y : tensor<100xf32>
    %rb = shard.all_reduce %gb on @mesh grid_axes = [0] : tensor<100xf32> -> tensor<100xf32>
    %gc = tg.tanh %x : tensor<64xf32>
    %rc = shard.all_reduce %gc on @mesh grid_axes = [0] : tensor<64xf32> -> tensor<64xf32>
    %a2 = tg.sgd %a, %ra, %lr momentum = 0.0 weight_decay = 0.0 : tensor<64xf32>, tensor<f32>
    %b2 = tg.sgd %b, %rb, %lr momentum = 0.0 weight_decay = 0.0 : tensor<100xf32>, tensor<f32>
    %c2 = tg.sgd %c, %rc, %lr momentum = 0.0 weight_decay = 0.0 : tensor<64xf32>, tensor<f32>
    return %a2, %b2, %c2 : tensor<64xf32>, tensor<100xf32>, tensor<64xf32>
  }
}

// -----

// ZeRO-2's reduce-scatters on dp=8, in a step whose communication outweighs
// its kernels: one bucket. Each gradient becomes the rows of its eight
// blocks ([8, s]; gw's blocks are along its second dimension, so a
// transpose puts them first), the rows are concatenated (the copy), one
// reduce-scatter splits the whole, and each block is a slice of its result.
// CHECK-LABEL: func.func @scatter_bucket
// CHECK:       %[[GW:.+]] = tg.matmul %arg0, %arg1
// CHECK:       %[[GB:.+]] = tg.reduce sum %arg1
// CHECK-NEXT:  %[[SPLIT:.+]] = tg.reshape %[[GW]] : tensor<8x64xf32> -> tensor<8x8x8xf32>
// CHECK-NEXT:  %[[T:.+]] = tg.transpose %[[SPLIT]] perm = [1, 0, 2] : tensor<8x8x8xf32> -> tensor<8x8x8xf32>
// CHECK-NEXT:  %[[RW:.+]] = tg.reshape %[[T]] : tensor<8x8x8xf32> -> tensor<8x64xf32>
// CHECK-NEXT:  %[[RB:.+]] = tg.reshape %[[GB]] : tensor<64xf32> -> tensor<8x8xf32>
// CHECK-NEXT:  %[[C:.+]] = tg.concat %[[RW]], %[[RB]] dim = 1 : (tensor<8x64xf32>, tensor<8x8xf32>) -> tensor<8x72xf32>
// CHECK-NEXT:  %[[F:.+]] = tg.reshape %[[C]] : tensor<8x72xf32> -> tensor<576xf32>
// CHECK-NEXT:  %[[S:.+]] = shard.reduce_scatter %[[F]] on @mesh grid_axes = [0] scatter_axis = 0 : tensor<576xf32> -> tensor<72xf32>
// CHECK-NEXT:  %[[SW:.+]] = tg.slice %[[S]] [0:64] : tensor<72xf32> -> tensor<64xf32>
// CHECK-NEXT:  %[[BW:.+]] = tg.reshape %[[SW]] : tensor<64xf32> -> tensor<8x8xf32>
// CHECK-NEXT:  %[[BB:.+]] = tg.slice %[[S]] [64:72] : tensor<72xf32> -> tensor<8xf32>
// CHECK-NOT:   shard.reduce_scatter
// CHECK:       tg.sgd %arg2, %[[BW]]
// CHECK-NEXT:  tg.sgd %arg3, %[[BB]]
// OFF-LABEL:   func.func @scatter_bucket
// OFF-NOT:     tg.concat
module {
  shard.grid @mesh(shape = 8) {tg.mesh_axes = ["dp"]}
  func.func @scatter_bucket(%x: tensor<4x8xf32> {tg.role = "input"},
                            %dy: tensor<4x64xf32> {tg.role = "input"},
                            %w: tensor<8x8xf32> {tg.role = "param", tg.name = "w"},
                            %b: tensor<8xf32> {tg.role = "param", tg.name = "b"},
                            %lr: tensor<f32> {tg.role = "hyper"})
      -> (tensor<8x8xf32> {tg.role = "param", tg.name = "w", tg.aliases = 2 : i64},
          tensor<8xf32> {tg.role = "param", tg.name = "b", tg.aliases = 3 : i64}) {
    %gw = tg.matmul %x, %dy transpose_a : (tensor<4x8xf32>, tensor<4x64xf32>) -> tensor<8x64xf32>
    %sw = shard.reduce_scatter %gw on @mesh grid_axes = [0] scatter_axis = 1 : tensor<8x64xf32> -> tensor<8x8xf32>
    %gb = tg.reduce sum %dy dims = [0] : tensor<4x64xf32> -> tensor<64xf32>
    %sb = shard.reduce_scatter %gb on @mesh grid_axes = [0] scatter_axis = 0 : tensor<64xf32> -> tensor<8xf32>
    %nw = tg.sgd %w, %sw, %lr momentum = 0.0 weight_decay = 0.0 : tensor<8x8xf32>, tensor<f32>
    %nb = tg.sgd %b, %sb, %lr momentum = 0.0 weight_decay = 0.0 : tensor<8xf32>, tensor<f32>
    return %nw, %nb : tensor<8x8xf32>, tensor<8xf32>
  }
}

// -----

// The same reduce-scatters after a large matmul: the kernels outweigh the
// communication, the reduce-scatters hide behind them, and a bucket's
// copies would only lengthen the step: left alone.
// CHECK-LABEL: func.func @scatter_compute_bound
// CHECK-NOT:   tg.concat
// CHECK:       shard.reduce_scatter %{{.+}} scatter_axis = 1 : tensor<8x64xf32> -> tensor<8x8xf32>
// CHECK:       shard.reduce_scatter %{{.+}} scatter_axis = 0 : tensor<64xf32> -> tensor<8xf32>
module {
  shard.grid @mesh(shape = 8) {tg.mesh_axes = ["dp"]}
  func.func @scatter_compute_bound(%x: tensor<4x8xf32> {tg.role = "input"},
                            %dy: tensor<4x64xf32> {tg.role = "input"},
                            %big: tensor<4096x4096xf32> {tg.role = "input"},
                            %w: tensor<8x8xf32> {tg.role = "param", tg.name = "w"},
                            %b: tensor<8xf32> {tg.role = "param", tg.name = "b"},
                            %lr: tensor<f32> {tg.role = "hyper"})
      -> (tensor<8x8xf32> {tg.role = "param", tg.name = "w", tg.aliases = 3 : i64},
          tensor<8xf32> {tg.role = "param", tg.name = "b", tg.aliases = 4 : i64},
          tensor<4096x4096xf32>) {
    %gw = tg.matmul %x, %dy transpose_a : (tensor<4x8xf32>, tensor<4x64xf32>) -> tensor<8x64xf32>
    %sw = shard.reduce_scatter %gw on @mesh grid_axes = [0] scatter_axis = 1 : tensor<8x64xf32> -> tensor<8x8xf32>
    %gb = tg.reduce sum %dy dims = [0] : tensor<4x64xf32> -> tensor<64xf32>
    %sb = shard.reduce_scatter %gb on @mesh grid_axes = [0] scatter_axis = 0 : tensor<64xf32> -> tensor<8xf32>
    %nw = tg.sgd %w, %sw, %lr momentum = 0.0 weight_decay = 0.0 : tensor<8x8xf32>, tensor<f32>
    %nb = tg.sgd %b, %sb, %lr momentum = 0.0 weight_decay = 0.0 : tensor<8xf32>, tensor<f32>
    %p = tg.matmul %big, %big : (tensor<4096x4096xf32>, tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
    return %nw, %nb, %p : tensor<8x8xf32>, tensor<8xf32>, tensor<4096x4096xf32>
  }
}

// -----

// ZeRO-1's gathers of the bf16 copies of two weights on dp=2, each kept
// for a forward and a backward matmul, forced into a bucket
// (gather=always): the blocks flattened and concatenated in the order the
// step first reads them, one all-gather, and one multi-tensor region that
// copies each weight out of the [2, 64] view: w's blocks are its rows, a
// reshape puts them back; v's are its columns (gather axis 1), so its rows
// of blocks are transposed first. The all-gather of the input (sequence
// parallelism's kind: it depends on the batch) and b's (another element
// type) are left alone. Under gather=auto the step's kernels outweigh its
// communication and nothing is bucketed.
// GATHER-LABEL: func.func @gather_bucket
// GATHER:       %[[CW:.+]] = tg.convert %arg1
// GATHER-NEXT:  %[[CV:.+]] = tg.convert %arg2
// GATHER-NEXT:  %[[FW:.+]] = tg.reshape %[[CW]] : tensor<4x8xbf16> -> tensor<32xbf16>
// GATHER-NEXT:  %[[FV:.+]] = tg.reshape %[[CV]] : tensor<8x4xbf16> -> tensor<32xbf16>
// GATHER-NEXT:  %[[B:.+]] = tg.concat %[[FW]], %[[FV]] dim = 0 : (tensor<32xbf16>, tensor<32xbf16>) -> tensor<64xbf16>
// GATHER-NEXT:  %[[G:.+]] = shard.all_gather %[[B]] on @mesh grid_axes = [0] gather_axis = 0 : tensor<64xbf16> -> tensor<128xbf16>
// GATHER-NEXT:  %[[ROWS:.+]] = tg.reshape %[[G]] : tensor<128xbf16> -> tensor<2x64xbf16>
// GATHER-NEXT:  %[[OUT:.+]]:2 = tg.fusion(%[[ROWS]]) {kind = "multi_tensor"} : (tensor<2x64xbf16>) -> (tensor<8x8xbf16>, tensor<8x8xbf16>)
// GATHER-NEXT:  ^bb0(%[[A:.+]]: tensor<2x64xbf16>):
// GATHER-NEXT:    %[[SW:.+]] = tg.slice %[[A]] [0:2, 0:32] : tensor<2x64xbf16> -> tensor<2x32xbf16>
// GATHER-NEXT:    %[[W:.+]] = tg.reshape %[[SW]] : tensor<2x32xbf16> -> tensor<8x8xbf16>
// GATHER-NEXT:    %[[SV:.+]] = tg.slice %[[A]] [0:2, 32:64] : tensor<2x64xbf16> -> tensor<2x32xbf16>
// GATHER-NEXT:    %[[RV:.+]] = tg.reshape %[[SV]] : tensor<2x32xbf16> -> tensor<2x8x4xbf16>
// GATHER-NEXT:    %[[TV:.+]] = tg.transpose %[[RV]] perm = [1, 0, 2] : tensor<2x8x4xbf16> -> tensor<8x2x4xbf16>
// GATHER-NEXT:    %[[V:.+]] = tg.reshape %[[TV]] : tensor<8x2x4xbf16> -> tensor<8x8xbf16>
// GATHER-NEXT:    tg.yield %[[W]], %[[V]]
// GATHER:       shard.all_gather %arg0 on @mesh grid_axes = [0] gather_axis = 0 : tensor<4x8xf32> -> tensor<8x8xf32>
// GATHER:       tg.matmul %{{.+}}, %[[OUT]]#0 :
// GATHER:       tg.matmul %{{.+}}, %[[OUT]]#1 :
// GATHER:       tg.matmul %{{.+}}, %[[OUT]]#1 transpose_b
// GATHER:       tg.matmul %{{.+}}, %[[OUT]]#0 transpose_b
// GATHER:       shard.all_gather %arg3 on @mesh grid_axes = [0] gather_axis = 0 : tensor<4xf32> -> tensor<8xf32>
// CHECK-LABEL:  func.func @gather_bucket
// CHECK-NOT:    tg.concat
module {
  shard.grid @mesh(shape = 2) {tg.mesh_axes = ["dp"]}
  func.func @gather_bucket(%x: tensor<4x8xf32> {tg.role = "input"},
                           %w: tensor<4x8xf32> {tg.role = "param", tg.name = "w"},
                           %v: tensor<8x4xf32> {tg.role = "param", tg.name = "v"},
                           %b: tensor<4xf32> {tg.role = "param", tg.name = "b"})
      -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf32>) {
    %cw = tg.convert %w : tensor<4x8xf32> -> tensor<4x8xbf16>
    %cv = tg.convert %v : tensor<8x4xf32> -> tensor<8x4xbf16>
    %gw = shard.all_gather %cw on @mesh grid_axes = [0] gather_axis = 0 : tensor<4x8xbf16> -> tensor<8x8xbf16>
    %gv = shard.all_gather %cv on @mesh grid_axes = [0] gather_axis = 1 : tensor<8x4xbf16> -> tensor<8x8xbf16>
    %gx = shard.all_gather %x on @mesh grid_axes = [0] gather_axis = 0 : tensor<4x8xf32> -> tensor<8x8xf32>
    %xb = tg.convert %gx : tensor<8x8xf32> -> tensor<8x8xbf16>
    %h = tg.matmul %xb, %gw : (tensor<8x8xbf16>, tensor<8x8xbf16>) -> tensor<8x8xf32>
    %hb = tg.convert %h : tensor<8x8xf32> -> tensor<8x8xbf16>
    %y = tg.matmul %hb, %gv : (tensor<8x8xbf16>, tensor<8x8xbf16>) -> tensor<8x8xf32>
    %yb = tg.convert %y : tensor<8x8xf32> -> tensor<8x8xbf16>
    %dh = tg.matmul %yb, %gv transpose_b : (tensor<8x8xbf16>, tensor<8x8xbf16>) -> tensor<8x8xf32>
    %dhb = tg.convert %dh : tensor<8x8xf32> -> tensor<8x8xbf16>
    %dx = tg.matmul %dhb, %gw transpose_b : (tensor<8x8xbf16>, tensor<8x8xbf16>) -> tensor<8x8xf32>
    %gb = shard.all_gather %b on @mesh grid_axes = [0] gather_axis = 0 : tensor<4xf32> -> tensor<8xf32>
    return %y, %dh, %dx, %gb : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf32>
  }
}

// -----

// ZeRO-3 gathers each weight around its use: a bucket must not hold one
// gathered longer. w1 and its bias b1, which one gemm region reads, share
// a bucket (the block argument is ready at the start); w2, first read
// after both are read for the last time, is gathered alone. This step's
// communication outweighs its one matmul and gemm: gather=auto buckets too.
// CHECK-LABEL:  func.func @gather_zero3
// CHECK:        tg.concat %{{.+}}, %arg2 dim = 0
// GATHER-LABEL: func.func @gather_zero3
// GATHER:       %[[F1:.+]] = tg.reshape %arg1 : tensor<4x8xbf16> -> tensor<32xbf16>
// GATHER-NEXT:  %[[B:.+]] = tg.concat %[[F1]], %arg2 dim = 0 : (tensor<32xbf16>, tensor<4xbf16>) -> tensor<36xbf16>
// GATHER-NEXT:  shard.all_gather %[[B]] on @mesh grid_axes = [0] gather_axis = 0 : tensor<36xbf16> -> tensor<72xbf16>
// GATHER:       tg.yield
// GATHER:       tg.fusion
// GATHER:       shard.all_gather %arg3 on @mesh grid_axes = [0] gather_axis = 0 : tensor<4x8xbf16> -> tensor<8x8xbf16>
module {
  shard.grid @mesh(shape = 2) {tg.mesh_axes = ["dp"]}
  func.func @gather_zero3(%x: tensor<8x8xbf16> {tg.role = "input"},
                          %w1: tensor<4x8xbf16> {tg.role = "param", tg.name = "w1"},
                          %b1: tensor<4xbf16> {tg.role = "param", tg.name = "b1"},
                          %w2: tensor<4x8xbf16> {tg.role = "param", tg.name = "w2"})
      -> tensor<8x8xbf16> {
    %gw1 = shard.all_gather %w1 on @mesh grid_axes = [0] gather_axis = 0 : tensor<4x8xbf16> -> tensor<8x8xbf16>
    %gb1 = shard.all_gather %b1 on @mesh grid_axes = [0] gather_axis = 0 : tensor<4xbf16> -> tensor<8xbf16>
    %h = tg.fusion(%x, %gw1, %gb1) {kind = "gemm", epilogue = "CUBLASLT_EPILOGUE_BIAS"} : (tensor<8x8xbf16>, tensor<8x8xbf16>, tensor<8xbf16>) -> tensor<8x8xbf16> {
    ^bb0(%a: tensor<8x8xbf16>, %b: tensor<8x8xbf16>, %c: tensor<8xbf16>):
      %m = tg.matmul %a, %b : (tensor<8x8xbf16>, tensor<8x8xbf16>) -> tensor<8x8xbf16>
      %cb = tg.broadcast_in_dim %c dims = [1] : tensor<8xbf16> -> tensor<8x8xbf16>
      %s = tg.add %m, %cb : tensor<8x8xbf16>
      tg.yield %s : tensor<8x8xbf16>
    }
    %gw2 = shard.all_gather %w2 on @mesh grid_axes = [0] gather_axis = 0 : tensor<4x8xbf16> -> tensor<8x8xbf16>
    %y = tg.matmul %h, %gw2 : (tensor<8x8xbf16>, tensor<8x8xbf16>) -> tensor<8x8xbf16>
    return %y : tensor<8x8xbf16>
  }
}
