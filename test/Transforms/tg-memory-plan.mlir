// RUN: tgc-opt %s --split-input-file --tg-memory-plan | FileCheck %s
// RUN: tgc-opt %s --split-input-file --tg-memory-plan='explain' --verify-diagnostics > /dev/null
// RUN: tgc-opt %s --split-input-file --tg-memory-plan='alignment=64' | FileCheck %s --check-prefix=ALIGN64

// A chain: the input and two buffers that take turns (the first exp's
// result dies at tanh; the second exp writes into its place).
// CHECK-LABEL: func.func @chain
// CHECK-SAME:    %arg0: tensor<1024xf32> {tg.offset = [[X:[0-9]+]] : i64, tg.role = "input"}
// CHECK-SAME:    attributes {tg.arena_size = 12288 : i64}
// CHECK:       tg.exp %arg0 {tg.offsets = array<i64: [[A:[0-9]+]]>}
// CHECK-NEXT:  tg.tanh %{{.*}} {tg.offsets = array<i64: [[B:[0-9]+]]>}
// CHECK-NEXT:  tg.exp %{{.*}} {tg.offsets = array<i64: [[A]]>}
// ALIGN64-LABEL: func.func @chain
// ALIGN64-SAME:  tg.arena_size = 12288 : i64
// expected-remark @+1 {{tg-memory-plan: arena 12288 bytes, simulated peak 12288 bytes (12288 with 256-byte alignment): 1.0000 x the peak}}
func.func @chain(%x: tensor<1024xf32> {tg.role = "input"}) -> tensor<1024xf32> {
  %0 = tg.exp %x : tensor<1024xf32>
  %1 = tg.tanh %0 : tensor<1024xf32>
  %2 = tg.exp %1 : tensor<1024xf32>
  return %2 : tensor<1024xf32>
}

// -----

// Sizes round up to the alignment: three 4-byte buffers take 768 bytes with
// 256-byte alignment and 192 with 64.
// CHECK-LABEL: func.func @small
// CHECK-SAME:    attributes {tg.arena_size = 768 : i64}
// ALIGN64-LABEL: func.func @small
// ALIGN64-SAME:  attributes {tg.arena_size = 192 : i64}
// expected-remark @+1 {{tg-memory-plan: arena 768 bytes, simulated peak 12 bytes (768 with 256-byte alignment): 64.0000 x the peak}}
func.func @small(%x: tensor<f32> {tg.role = "input"}) -> tensor<f32> {
  %0 = tg.exp %x : tensor<f32>
  %1 = tg.exp %0 : tensor<f32>
  return %1 : tensor<f32>
}

// -----

// An in-place update takes its parameter's offset; a reshape shares its
// operand's; the matmul's GEMM workspace gets its own offset on the
// function.
// CHECK-LABEL: func.func @update
// CHECK-SAME:    %arg0: tensor<16x16xf32> {tg.name = "w", tg.offset = [[W:[0-9]+]] : i64, tg.role = "param"}
// CHECK-SAME:    attributes {tg.arena_size = {{[0-9]+}} : i64, tg.gemm_workspace_offset = {{[0-9]+}} : i64}
// CHECK:       tg.matmul {{.*}}tg.offsets = array<i64: [[G:[0-9]+]]>
// CHECK-NEXT:  tg.reshape {{.*}}tg.offsets = array<i64: [[G]]>
// CHECK-NEXT:  tg.reshape {{.*}}tg.offsets = array<i64: [[G]]>
// CHECK-NEXT:  tg.sgd %arg0, {{.*}}tg.offsets = array<i64: [[W]]>
// expected-remark @+1 {{tg-memory-plan: arena}}
func.func @update(%w: tensor<16x16xf32> {tg.role = "param", tg.name = "w"},
                  %x: tensor<16x16xf32> {tg.role = "input"},
                  %lr: tensor<f32> {tg.role = "hyper"})
    -> (tensor<16x16xf32> {tg.role = "param", tg.name = "w", tg.aliases = 0 : i64}) {
  %g = tg.matmul %x, %x transpose_a : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %f = tg.reshape %g : tensor<16x16xf32> -> tensor<256xf32>
  %h = tg.reshape %f : tensor<256xf32> -> tensor<16x16xf32>
  %w2 = tg.sgd %w, %h, %lr momentum = 0.0 weight_decay = 0.0 : tensor<16x16xf32>, tensor<f32>
  return %w2 : tensor<16x16xf32>
}

// -----

// attention_grad needs a workspace (f32 dQ accumulator and the row deltas)
// during the op.
// CHECK-LABEL: func.func @workspace
// CHECK:       tg.attention_grad {{.*}}tg.workspace_offset = {{[0-9]+}} : i64
// expected-remark @+1 {{tg-memory-plan: arena}}
func.func @workspace(%do: tensor<1x2x8x16xf32> {tg.role = "input"}, %q: tensor<1x2x8x16xf32> {tg.role = "input"},
                     %k: tensor<1x2x8x16xf32> {tg.role = "input"}, %v: tensor<1x2x8x16xf32> {tg.role = "input"},
                     %o: tensor<1x2x8x16xf32> {tg.role = "input"}, %lse: tensor<1x2x8xf32> {tg.role = "input"})
    -> (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) {
  %dq, %dk, %dv = tg.attention_grad %do, %q, %k, %v, %o, %lse causal : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8xf32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>)
  return %dq, %dk, %dv : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
}

// -----

// A collective reads its operand on the communication stream until it ends,
// which a kernel learns only where it consumes the result (the update): the
// unreduced gradient's buffer is not given to the exp and tanh that run
// meanwhile, though its last reader in the order is the all-reduce.
// CHECK-LABEL: func.func @in_flight
// CHECK:       tg.matmul {{.*}} {tg.offsets = array<i64: [[GW:[0-9]+]]>}
// CHECK-NEXT:  shard.all_reduce
// CHECK-NOT:   tg.offsets = array<i64: [[GW]]>
// CHECK:       tg.sgd
module {
  shard.grid @mesh(shape = 2) {tg.mesh_axes = ["dp"]}
  // expected-remark @+1 {{tg-memory-plan: arena 35389696 bytes, simulated peak 35389444 bytes (35389696 with 256-byte alignment): 1.0000 x the peak}}
  func.func @in_flight(%x: tensor<256x256xf32> {tg.role = "input"},
                       %dy: tensor<256x256xf32> {tg.role = "input"},
                       %w: tensor<256x256xf32> {tg.role = "param", tg.name = "w"},
                       %lr: tensor<f32> {tg.role = "hyper"})
      -> (tensor<256x256xf32> {tg.role = "param", tg.name = "w", tg.aliases = 2 : i64},
          tensor<256x256xf32> {tg.role = "output"}) {
    %gw = tg.matmul %x, %dy transpose_a : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
    %r = shard.all_reduce %gw on @mesh grid_axes = [0] : tensor<256x256xf32> -> tensor<256x256xf32>
    %e = tg.exp %dy : tensor<256x256xf32>
    %t = tg.tanh %e : tensor<256x256xf32>
    %w2 = tg.sgd %w, %r, %lr momentum = 0.0 weight_decay = 0.0 : tensor<256x256xf32>, tensor<f32>
    return %w2, %t : tensor<256x256xf32>, tensor<256x256xf32>
  }
}
