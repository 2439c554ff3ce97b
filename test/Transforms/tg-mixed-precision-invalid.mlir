// RUN: tgc-opt %s --split-input-file --tg-mixed-precision=policy=fp16 --verify-diagnostics
// RUN: not tgc-opt %s --tg-mixed-precision=policy=int4 2>&1 | FileCheck %s --check-prefix=POLICY
// RUN: not tgc-opt %s --tg-mixed-precision="policy=bf16 keep-fp32=tg.nosuchop" 2>&1 | FileCheck %s --check-prefix=KIND
// RUN: not tgc-opt %s --tg-mixed-precision="policy=bf16 keep-fp32-params=[" 2>&1 | FileCheck %s --check-prefix=GLOB
// RUN: not tgc-opt %s --tg-mixed-precision="policy=fp16 init-scale=0" 2>&1 | FileCheck %s --check-prefix=SCALE
// RUN: not tgc-opt %s --tg-mixed-precision="policy=fp8 amax-history=0" 2>&1 | FileCheck %s --check-prefix=HISTORY
// POLICY: error: tg-mixed-precision: unknown policy 'int4'; expected fp32, bf16, fp16 or fp8
// KIND: error: tg-mixed-precision: keep-fp32 names 'tg.nosuchop', which is not a tg op
// GLOB: error: tg-mixed-precision: invalid keep-fp32-params glob '['
// SCALE: error: tg-mixed-precision: init-scale must be positive and finite, got 0
// HISTORY: error: tg-mixed-precision: amax-history must be >= 1

// Autocasting comes before differentiation.
// expected-error @+1 {{tg-mixed-precision runs before tg-autodiff, so that the backward inherits the forward's precision; result #1 is already a gradient}}
func.func @differentiated(%w: tensor<2xf32> {tg.role = "param", tg.name = "w"})
    -> (tensor<f32> {tg.role = "loss"}, tensor<2xf32> {tg.role = "grad", tg.name = "w.grad"}) {
  %loss = tg.reduce sum %w dims = [0] : tensor<2xf32> -> tensor<f32>
  return %loss, %w : tensor<f32>, tensor<2xf32>
}

// -----

// A step is loss-scaled once.
// expected-error @+1 {{tg-mixed-precision: argument 'loss_scale' already exists; the function is already loss-scaled}}
func.func @scaled(%w: tensor<2xf32> {tg.role = "param", tg.name = "w"},
                  %s: tensor<f32> {tg.role = "state", tg.name = "loss_scale"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %loss = tg.reduce sum %w dims = [0] : tensor<2xf32> -> tensor<f32>
  return %loss : tensor<f32>
}
