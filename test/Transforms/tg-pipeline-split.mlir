// RUN: tgc-opt %s --split-input-file --tg-pipeline-split=stages=2 | FileCheck %s
// RUN: tgc-opt %s --split-input-file --tg-pipeline-split="stages=2 schedule=interleaved virtual-stages=2 micro-batches=2" | FileCheck %s --check-prefix=VIRTUAL
// RUN: tgc-opt %s --split-input-file --tg-pipeline-split="stages=2 explain" -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// EXPLAIN: remark: tg-pipeline-split: stage 0 (pp device 0, chunk 0): 4 ops of the batch path, layers 0 to 1, modelled forward time [[T:.*]] s
// EXPLAIN: remark: tg-pipeline-split: stage 1 (pp device 1, chunk 0): 4 ops of the batch path, layers 2 to 3, modelled forward time

// Four equal layers on two stages: cuts between layers, two each; the
// casts of the weights join the stage that uses them.
// CHECK-LABEL: func.func @mlp
// CHECK-SAME: tg.pipeline_stages = {axis = "pp", micro_batches = 1 : i64, schedule = "1f1b", stages = 2 : i64, virtual_stages = 1 : i64}
// CHECK: tg.convert %{{.*}} {tg.stage = 0 : i64}
// CHECK: tg.convert %{{.*}} {tg.stage = 1 : i64}
// CHECK: tg.matmul {{.*}} {tg.stage = 0 : i64}
// CHECK: tg.relu {{.*}} {tg.stage = 0 : i64}
// CHECK: tg.matmul {{.*}} {tg.stage = 0 : i64}
// CHECK: tg.relu {{.*}} {tg.stage = 0 : i64}
// CHECK: tg.matmul {{.*}} {tg.stage = 1 : i64}
// CHECK: tg.relu {{.*}} {tg.stage = 1 : i64}
// CHECK: tg.matmul {{.*}} {tg.stage = 1 : i64}
// CHECK: tg.reduce sum {{.*}} {tg.stage = 1 : i64}
// Interleaved, 2 x 2 virtual stages: one layer each.
// VIRTUAL-LABEL: func.func @mlp
// VIRTUAL-SAME: schedule = "interleaved", stages = 2 : i64, virtual_stages = 2 : i64
// VIRTUAL: tg.matmul {{.*}} {tg.stage = 0 : i64}
// VIRTUAL: tg.matmul {{.*}} {tg.stage = 1 : i64}
// VIRTUAL: tg.matmul {{.*}} {tg.stage = 2 : i64}
// VIRTUAL: tg.matmul {{.*}} {tg.stage = 3 : i64}
func.func @mlp(%x: tensor<64x256xf32> {tg.role = "input"},
               %w0: tensor<256x256xf32> {tg.role = "param", tg.name = "layers.0.w"},
               %w1: tensor<256x256xf32> {tg.role = "param", tg.name = "layers.1.w"},
               %w2: tensor<256x256xf32> {tg.role = "param", tg.name = "layers.2.w"},
               %w3: tensor<256x256xf32> {tg.role = "param", tg.name = "layers.3.w"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %c0 = tg.convert %w0 : tensor<256x256xf32> -> tensor<256x256xf32>
  %c2 = tg.convert %w2 : tensor<256x256xf32> -> tensor<256x256xf32>
  %h0 = tg.matmul %x, %c0 : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
  %a0 = tg.relu %h0 : tensor<64x256xf32>
  %h1 = tg.matmul %a0, %w1 : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
  %a1 = tg.relu %h1 : tensor<64x256xf32>
  %h2 = tg.matmul %a1, %c2 : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
  %a2 = tg.relu %h2 : tensor<64x256xf32>
  %h3 = tg.matmul %a2, %w3 : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
  %loss = tg.reduce sum %h3 dims = [0, 1] : tensor<64x256xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// A weight used on both stages (a tied embedding) has its cast copied to
// each: no transfer of a weight.
// CHECK-LABEL: func.func @tied
// CHECK: %[[C0:.*]] = tg.convert %[[W:.*]] {tg.stage = 0 : i64}
// CHECK: %[[C1:.*]] = tg.convert %[[W]] {tg.stage = 1 : i64}
// CHECK: tg.matmul %{{.*}}, %[[C0]] {tg.stage = 0 : i64}
// CHECK: tg.matmul %{{.*}}, %[[C1]] {tg.stage = 1 : i64}
// VIRTUAL-LABEL: func.func @tied
func.func @tied(%x: tensor<64x256xf32> {tg.role = "input"},
                %w: tensor<256x256xf32> {tg.role = "param", tg.name = "wte"},
                %w0: tensor<256x256xf32> {tg.role = "param", tg.name = "h.0.w"},
                %w1: tensor<256x256xf32> {tg.role = "param", tg.name = "h.1.w"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %c = tg.convert %w : tensor<256x256xf32> -> tensor<256x256xf32>
  %e = tg.matmul %x, %c : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
  %h0 = tg.matmul %e, %w0 : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
  %h1 = tg.matmul %h0, %w1 : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
  %o = tg.matmul %h1, %c : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
  %loss = tg.reduce sum %o dims = [0, 1] : tensor<64x256xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Without numbered layers, any op boundary is a cut, where the two stages'
// modelled times are closest.
// CHECK-LABEL: func.func @unnamed
// CHECK: tg.matmul {{.*}} {tg.stage = 0 : i64}
// CHECK: tg.relu {{.*}} {tg.stage = 0 : i64}
// CHECK: tg.neg {{.*}} {tg.stage = 1 : i64}
// CHECK: tg.reduce sum {{.*}} {tg.stage = 1 : i64}
// VIRTUAL-LABEL: func.func @unnamed
func.func @unnamed(%x: tensor<64x256xf32> {tg.role = "input"},
                   %w: tensor<256x256xf32> {tg.role = "param", tg.name = "w"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %h = tg.matmul %x, %w : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
  %a = tg.relu %h : tensor<64x256xf32>
  %n = tg.neg %a : tensor<64x256xf32>
  %loss = tg.reduce sum %n dims = [0, 1] : tensor<64x256xf32> -> tensor<f32>
  return %loss : tensor<f32>
}
