// RUN: tgc-opt %s --tg-bucket-collectives='bucket-bytes=-1' --verify-diagnostics

module {
  // expected-error @+1 {{tg-bucket-collectives: bucket-bytes must be 0 or more, got -1}}
  func.func @negative(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}
