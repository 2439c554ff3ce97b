// RUN: tgc-opt %s --split-input-file | tgc-opt --split-input-file | FileCheck %s
// RUN: tgc-opt %s --split-input-file --mlir-print-op-generic | tgc-opt --split-input-file | FileCheck %s

// A sum over the leading dimensions keeps the trailing one.
// CHECK-LABEL: func.func @reduce_sum_leading_dims
// CHECK-SAME:    (%[[X:[^:]+]]: tensor<8x128x768xf32>)
// CHECK:         %[[R:.+]] = tg.reduce sum %[[X]] dims = [0, 1] : tensor<8x128x768xf32> -> tensor<768xf32>
// CHECK:         return %[[R]] : tensor<768xf32>
func.func @reduce_sum_leading_dims(%x: tensor<8x128x768xf32>) -> tensor<768xf32> {
  %0 = tg.reduce sum %x dims = [0, 1] : tensor<8x128x768xf32> -> tensor<768xf32>
  return %0 : tensor<768xf32>
}

// -----

// A max over integers keeps the integer element type.
// CHECK-LABEL: func.func @reduce_max_int
// CHECK-SAME:    (%[[X:[^:]+]]: tensor<4x6xi32>)
// CHECK:         %[[R:.+]] = tg.reduce max %[[X]] dims = [1] : tensor<4x6xi32> -> tensor<4xi32>
// CHECK:         return %[[R]] : tensor<4xi32>
func.func @reduce_max_int(%x: tensor<4x6xi32>) -> tensor<4xi32> {
  %0 = tg.reduce max %x dims = [1] : tensor<4x6xi32> -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// A min over a bf16 tensor keeps bf16.
// CHECK-LABEL: func.func @reduce_min_bf16
// CHECK-SAME:    (%[[X:[^:]+]]: tensor<2x3x5xbf16>)
// CHECK:         %[[R:.+]] = tg.reduce min %[[X]] dims = [0, 2] : tensor<2x3x5xbf16> -> tensor<3xbf16>
// CHECK:         return %[[R]] : tensor<3xbf16>
func.func @reduce_min_bf16(%x: tensor<2x3x5xbf16>) -> tensor<3xbf16> {
  %0 = tg.reduce min %x dims = [0, 2] : tensor<2x3x5xbf16> -> tensor<3xbf16>
  return %0 : tensor<3xbf16>
}

// -----

// A mean over a middle dimension.
// CHECK-LABEL: func.func @reduce_mean_middle_dim
// CHECK-SAME:    (%[[X:[^:]+]]: tensor<8x128x768xf32>)
// CHECK:         %[[R:.+]] = tg.reduce mean %[[X]] dims = [1] : tensor<8x128x768xf32> -> tensor<8x768xf32>
// CHECK:         return %[[R]] : tensor<8x768xf32>
func.func @reduce_mean_middle_dim(%x: tensor<8x128x768xf32>) -> tensor<8x768xf32> {
  %0 = tg.reduce mean %x dims = [1] : tensor<8x128x768xf32> -> tensor<8x768xf32>
  return %0 : tensor<8x768xf32>
}

// -----

// Reducing every dimension gives a scalar (a rank-0 tensor).
// CHECK-LABEL: func.func @reduce_to_scalar
// CHECK-SAME:    (%[[X:[^:]+]]: tensor<4x6xf16>)
// CHECK:         %[[R:.+]] = tg.reduce sum %[[X]] dims = [0, 1] : tensor<4x6xf16> -> tensor<f16>
// CHECK:         return %[[R]] : tensor<f16>
func.func @reduce_to_scalar(%x: tensor<4x6xf16>) -> tensor<f16> {
  %0 = tg.reduce sum %x dims = [0, 1] : tensor<4x6xf16> -> tensor<f16>
  return %0 : tensor<f16>
}

// -----

// An empty dimension list parses and prints as `[]` (it is not folded here).
// CHECK-LABEL: func.func @reduce_no_dims
// CHECK-SAME:    (%[[X:[^:]+]]: tensor<4x6xi64>)
// CHECK:         %[[R:.+]] = tg.reduce sum %[[X]] dims = [] : tensor<4x6xi64> -> tensor<4x6xi64>
// CHECK:         return %[[R]] : tensor<4x6xi64>
func.func @reduce_no_dims(%x: tensor<4x6xi64>) -> tensor<4x6xi64> {
  %0 = tg.reduce sum %x dims = [] : tensor<4x6xi64> -> tensor<4x6xi64>
  return %0 : tensor<4x6xi64>
}
