// RUN: tgc-opt %s --split-input-file --tg-bucket-collectives='bucket-bytes=-1' --verify-diagnostics
// RUN: not tgc-opt %s --split-input-file --tg-bucket-collectives='scatter=sometimes' 2>&1 | FileCheck %s --check-prefix=SCATTER
// RUN: not tgc-opt %s --split-input-file --tg-bucket-collectives='gather=sometimes' 2>&1 | FileCheck %s --check-prefix=GATHER

// SCATTER: error: tg-bucket-collectives: scatter is auto, always or never, not 'sometimes'
// GATHER: error: tg-bucket-collectives: gather is auto, always or never, not 'sometimes'
module {
  // expected-error @+1 {{tg-bucket-collectives: bucket-bytes must be 0 or more, got -1}}
  func.func @negative(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}
