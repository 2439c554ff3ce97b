// RUN: tgc-opt %s --split-input-file --tg-evaluation --verify-diagnostics

// An evaluation measures a loss.
// expected-error @+1 {{tg-evaluation: 'outputs' has no 'loss' result to evaluate (tg.role = "loss")}}
func.func @outputs(%x: tensor<4xf32> {tg.role = "input"}) -> (tensor<4xf32> {tg.role = "output"}) {
  %0 = tg.relu %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A training step is evaluated through the forward graph it was built from.
// expected-error @+1 {{tg-evaluation: 'step' is already a training step: result #1 is a gradient; evaluate the forward graph it was built from}}
func.func @step(%x: tensor<4xf32> {tg.role = "param", tg.name = "w"})
    -> (tensor<f32> {tg.role = "loss"}, tensor<4xf32> {tg.role = "grad", tg.name = "w"}) {
  %0 = tg.reduce sum %x dims = [0] : tensor<4xf32> -> tensor<f32>
  return %0, %x : tensor<f32>, tensor<4xf32>
}

// -----

// After the optimizer: the new parameters are results.
// expected-error @+1 {{tg-evaluation: 'updated' is already a training step: result #1 is a parameter's new value; evaluate the forward graph it was built from}}
func.func @updated(%x: tensor<4xf32> {tg.role = "param", tg.name = "w"})
    -> (tensor<f32> {tg.role = "loss"}, tensor<4xf32> {tg.role = "param", tg.name = "w", tg.aliases = 0}) {
  %0 = tg.reduce sum %x dims = [0] : tensor<4xf32> -> tensor<f32>
  return %0, %x : tensor<f32>, tensor<4xf32>
}

// -----

// expected-error @+1 {{tg-evaluation works on functions of one block; @branches has 2 (branches are not supported)}}
func.func @branches(%x: tensor<f32> {tg.role = "input"}) -> (tensor<f32> {tg.role = "loss"}) {
  cf.br ^bb1
^bb1:
  return %x : tensor<f32>
}
