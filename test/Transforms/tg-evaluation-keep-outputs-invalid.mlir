// RUN: tgc-opt %s --split-input-file --tg-evaluation=keep-outputs=true --verify-diagnostics

// An inference keeps a loss or outputs: a function of new state alone has
// neither.
// expected-error @+1 {{tg-evaluation: 'statistics' has no loss or output to evaluate}}
func.func @statistics(%x: tensor<4x3xf32> {tg.role = "input"},
                      %running: tensor<3xf32> {tg.role = "state", tg.buffer, tg.name = "running_mean"})
    -> (tensor<3xf32> {tg.role = "state", tg.name = "running_mean", tg.aliases = 1 : i64}) {
  %m = tg.reduce mean %x dims = [0] : tensor<4x3xf32> -> tensor<3xf32>
  %next = tg.add %running, %m : tensor<3xf32>
  return %next : tensor<3xf32>
}

// -----

// Still refused: a training step.
// expected-error @+1 {{tg-evaluation: 'step' is already a training step: result #1 is a gradient; evaluate the forward graph it was built from}}
func.func @step(%x: tensor<4xf32> {tg.role = "param", tg.name = "w"})
    -> (tensor<4xf32> {tg.role = "output"}, tensor<4xf32> {tg.role = "grad", tg.name = "w"}) {
  return %x, %x : tensor<4xf32>, tensor<4xf32>
}
