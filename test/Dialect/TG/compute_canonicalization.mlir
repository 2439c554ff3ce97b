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

// -----

// Rows of a splat table are the splat.
// CHECK-LABEL: func.func @embedding_splat_table
// CHECK:         %[[C:.+]] = tg.constant dense<true> : tensor<3x2xi1>
// CHECK-NEXT:    return %[[C]]
func.func @embedding_splat_table(%ids: tensor<3xi64>) -> tensor<3x2xi1> {
  %t = tg.constant dense<true> : tensor<5x2xi1>
  %0 = tg.embedding %t[%ids] : (tensor<5x2xi1>, tensor<3xi64>) -> tensor<3x2xi1>
  return %0 : tensor<3x2xi1>
}

// -----

// The top 1 of rows of one element: the operand, at position 0.
// CHECK-LABEL: func.func @top_k_single
// CHECK-SAME:    (%[[X:[^:]+]]: tensor<4x1xf32>)
// CHECK:         %[[Z:.+]] = tg.constant dense<0> : tensor<4x1xi64>
// CHECK-NEXT:    return %[[X]], %[[Z]]
func.func @top_k_single(%x: tensor<4x1xf32>) -> (tensor<4x1xf32>, tensor<4x1xi64>) {
  %v, %i = tg.top_k %x k = 1 : tensor<4x1xf32> -> tensor<4x1xf32>, tensor<4x1xi64>
  return %v, %i : tensor<4x1xf32>, tensor<4x1xi64>
}

// -----

// Every row, in order: the table.
// CHECK-LABEL: func.func @embedding_all_rows
// CHECK-SAME:    (%[[T:[^:]+]]: tensor<4x1xi1>)
// CHECK-NEXT:    return %[[T]]
func.func @embedding_all_rows(%t: tensor<4x1xi1>) -> tensor<4x1xi1> {
  %ids = tg.constant dense<[0, 1, 2, 3]> : tensor<4xi64>
  %0 = tg.embedding %t[%ids] : (tensor<4x1xi1>, tensor<4xi64>) -> tensor<4x1xi1>
  return %0 : tensor<4x1xi1>
}

// -----

// Rows out of order stay a gather.
// CHECK-LABEL: func.func @embedding_rows_permuted
// CHECK:         tg.embedding
func.func @embedding_rows_permuted(%t: tensor<4x1xi1>) -> tensor<4x1xi1> {
  %ids = tg.constant dense<[1, 0, 2, 3]> : tensor<4xi64>
  %0 = tg.embedding %t[%ids] : (tensor<4x1xi1>, tensor<4xi64>) -> tensor<4x1xi1>
  return %0 : tensor<4x1xi1>
}
