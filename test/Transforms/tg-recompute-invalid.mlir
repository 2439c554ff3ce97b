// RUN: split-file %s %t --leading-lines
// RUN: tgc-opt %t/dp.mlir --tg-recompute='budget=1000' --verify-diagnostics
// RUN: tgc-opt %t/strategy.mlir --tg-recompute='budget=33660000 strategy=none' --verify-diagnostics
// RUN: not tgc-opt %t/dp.mlir --tg-recompute='budget=1GiBs' 2>&1 | FileCheck %s --check-prefix=SUFFIX
// RUN: not tgc-opt %t/dp.mlir --tg-recompute='budget=-5' 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not tgc-opt %t/dp.mlir --tg-recompute='strategy=greedy' 2>&1 | FileCheck %s --check-prefix=STRATEGY
// RUN: not tgc-opt %t/dp.mlir --tg-recompute='budget=auto device=TPU' 2>&1 | FileCheck %s --check-prefix=DEVICE
// RUN: not tgc-opt %t/strategy.mlir --tg-recompute='budget=33660000 strategy=full' 2>&1 | FileCheck %s --check-prefix=FULL

// SUFFIX: error: tg-recompute: invalid budget '1GiBs' (expected bytes with an optional B, KB, MB, GB, TB, KiB, MiB, GiB or TiB suffix, or auto)
// NEGATIVE: error: tg-recompute: invalid budget '-5'
// STRATEGY: error: tg-recompute: unknown strategy 'greedy' (expected dp, none, full, sqrt or selective)
// DEVICE: error: tg-recompute: unknown device 'TPU'
// FULL: error: tg-recompute: strategy full peaks at 33669124 bytes, above the budget of 33660000 bytes

//--- dp.mlir

// A budget below every peak recomputation can reach is an error stating
// the smallest one.
// expected-error @+1 {{tg-recompute: budget 1000 bytes is below the smallest feasible peak 33636356 bytes}}
func.func @impossible(%arg0: tensor<64x64xf32> {tg.role = "input"}, %arg1: tensor<64x64xf32> {tg.name = "w", tg.role = "param"}) -> (tensor<f32> {tg.role = "loss"}, tensor<64x64xf32> {tg.name = "w.grad", tg.role = "grad"}) {
  %0 = tg.matmul %arg0, %arg1 : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %1 = tg.tanh %0 : tensor<64x64xf32>
  %2 = tg.exp %1 : tensor<64x64xf32>
  %3 = tg.mul %2, %2 : tensor<64x64xf32>
  %4 = tg.reduce sum %3 dims = [0, 1] : tensor<64x64xf32> -> tensor<f32>
  %10 = tg.mul %2, %2 : tensor<64x64xf32>
  %11 = tg.mul %1, %1 : tensor<64x64xf32>
  %14 = tg.mul %10, %11 : tensor<64x64xf32>
  %15 = tg.matmul %arg0, %14 transpose_a : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  return %4, %15 : tensor<f32>, tensor<64x64xf32>
}

//--- strategy.mlir

// A budget with an explicit strategy applies: the strategy's peak (none:
// 33669124 bytes) above the budget is an error stating both.
// expected-error @+1 {{tg-recompute: strategy none peaks at 33669124 bytes, above the budget of 33660000 bytes (strategy dp finds the cheapest plan that fits)}}
func.func @strategy_over_budget(%arg0: tensor<64x64xf32> {tg.role = "input"}, %arg1: tensor<64x64xf32> {tg.name = "w", tg.role = "param"}) -> (tensor<f32> {tg.role = "loss"}, tensor<64x64xf32> {tg.name = "w.grad", tg.role = "grad"}) {
  %0 = tg.matmul %arg0, %arg1 : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %1 = tg.tanh %0 : tensor<64x64xf32>
  %2 = tg.exp %1 : tensor<64x64xf32>
  %3 = tg.mul %2, %2 : tensor<64x64xf32>
  %4 = tg.reduce sum %3 dims = [0, 1] : tensor<64x64xf32> -> tensor<f32>
  %5 = tg.constant dense<1.000000e+00> : tensor<f32>
  %6 = tg.broadcast_in_dim %5 dims = [] : tensor<f32> -> tensor<64x64xf32>
  %7 = tg.mul %6, %2 : tensor<64x64xf32>
  %8 = tg.mul %6, %2 : tensor<64x64xf32>
  %9 = tg.add %7, %8 : tensor<64x64xf32>
  %10 = tg.mul %9, %2 : tensor<64x64xf32>
  %11 = tg.mul %1, %1 : tensor<64x64xf32>
  %12 = tg.constant dense<1.000000e+00> : tensor<64x64xf32>
  %13 = tg.sub %12, %11 : tensor<64x64xf32>
  %14 = tg.mul %10, %13 : tensor<64x64xf32>
  %15 = tg.matmul %arg0, %14 transpose_a : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  return %4, %15 : tensor<f32>, tensor<64x64xf32>
}
