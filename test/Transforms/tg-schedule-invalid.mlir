// RUN: not tgc-opt %s --split-input-file --tg-schedule='device=TPU' 2>&1 | FileCheck %s --check-prefix=DEVICE
// RUN: not tgc-opt %s --split-input-file --tg-schedule 2>&1 | FileCheck %s --check-prefix=ATTR
// DEVICE: error: tg-schedule: unknown device 'TPU'; known devices: A100-40GB, A100-80GB, H100-SXM, H200, B200
// ATTR: error: tg-schedule: invalid tg.device: unknown device field 'hbm'

// The device times the overlap of collectives, so a step with one reads it.
module {
  shard.grid @mesh(shape = 2) {tg.mesh_axes = ["dp"]}
  func.func @f(%x: tensor<4xf32> {tg.role = "input"}) -> tensor<4xf32> {
    %0 = shard.all_reduce %x on @mesh grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

module attributes {tg.device = {base = "H100-SXM", hbm = 1 : i64}} {
  shard.grid @mesh(shape = 2) {tg.mesh_axes = ["dp"]}
  func.func @g(%x: tensor<4xf32> {tg.role = "input"}) -> tensor<4xf32> {
    %0 = shard.all_reduce %x on @mesh grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
