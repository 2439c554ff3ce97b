// RUN: not tgc-opt %s --tg-optimizer='kind=adagrad' 2>&1 | FileCheck %s --check-prefix=KIND
// RUN: not tgc-opt %s --tg-optimizer='kind=adamw momentum=0.9' 2>&1 | FileCheck %s --check-prefix=MOMENTUM
// KIND: error: tg-optimizer: unknown kind 'adagrad'; expected sgd, adamw, lamb or adafactor
// MOMENTUM: error: tg-optimizer: momentum and nesterov are options of kind=sgd

// The step is valid; the options are not.
func.func @step(%w: tensor<2xf32> {tg.role = "param", tg.name = "w"})
    -> (tensor<f32> {tg.role = "loss"}, tensor<2xf32> {tg.role = "grad", tg.name = "w.grad"}) {
  %loss = tg.reduce sum %w dims = [0] : tensor<2xf32> -> tensor<f32>
  return %loss, %w : tensor<f32>, tensor<2xf32>
}
