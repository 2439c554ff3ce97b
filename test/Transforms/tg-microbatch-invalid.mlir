// RUN: tgc-opt %s --split-input-file --tg-microbatch=micro-batches=2 --verify-diagnostics
// RUN: not tgc-opt %s --split-input-file --tg-microbatch=micro-batches=0 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: error: tg-microbatch: micro-batches must be >= 1

// Other results than the loss, gradients and outputs whose first dimension
// is the batch's cannot be split: a scalar output (a metric) would need a
// rule of its own.
// expected-error @+1 {{tg-microbatch: result #2 ('accuracy') is neither the loss, a gradient, an output whose first dimension is the batch's nor state updated from the argument it aliases; only steps that return those can be split into micro-batches}}
func.func @outputs(%x: tensor<2xf32> {tg.role = "input"}, %w: tensor<2xf32> {tg.role = "param", tg.name = "w"})
    -> (tensor<f32> {tg.role = "loss"}, tensor<2xf32> {tg.role = "grad", tg.name = "w.grad"}, tensor<f32> {tg.role = "output", tg.name = "accuracy"}) {
  %loss = tg.reduce sum %x dims = [0] : tensor<2xf32> -> tensor<f32>
  return %loss, %w, %loss : tensor<f32>, tensor<2xf32>, tensor<f32>
}

// -----

// Nor can an output whose first dimension is not the batch's.
// expected-error @+1 {{tg-microbatch: result #2 is neither the loss, a gradient, an output whose first dimension is the batch's}}
func.func @weight_output(%x: tensor<2xf32> {tg.role = "input"}, %w: tensor<3xf32> {tg.role = "param", tg.name = "w"})
    -> (tensor<f32> {tg.role = "loss"}, tensor<3xf32> {tg.role = "grad", tg.name = "w.grad"}, tensor<3xf32> {tg.role = "output"}) {
  %loss = tg.reduce sum %x dims = [0] : tensor<2xf32> -> tensor<f32>
  return %loss, %w, %w : tensor<f32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// A batch argument needs a batch dimension.
// expected-error @+1 {{tg-microbatch: batch argument #0 is a scalar; its first dimension is the batch}}
func.func @scalar(%x: tensor<f32> {tg.role = "input"}, %w: tensor<2xf32> {tg.role = "param", tg.name = "w"})
    -> (tensor<f32> {tg.role = "loss"}, tensor<2xf32> {tg.role = "grad", tg.name = "w.grad"}) {
  return %x, %w : tensor<f32>, tensor<2xf32>
}

// -----

// The body is repeated per micro-batch: a million copies of it are refused
// (the RUN line above uses 2; this case is run alone below).
// RUN: not tgc-opt %s --split-input-file --tg-microbatch=micro-batches=1000000 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: error: tg-microbatch: 1000000 micro-batches of a step of {{[0-9]+}} ops would make {{[0-9]+}} ops (at most 1048576); use fewer micro-batches
func.func @huge(%x: tensor<2xf32> {tg.role = "input"}, %w: tensor<2xf32> {tg.role = "param", tg.name = "w"})
    -> (tensor<f32> {tg.role = "loss"}, tensor<2xf32> {tg.role = "grad", tg.name = "w.grad"}) {
  %0 = tg.mul %x, %w : tensor<2xf32>
  %loss = tg.reduce sum %0 dims = [0] : tensor<2xf32> -> tensor<f32>
  return %loss, %w : tensor<f32>, tensor<2xf32>
}

// -----

// A state result that aliases no argument has nothing to thread.
// expected-error @+1 {{tg-microbatch: result #2 ('running_mean') is neither the loss, a gradient, an output whose first dimension is the batch's nor state updated from the argument it aliases}}
func.func @unaliased_state(%x: tensor<2x3xf32> {tg.role = "input"}, %w: tensor<3xf32> {tg.role = "param", tg.name = "w"})
    -> (tensor<f32> {tg.role = "loss"}, tensor<3xf32> {tg.role = "grad", tg.name = "w.grad"},
        tensor<3xf32> {tg.role = "state", tg.name = "running_mean"}) {
  %loss = tg.reduce sum %x dims = [0, 1] : tensor<2x3xf32> -> tensor<f32>
  %m = tg.reduce mean %x dims = [0] : tensor<2x3xf32> -> tensor<3xf32>
  return %loss, %w, %m : tensor<f32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// A pipelined step threads state between its micro-batches within one
// stage: here the second micro-batch's stage 0 would read what the first's
// stage 1 writes, which no schedule has run by then.
// expected-error @+1 {{tg-microbatch: state result #2 ('running_mean') is read and updated on stages 0 and 1; a pipelined step threads state between its micro-batches only within one stage}}
func.func @pipelined_state(%x: tensor<2x3xf32> {tg.role = "input"}, %w: tensor<3xf32> {tg.role = "param", tg.name = "w"},
                           %running: tensor<3xf32> {tg.role = "state", tg.buffer, tg.name = "running_mean"})
    -> (tensor<f32> {tg.role = "loss"}, tensor<3xf32> {tg.role = "grad", tg.name = "w.grad"},
        tensor<3xf32> {tg.role = "state", tg.name = "running_mean", tg.aliases = 2 : i64})
    attributes {tg.pipeline_stages = {axis = "pp", stages = 2 : i64, virtual_stages = 1 : i64, micro_batches = 1 : i64, schedule = "1f1b"}} {
  %r = tg.mul %running, %running {tg.stage = 0 : i64} : tensor<3xf32>
  %rs = tg.reduce sum %r dims = [0] {tg.stage = 0 : i64} : tensor<3xf32> -> tensor<f32>
  %l = tg.reduce sum %x dims = [0, 1] {tg.stage = 0 : i64} : tensor<2x3xf32> -> tensor<f32>
  %loss = tg.add %l, %rs {tg.stage = 1 : i64} : tensor<f32>
  %m = tg.reduce mean %x dims = [0] {tg.stage = 0 : i64} : tensor<2x3xf32> -> tensor<3xf32>
  %next = tg.add %running, %m {tg.stage = 1 : i64} : tensor<3xf32>
  return %loss, %w, %next : tensor<f32>, tensor<3xf32>, tensor<3xf32>
}
