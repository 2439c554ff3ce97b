// RUN: tgc-opt %s --split-input-file --canonicalize | FileCheck %s

// A dropout with rate 0 keeps every element and scales by 1: it is its operand.
// CHECK-LABEL: func.func @dropout_rate_zero
// CHECK-SAME:    (%[[X:[^:]+]]: tensor<8x16xf32>, %{{[^:]+}}: tensor<i64>)
// CHECK-NOT:     tg.dropout
// CHECK:         return %[[X]] : tensor<8x16xf32>
func.func @dropout_rate_zero(%x: tensor<8x16xf32>, %seed: tensor<i64>) -> tensor<8x16xf32> {
  %0 = tg.dropout %x, %seed rate = 0.000000e+00 stream = 1 : tensor<8x16xf32>, tensor<i64>
  return %0 : tensor<8x16xf32>
}

// -----

// A rate of -0.0 is zero as well.
// CHECK-LABEL: func.func @dropout_rate_negative_zero
// CHECK-SAME:    (%[[X:[^:]+]]: tensor<8x16xbf16>, %{{[^:]+}}: tensor<i32>)
// CHECK-NOT:     tg.dropout
// CHECK:         return %[[X]] : tensor<8x16xbf16>
func.func @dropout_rate_negative_zero(%x: tensor<8x16xbf16>, %seed: tensor<i32>) -> tensor<8x16xbf16> {
  %0 = tg.dropout %x, %seed rate = -0.000000e+00 stream = 0 : tensor<8x16xbf16>, tensor<i32>
  return %0 : tensor<8x16xbf16>
}

// -----

// A dropout with a non-zero rate stays.
// CHECK-LABEL: func.func @dropout_rate_nonzero_stays
// CHECK-SAME:    (%[[X:[^:]+]]: tensor<8x16xf32>, %[[SEED:[^:]+]]: tensor<i64>)
// CHECK:         %[[R:.+]] = tg.dropout %[[X]], %[[SEED]] rate = 1.000000e-01 stream = 1 : tensor<8x16xf32>, tensor<i64>
// CHECK:         return %[[R]] : tensor<8x16xf32>
func.func @dropout_rate_nonzero_stays(%x: tensor<8x16xf32>, %seed: tensor<i64>) -> tensor<8x16xf32> {
  %0 = tg.dropout %x, %seed rate = 1.000000e-01 stream = 1 : tensor<8x16xf32>, tensor<i64>
  return %0 : tensor<8x16xf32>
}
