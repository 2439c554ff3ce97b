// RUN: tgc-opt %s --split-input-file --tg-pipeline-split=stages=4 --verify-diagnostics
// RUN: not tgc-opt %s --split-input-file --tg-pipeline-split="stages=2 schedule=zigzag" 2>&1 | FileCheck %s --check-prefix=KIND
// KIND: error: tg-pipeline-split: unknown schedule 'zigzag' (expected gpipe, 1f1b or interleaved)
// RUN: not tgc-opt %s --split-input-file --tg-pipeline-split="stages=2 virtual-stages=2" 2>&1 | FileCheck %s --check-prefix=VIRTUAL
// VIRTUAL: error: tg-pipeline-split: virtual stages need the interleaved schedule (--pipeline-schedule interleaved)
// RUN: not tgc-opt %s --split-input-file --tg-pipeline-split="stages=2 schedule=interleaved virtual-stages=2 micro-batches=3" 2>&1 | FileCheck %s --check-prefix=MULTIPLE
// MULTIPLE: error: tg-pipeline-split: the interleaved schedule needs micro-batches (3) to be a multiple of the pipeline stages (2)

// Four stages, two numbered layers (and nothing before or after them).
// expected-error @+1 {{tg-pipeline-split: 4 pipeline stages but @two has 2 layers (counting the ops before the first and after the last): at most one stage per layer}}
func.func @two(%x: tensor<4x8xf32> {tg.role = "input"},
               %w0: tensor<8x8xf32> {tg.role = "param", tg.name = "layers.0.w"},
               %w1: tensor<8x8xf32> {tg.role = "param", tg.name = "layers.1.w"})
    -> (tensor<4x8xf32> {tg.role = "output"}) {
  %h0 = tg.matmul %x, %w0 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %a0 = tg.relu %h0 : tensor<4x8xf32>
  %h1 = tg.matmul %a0, %w1 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %a1 = tg.relu %h1 : tensor<4x8xf32>
  return %a1 : tensor<4x8xf32>
}

// -----

// Fewer ops on the path of the batch than stages.
// expected-error @+1 {{tg-pipeline-split: 4 pipeline stages need at least as many ops on the path of the batch; @tiny has 1}}
func.func @tiny(%x: tensor<4xf32> {tg.role = "input"}) -> (tensor<4xf32> {tg.role = "output"}) {
  %y = tg.neg %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
