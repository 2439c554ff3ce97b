// RUN: not tgc-opt %s --tg-memory-plan='alignment=48' 2>&1 | FileCheck %s --check-prefix=ALIGN
// RUN: not tgc-opt %s --tg-memory-plan='alignment=0' 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not tgc-opt %s --tg-memory-plan='device=TPU' 2>&1 | FileCheck %s --check-prefix=DEVICE
// RUN: not tgc-opt %s --split-input-file --tg-memory-plan 2>&1 | FileCheck %s --check-prefix=ATTR
// ALIGN: error: tg-memory-plan: alignment must be a power of two, got 48
// ZERO: error: tg-memory-plan: alignment must be a power of two, got 0
// DEVICE: error: tg-memory-plan: unknown device 'TPU'; known devices: A100-40GB, A100-80GB, H100-SXM, H200, B200
// ATTR: error: tg-memory-plan: invalid tg.device: unknown device field 'hbm'

// The function is valid; the options are not.
func.func @f(%x: tensor<4xf32> {tg.role = "input"}) -> tensor<4xf32> {
  %0 = tg.exp %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// The module's device is read, and checked, where a pass needs it.
module attributes {tg.device = {base = "H100-SXM", hbm = 1 : i64}} {
  func.func @g(%x: tensor<4xf32> {tg.role = "input"}) -> tensor<4xf32> {
    %0 = tg.exp %x : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
