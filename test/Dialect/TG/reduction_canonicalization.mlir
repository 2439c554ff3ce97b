// RUN: tgc-opt %s --split-input-file --canonicalize | FileCheck %s

// A sum over no dimensions is its operand.
// CHECK-LABEL: func.func @reduce_sum_no_dims
// CHECK-SAME:    (%[[X:[^:]+]]: tensor<4x6xf32>)
// CHECK-NOT:     tg.reduce
// CHECK:         return %[[X]] : tensor<4x6xf32>
func.func @reduce_sum_no_dims(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = tg.reduce sum %x dims = [] : tensor<4x6xf32> -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

// max, min and mean over no dimensions fold too, for ints and floats.
// CHECK-LABEL: func.func @reduce_other_kinds_no_dims
// CHECK-SAME:    (%[[I:[^:]+]]: tensor<3xi32>, %[[F:[^:]+]]: tensor<2x2xbf16>)
// CHECK-NOT:     tg.reduce
// CHECK:         return %[[I]], %[[I]], %[[F]] : tensor<3xi32>, tensor<3xi32>, tensor<2x2xbf16>
func.func @reduce_other_kinds_no_dims(%i: tensor<3xi32>, %f: tensor<2x2xbf16>) -> (tensor<3xi32>, tensor<3xi32>, tensor<2x2xbf16>) {
  %0 = tg.reduce max %i dims = [] : tensor<3xi32> -> tensor<3xi32>
  %1 = tg.reduce min %i dims = [] : tensor<3xi32> -> tensor<3xi32>
  %2 = tg.reduce mean %f dims = [] : tensor<2x2xbf16> -> tensor<2x2xbf16>
  return %0, %1, %2 : tensor<3xi32>, tensor<3xi32>, tensor<2x2xbf16>
}

// -----

// A reduction over a dimension, even of size 1, stays.
// CHECK-LABEL: func.func @reduce_with_dims_stays
// CHECK-SAME:    (%[[X:[^:]+]]: tensor<1x6xf32>)
// CHECK:         %[[R:.+]] = tg.reduce sum %[[X]] dims = [0] : tensor<1x6xf32> -> tensor<6xf32>
// CHECK:         return %[[R]] : tensor<6xf32>
func.func @reduce_with_dims_stays(%x: tensor<1x6xf32>) -> tensor<6xf32> {
  %0 = tg.reduce sum %x dims = [0] : tensor<1x6xf32> -> tensor<6xf32>
  return %0 : tensor<6xf32>
}
