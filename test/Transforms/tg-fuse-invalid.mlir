// RUN: not tgc-opt %s --tg-fuse='max-region-ops=1' 2>&1 | FileCheck %s --check-prefix=MAX
// RUN: not tgc-opt %s --tg-fuse='device=TPU' 2>&1 | FileCheck %s --check-prefix=DEVICE
// RUN: not tgc-opt %s --tg-fuse='no-such-option=1' 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: tgc-opt %s --tg-fuse='peak-rise=-1' -verify-diagnostics -o /dev/null
// RUN: tgc-opt %s --tg-fuse='peak-rise=101' -verify-diagnostics -o /dev/null
// RUN: not tgc-opt %s --tg-fuse='peak-rise=101' 2>&1 | FileCheck %s --check-prefix=RISE-BIG
// MAX: error: tg-fuse: max-region-ops must be at least 2, got 1
// DEVICE: error: tg-fuse: unknown device 'TPU'
// UNKNOWN: no-such-option
// RISE-BIG: error: tg-fuse: peak-rise must be a percentage from 0 to 100, got 101

// The function is valid; the options are not. (Only the peak-rise runs
// verify the diagnostics; the others check their own message above.)
// expected-error @+1 {{tg-fuse: peak-rise must be a percentage from 0 to 100, got}}
func.func @f(%x: tensor<4xf32> {tg.role = "input"}) -> tensor<4xf32> {
  %0 = tg.exp %x : tensor<4xf32>
  %1 = tg.relu %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}
