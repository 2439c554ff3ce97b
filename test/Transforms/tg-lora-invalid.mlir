// RUN: tgc-opt %s --split-input-file --tg-lora='rank=4 targets=w,missing*' -verify-diagnostics
// RUN: not tgc-opt %s --tg-lora='rank=0' 2>&1 | FileCheck %s --check-prefix=RANK
// RUN: not tgc-opt %s --tg-lora='rank=2 alpha=-1' 2>&1 | FileCheck %s --check-prefix=ALPHA
// RUN: not tgc-opt %s --tg-lora='rank=2 targets=[' 2>&1 | FileCheck %s --check-prefix=GLOB
// RANK: error: tg-lora: the rank must be at least 1, got 0
// ALPHA: error: tg-lora: alpha must be a finite number >= 0, got -1
// GLOB: error: tg-lora: invalid target glob '[': invalid glob pattern, unmatched '['

// A glob that adapts no parameter is an error that names it; a parameter it
// names that is no matmul weight gets a remark.
// expected-error @below {{tg-lora: target 'missing*' matches no parameter that is only used as a matmul weight}}
func.func @no_match(%x: tensor<4x8xf32> {tg.role = "input"},
                    %w: tensor<8x8xf32> {tg.role = "param", tg.name = "w"},
                    // expected-remark @below {{tg-lora: parameter 'missing.bias' gets no adapter: it is not used}}
                    %b: tensor<8xf32> {tg.role = "param", tg.name = "missing.bias"}) -> (tensor<f32> {tg.role = "loss"}) {
  %h = tg.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %loss = tg.reduce sum %h dims = [0, 1] : tensor<4x8xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// The rank may not exceed the weight's in (8) or out (3) size.
func.func @rank_too_large(%x: tensor<4x8xf32> {tg.role = "input"},
                          // expected-error @below {{tg-lora: rank 4 is larger than weight 'w' (8 in, 3 out) allows}}
                          %w: tensor<8x3xf32> {tg.role = "param", tg.name = "w"}) -> (tensor<f32> {tg.role = "loss"}) {
  %h = tg.matmul %x, %w : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %loss = tg.reduce sum %h dims = [0, 1] : tensor<4x3xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// One adapter cannot serve x @ W and x @ W^T.
func.func @both_ways(%x: tensor<4x8xf32> {tg.role = "input"},
                     // expected-error @below {{tg-lora: weight 'w' is used both as x @ W and as x @ W^T; one adapter cannot serve both}}
                     %w: tensor<8x8xf32> {tg.role = "param", tg.name = "w"},
                     %m: tensor<8x8xf32> {tg.role = "param", tg.name = "missing.weight"}) -> (tensor<f32> {tg.role = "loss"}) {
  %h = tg.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %o = tg.matmul %h, %w transpose_b : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %p = tg.matmul %o, %m : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %loss = tg.reduce sum %p dims = [0, 1] : tensor<4x8xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Adapters already there (the pass ran before): their names are taken.
func.func @twice(%x: tensor<4x8xf32> {tg.role = "input"},
                 // expected-error @below {{tg-lora: the adapter 'w.lora_A' of weight 'w' is already an argument (were adapters added before?)}}
                 %w: tensor<8x8xf32> {tg.role = "param", tg.name = "w"},
                 %a: tensor<8x4xf32> {tg.role = "param", tg.name = "w.lora_A"},
                 %m: tensor<8x8xf32> {tg.role = "param", tg.name = "missing.weight"}) -> (tensor<f32> {tg.role = "loss"}) {
  %g = tg.matmul %x, %m : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %h = tg.matmul %g, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %d = tg.matmul %x, %a : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %l1 = tg.reduce sum %h dims = [0, 1] : tensor<4x8xf32> -> tensor<f32>
  %l2 = tg.reduce sum %d dims = [0, 1] : tensor<4x4xf32> -> tensor<f32>
  %loss = tg.add %l1, %l2 : tensor<f32>
  return %loss : tensor<f32>
}
