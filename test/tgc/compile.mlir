// `tgc compile` verifies, canonicalizes, schedules, plans the memory and
// writes the module.
// RUN: tgc compile %s -o %t && FileCheck %s < %t
// RUN: tgc compile %s | FileCheck %s
// RUN: tgc compile %s --no-canonicalize --no-memory-plan | FileCheck %s --check-prefix=RAW
// RUN: cat %s | tgc compile - | FileCheck %s
// RUN: tgc compile %s --no-memory-plan | FileCheck %s --check-prefix=NOPLAN

// Two 256-byte buffers: the input and exp's result, returned twice.
// CHECK-LABEL: func.func @step
// CHECK-SAME: {tg.name = "x", tg.offset = 0 : i64, tg.role = "input"}
// CHECK-SAME: attributes {tg.arena_size = 512 : i64}
// CHECK-NEXT: %[[E:.*]] = tg.exp %arg0 {tg.offsets = array<i64: 256>} : tensor<4xf32>
// CHECK-NEXT: return %[[E]], %[[E]]
// NOPLAN-LABEL: func.func @step
// NOPLAN-SAME: {tg.name = "x", tg.role = "input"}
// NOPLAN-NOT: tg.arena_size
// NOPLAN-NEXT: %[[E:.*]] = tg.exp %arg0 : tensor<4xf32>
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
