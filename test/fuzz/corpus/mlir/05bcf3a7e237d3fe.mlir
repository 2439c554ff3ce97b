// EXPLAIN: remark: tg-pipeline-split: stage 0 (pp device 0, chunk 0): 4 ops of the batch path, layers 0 to 1, modelled forward time [[T:.*]] s
// EXPLAIN: remark: tg-pipeline-split: stage 1 (pp device 1, chunk 0): 4 ops of the batch path, layers 2 to 3, modelled forward time

// Four equal layers on two stages: cuts between layers, two each; the
// casts of the weights join the stage that uses them.
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
