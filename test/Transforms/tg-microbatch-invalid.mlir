// RUN: tgc-opt %s --split-input-file --tg-microbatch=micro-batches=2 --verify-diagnostics
// RUN: not tgc-opt %s --split-input-file --tg-microbatch=micro-batches=0 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: error: tg-microbatch: micro-batches must be >= 1

// Other results than the loss and gradients cannot be split.
// expected-error @+1 {{tg-microbatch: result #2 is neither the loss nor a gradient; only steps that return those can be split into micro-batches}}
func.func @outputs(%x: tensor<2xf32> {tg.role = "input"}, %w: tensor<2xf32> {tg.role = "param", tg.name = "w"})
    -> (tensor<f32> {tg.role = "loss"}, tensor<2xf32> {tg.role = "grad", tg.name = "w.grad"}, tensor<2xf32> {tg.role = "output"}) {
  %loss = tg.reduce sum %x dims = [0] : tensor<2xf32> -> tensor<f32>
  return %loss, %w, %x : tensor<f32>, tensor<2xf32>, tensor<2xf32>
}

// -----

// A batch argument needs a batch dimension.
// expected-error @+1 {{tg-microbatch: batch argument #0 is a scalar; its first dimension is the batch}}
func.func @scalar(%x: tensor<f32> {tg.role = "input"}, %w: tensor<2xf32> {tg.role = "param", tg.name = "w"})
    -> (tensor<f32> {tg.role = "loss"}, tensor<2xf32> {tg.role = "grad", tg.name = "w.grad"}) {
  return %x, %w : tensor<f32>, tensor<2xf32>
}
