// `tgc compile` verifies, canonicalizes and writes the module.
// RUN: tgc compile %s -o %t && FileCheck %s < %t
// RUN: tgc compile %s | FileCheck %s
// RUN: tgc compile %s --no-canonicalize | FileCheck %s --check-prefix=RAW
// RUN: cat %s | tgc compile - | FileCheck %s

// CHECK-LABEL: func.func @step
// CHECK-SAME: {tg.name = "x", tg.role = "input"}
// CHECK-NEXT: %[[E:.*]] = tg.exp %arg0 : tensor<4xf32>
// CHECK-NEXT: return %[[E]], %[[E]]
// RAW-LABEL: func.func @step
// RAW: tg.constant
// RAW: tg.mul
// RAW: tg.exp
// RAW: tg.exp
func.func @step(%x: tensor<4xf32> {tg.role = "input", tg.name = "x"})
    -> (tensor<4xf32>, tensor<4xf32>) {
  %one = tg.constant dense<1.0> : tensor<4xf32>
  %0 = tg.mul %x, %one : tensor<4xf32>
  %1 = tg.exp %0 : tensor<4xf32>
  %2 = tg.exp %0 : tensor<4xf32>
  return %1, %2 : tensor<4xf32>, tensor<4xf32>
}
