// RUN: tgc-opt %s --split-input-file --tg-scaling-update --verify-diagnostics
// RUN: not tgc-opt %s --tg-scaling-update=backoff=0 2>&1 | FileCheck %s --check-prefix=OPTIONS
// RUN: not tgc-opt %s --tg-scaling-update=growth=0.5 2>&1 | FileCheck %s --check-prefix=OPTIONS
// RUN: not tgc-opt %s --tg-scaling-update=growth-interval=0 2>&1 | FileCheck %s --check-prefix=OPTIONS
// OPTIONS: error: tg-scaling-update: expected growth-interval >= 1, a finite growth >= 1 and backoff in (0, 1]

// A loss scale needs gradients to check.
// expected-error @+1 {{tg-scaling-update: 'forward' has a 'loss_scale' but no gradients to check; run tg-autodiff (and tg-optimizer) first}}
func.func @forward(%s: tensor<f32> {tg.role = "state", tg.name = "loss_scale"},
                   %x: tensor<4xf32> {tg.role = "input"}) -> (tensor<f32> {tg.role = "loss"}) {
  %loss = tg.reduce sum %x dims = [0] : tensor<4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// The update runs once.
// expected-error @+1 {{tg-scaling-update: 'twice' already updates its scaling state 'h'}}
func.func @twice(%x: tensor<4xbf16> {tg.role = "input"}, %h: tensor<2xf32> {tg.role = "state", tg.name = "h"})
    -> (tensor<4xbf16> {tg.role = "output"}, tensor<2xf32> {tg.role = "state", tg.name = "h", tg.aliases = 1}) {
  %0 = tg.fake_quant %x, %h format = f8E4M3FN margin = 0 : tensor<4xbf16>, tensor<2xf32>
  return %0, %h : tensor<4xbf16>, tensor<2xf32>
}
