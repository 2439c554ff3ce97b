// RUN: tgc-opt %s --split-input-file --canonicalize | FileCheck %s

// Folders of the shape ops, and where they must not apply.

// A broadcast of a splat constant is a splat constant of the result's shape.
// CHECK-LABEL: func.func @broadcast_of_splat
// CHECK-NOT: tg.broadcast_in_dim
// CHECK: %[[C:.*]] = tg.constant dense<2.000000e+00> : tensor<8x3xbf16>
// CHECK-NOT: tg.broadcast_in_dim
// CHECK: return %[[C]] : tensor<8x3xbf16>
func.func @broadcast_of_splat() -> tensor<8x3xbf16> {
  %c = tg.constant dense<2.0> : tensor<3xbf16>
  %0 = tg.broadcast_in_dim %c dims = [1] : tensor<3xbf16> -> tensor<8x3xbf16>
  return %0 : tensor<8x3xbf16>
}

// -----

// A broadcast of a constant that is not a splat stays.
// CHECK-LABEL: func.func @broadcast_of_dense
// CHECK: %[[C:.*]] = tg.constant dense<[1, 2, 3]> : tensor<3xi32>
// CHECK: %[[B:.*]] = tg.broadcast_in_dim %[[C]] dims = [1] : tensor<3xi32> -> tensor<2x3xi32>
// CHECK: return %[[B]] : tensor<2x3xi32>
func.func @broadcast_of_dense() -> tensor<2x3xi32> {
  %c = tg.constant dense<[1, 2, 3]> : tensor<3xi32>
  %0 = tg.broadcast_in_dim %c dims = [1] : tensor<3xi32> -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// A transpose of a splat constant is a splat constant of the result's shape.
// CHECK-LABEL: func.func @transpose_of_splat
// CHECK-NOT: tg.transpose
// CHECK: %[[C:.*]] = tg.constant dense<7> : tensor<3x2xi64>
// CHECK-NOT: tg.transpose
// CHECK: return %[[C]] : tensor<3x2xi64>
func.func @transpose_of_splat() -> tensor<3x2xi64> {
  %c = tg.constant dense<7> : tensor<2x3xi64>
  %0 = tg.transpose %c perm = [1, 0] : tensor<2x3xi64> -> tensor<3x2xi64>
  return %0 : tensor<3x2xi64>
}

// -----

// A transpose of a constant that is not a splat stays.
// CHECK-LABEL: func.func @transpose_of_dense
// CHECK: %[[C:.*]] = tg.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00]]> : tensor<1x2xf32>
// CHECK: %[[T:.*]] = tg.transpose %[[C]] perm = [1, 0] : tensor<1x2xf32> -> tensor<2x1xf32>
// CHECK: return %[[T]] : tensor<2x1xf32>
func.func @transpose_of_dense() -> tensor<2x1xf32> {
  %c = tg.constant dense<[[1.0, 2.0]]> : tensor<1x2xf32>
  %0 = tg.transpose %c perm = [1, 0] : tensor<1x2xf32> -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

// A slice of a splat constant is a splat constant of the result's shape.
// CHECK-LABEL: func.func @slice_of_splat
// CHECK-NOT: tg.slice
// CHECK: %[[C:.*]] = tg.constant dense<true> : tensor<2x3xi1>
// CHECK-NOT: tg.slice
// CHECK: return %[[C]] : tensor<2x3xi1>
func.func @slice_of_splat() -> tensor<2x3xi1> {
  %c = tg.constant dense<true> : tensor<4x6xi1>
  %0 = tg.slice %c [1:3, 0:6:2] : tensor<4x6xi1> -> tensor<2x3xi1>
  return %0 : tensor<2x3xi1>
}

// -----

// A slice of a constant that is not a splat stays.
// CHECK-LABEL: func.func @slice_of_dense
// CHECK: %[[C:.*]] = tg.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf16>
// CHECK: %[[S:.*]] = tg.slice %[[C]] [1:3] : tensor<3xf16> -> tensor<2xf16>
// CHECK: return %[[S]] : tensor<2xf16>
func.func @slice_of_dense() -> tensor<2xf16> {
  %c = tg.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf16>
  %0 = tg.slice %c [1:3] : tensor<3xf16> -> tensor<2xf16>
  return %0 : tensor<2xf16>
}

// -----

// A reshape of a dense constant is the constant with the new shape.
// CHECK-LABEL: func.func @reshape_of_dense
// CHECK-NOT: tg.reshape
// CHECK: %[[C:.*]] = tg.constant dense<{{\[\[}}1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
// CHECK-NOT: tg.reshape
// CHECK: return %[[C]] : tensor<2x3xi32>
func.func @reshape_of_dense() -> tensor<2x3xi32> {
  %c = tg.constant dense<[1, 2, 3, 4, 5, 6]> : tensor<6xi32>
  %0 = tg.reshape %c : tensor<6xi32> -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// A reshape of a boolean constant keeps the element order.
// CHECK-LABEL: func.func @reshape_of_dense_i1
// CHECK-NOT: tg.reshape
// CHECK: %[[C:.*]] = tg.constant dense<{{\[\[}}true, false], [false, true]]> : tensor<2x2xi1>
// CHECK: return %[[C]] : tensor<2x2xi1>
func.func @reshape_of_dense_i1() -> tensor<2x2xi1> {
  %c = tg.constant dense<[true, false, false, true]> : tensor<4xi1>
  %0 = tg.reshape %c : tensor<4xi1> -> tensor<2x2xi1>
  return %0 : tensor<2x2xi1>
}

// -----

// A reshape of a reshape reshapes the original operand once.
// CHECK-LABEL: func.func @reshape_of_reshape
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x3x4xf32>)
// CHECK: %[[R:.*]] = tg.reshape %[[X]] : tensor<2x3x4xf32> -> tensor<24xf32>
// CHECK-NOT: tg.reshape
// CHECK: return %[[R]] : tensor<24xf32>
func.func @reshape_of_reshape(%x: tensor<2x3x4xf32>) -> tensor<24xf32> {
  %0 = tg.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %1 = tg.reshape %0 : tensor<6x4xf32> -> tensor<24xf32>
  return %1 : tensor<24xf32>
}

// -----

// A reshape back to the original shape is the original operand.
// CHECK-LABEL: func.func @reshape_round_trip
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x3xi64>)
// CHECK-NOT: tg.reshape
// CHECK: return %[[X]] : tensor<2x3xi64>
func.func @reshape_round_trip(%x: tensor<2x3xi64>) -> tensor<2x3xi64> {
  %0 = tg.reshape %x : tensor<2x3xi64> -> tensor<3x2xi64>
  %1 = tg.reshape %0 : tensor<3x2xi64> -> tensor<2x3xi64>
  return %1 : tensor<2x3xi64>
}

// -----

// A reshape to the operand's own type is the operand; another reshape stays.
// CHECK-LABEL: func.func @reshape_same_type
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x4xf32>)
// CHECK: %[[R:.*]] = tg.reshape %[[X]] : tensor<4x4xf32> -> tensor<2x8xf32>
// CHECK-NOT: tg.reshape
// CHECK: return %[[X]], %[[R]] : tensor<4x4xf32>, tensor<2x8xf32>
func.func @reshape_same_type(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<2x8xf32>) {
  %0 = tg.reshape %x : tensor<4x4xf32> -> tensor<4x4xf32>
  %1 = tg.reshape %x : tensor<4x4xf32> -> tensor<2x8xf32>
  return %0, %1 : tensor<4x4xf32>, tensor<2x8xf32>
}

// -----

// A transpose of a transpose is one transpose by the composed permutation.
// CHECK-LABEL: func.func @transpose_of_transpose
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x3x4xf32>)
// CHECK: %[[T:.*]] = tg.transpose %[[X]] perm = [2, 1, 0] : tensor<2x3x4xf32> -> tensor<4x3x2xf32>
// CHECK-NOT: tg.transpose
// CHECK: return %[[T]] : tensor<4x3x2xf32>
func.func @transpose_of_transpose(%x: tensor<2x3x4xf32>) -> tensor<4x3x2xf32> {
  %0 = tg.transpose %x perm = [1, 0, 2] : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  %1 = tg.transpose %0 perm = [2, 0, 1] : tensor<3x2x4xf32> -> tensor<4x3x2xf32>
  return %1 : tensor<4x3x2xf32>
}

// -----

// With equal sizes the types cannot tell: outer [0, 2, 1] after inner [1, 0, 2] is [1, 2, 0].
// CHECK-LABEL: func.func @transpose_composition_order
// CHECK-SAME: (%[[X:[^:]+]]: tensor<3x3x3xf32>)
// CHECK: %[[T:.*]] = tg.transpose %[[X]] perm = [1, 2, 0] : tensor<3x3x3xf32> -> tensor<3x3x3xf32>
// CHECK-NOT: tg.transpose
// CHECK: return %[[T]] : tensor<3x3x3xf32>
func.func @transpose_composition_order(%x: tensor<3x3x3xf32>) -> tensor<3x3x3xf32> {
  %0 = tg.transpose %x perm = [1, 0, 2] : tensor<3x3x3xf32> -> tensor<3x3x3xf32>
  %1 = tg.transpose %0 perm = [0, 2, 1] : tensor<3x3x3xf32> -> tensor<3x3x3xf32>
  return %1 : tensor<3x3x3xf32>
}

// -----

// Transposes that cancel out are the original operand.
// CHECK-LABEL: func.func @transpose_inverse
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x3x4xbf16>)
// CHECK-NOT: tg.transpose
// CHECK: return %[[X]] : tensor<2x3x4xbf16>
func.func @transpose_inverse(%x: tensor<2x3x4xbf16>) -> tensor<2x3x4xbf16> {
  %0 = tg.transpose %x perm = [1, 2, 0] : tensor<2x3x4xbf16> -> tensor<3x4x2xbf16>
  %1 = tg.transpose %0 perm = [2, 0, 1] : tensor<3x4x2xbf16> -> tensor<2x3x4xbf16>
  return %1 : tensor<2x3x4xbf16>
}

// -----

// An identity transpose is its operand, even between dimensions of equal size.
// CHECK-LABEL: func.func @transpose_identity
// CHECK-SAME: (%[[X:[^:]+]]: tensor<3x3xf32>)
// CHECK: %[[T:.*]] = tg.transpose %[[X]] perm = [1, 0] : tensor<3x3xf32> -> tensor<3x3xf32>
// CHECK-NOT: tg.transpose
// CHECK: return %[[X]], %[[T]] : tensor<3x3xf32>, tensor<3x3xf32>
func.func @transpose_identity(%x: tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3x3xf32>) {
  %0 = tg.transpose %x perm = [0, 1] : tensor<3x3xf32> -> tensor<3x3xf32>
  %1 = tg.transpose %x perm = [1, 0] : tensor<3x3xf32> -> tensor<3x3xf32>
  return %0, %1 : tensor<3x3xf32>, tensor<3x3xf32>
}

// -----

// A broadcast of a broadcast is one broadcast with the composed dimensions.
// CHECK-LABEL: func.func @broadcast_of_broadcast
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4xf32>)
// CHECK: %[[B:.*]] = tg.broadcast_in_dim %[[X]] dims = [2] : tensor<4xf32> -> tensor<2x3x4xf32>
// CHECK-NOT: tg.broadcast_in_dim
// CHECK: return %[[B]] : tensor<2x3x4xf32>
func.func @broadcast_of_broadcast(%x: tensor<4xf32>) -> tensor<2x3x4xf32> {
  %0 = tg.broadcast_in_dim %x dims = [1] : tensor<4xf32> -> tensor<3x4xf32>
  %1 = tg.broadcast_in_dim %0 dims = [1, 2] : tensor<3x4xf32> -> tensor<2x3x4xf32>
  return %1 : tensor<2x3x4xf32>
}

// -----

// Composition keeps size-1 expansion: [0, 2] through [0, 1, 3] is [0, 3].
// CHECK-LABEL: func.func @broadcast_of_broadcast_expanding
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x5xi32>)
// CHECK: %[[B:.*]] = tg.broadcast_in_dim %[[X]] dims = [0, 3] : tensor<1x5xi32> -> tensor<6x2x7x5xi32>
// CHECK-NOT: tg.broadcast_in_dim
// CHECK: return %[[B]] : tensor<6x2x7x5xi32>
func.func @broadcast_of_broadcast_expanding(%x: tensor<1x5xi32>) -> tensor<6x2x7x5xi32> {
  %0 = tg.broadcast_in_dim %x dims = [0, 2] : tensor<1x5xi32> -> tensor<1x2x5xi32>
  %1 = tg.broadcast_in_dim %0 dims = [0, 1, 3] : tensor<1x2x5xi32> -> tensor<6x2x7x5xi32>
  return %1 : tensor<6x2x7x5xi32>
}

// -----

// A composed broadcast keeps the inner one while something else uses it.
// CHECK-LABEL: func.func @broadcast_of_broadcast_shared
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4xf32>)
// CHECK-DAG: %[[INNER:.*]] = tg.broadcast_in_dim %[[X]] dims = [1] : tensor<4xf32> -> tensor<3x4xf32>
// CHECK-DAG: %[[OUTER:.*]] = tg.broadcast_in_dim %[[X]] dims = [2] : tensor<4xf32> -> tensor<2x3x4xf32>
// CHECK: return %[[OUTER]], %[[INNER]] : tensor<2x3x4xf32>, tensor<3x4xf32>
func.func @broadcast_of_broadcast_shared(%x: tensor<4xf32>) -> (tensor<2x3x4xf32>, tensor<3x4xf32>) {
  %0 = tg.broadcast_in_dim %x dims = [1] : tensor<4xf32> -> tensor<3x4xf32>
  %1 = tg.broadcast_in_dim %0 dims = [1, 2] : tensor<3x4xf32> -> tensor<2x3x4xf32>
  return %1, %0 : tensor<2x3x4xf32>, tensor<3x4xf32>
}

// -----

// A broadcast to the operand's own type is the operand.
// CHECK-LABEL: func.func @broadcast_same_type
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x3xf8E5M2>)
// CHECK-NOT: tg.broadcast_in_dim
// CHECK: return %[[X]] : tensor<2x3xf8E5M2>
func.func @broadcast_same_type(%x: tensor<2x3xf8E5M2>) -> tensor<2x3xf8E5M2> {
  %0 = tg.broadcast_in_dim %x dims = [0, 1] : tensor<2x3xf8E5M2> -> tensor<2x3xf8E5M2>
  return %0 : tensor<2x3xf8E5M2>
}

// -----

// A same-rank broadcast that repeats a dimension of size 1 stays.
// CHECK-LABEL: func.func @broadcast_same_rank_expanding
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x3xf32>)
// CHECK: %[[B:.*]] = tg.broadcast_in_dim %[[X]] dims = [0, 1] : tensor<1x3xf32> -> tensor<5x3xf32>
// CHECK: return %[[B]] : tensor<5x3xf32>
func.func @broadcast_same_rank_expanding(%x: tensor<1x3xf32>) -> tensor<5x3xf32> {
  %0 = tg.broadcast_in_dim %x dims = [0, 1] : tensor<1x3xf32> -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}

// -----

// A slice of the whole operand is the operand; a smaller slice stays.
// CHECK-LABEL: func.func @slice_same_type
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x1xf64>)
// CHECK: %[[S:.*]] = tg.slice %[[X]] [0:4:2, 0:1] : tensor<4x1xf64> -> tensor<2x1xf64>
// CHECK-NOT: tg.slice
// CHECK: return %[[X]], %[[X]], %[[S]] : tensor<4x1xf64>, tensor<4x1xf64>, tensor<2x1xf64>
func.func @slice_same_type(%x: tensor<4x1xf64>) -> (tensor<4x1xf64>, tensor<4x1xf64>, tensor<2x1xf64>) {
  %0 = tg.slice %x [0:4, 0:1] : tensor<4x1xf64> -> tensor<4x1xf64>
  %1 = tg.slice %x [0:4, 0:1:3] : tensor<4x1xf64> -> tensor<4x1xf64>
  %2 = tg.slice %x [0:4:2, 0:1] : tensor<4x1xf64> -> tensor<2x1xf64>
  return %0, %1, %2 : tensor<4x1xf64>, tensor<4x1xf64>, tensor<2x1xf64>
}

// -----

// A concat of one input is that input.
// CHECK-LABEL: func.func @concat_single_input
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x2xi32>)
// CHECK-NOT: tg.concat
// CHECK: return %[[X]] : tensor<4x2xi32>
func.func @concat_single_input(%x: tensor<4x2xi32>) -> tensor<4x2xi32> {
  %0 = tg.concat %x dim = 1 : (tensor<4x2xi32>) -> tensor<4x2xi32>
  return %0 : tensor<4x2xi32>
}

// -----

// A concat of two inputs stays, even with an empty one.
// CHECK-LABEL: func.func @concat_two_inputs
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x2xi32>, %[[E:[^:]+]]: tensor<4x0xi32>)
// CHECK: %[[C:.*]] = tg.concat %[[X]], %[[E]] dim = 1 : (tensor<4x2xi32>, tensor<4x0xi32>) -> tensor<4x2xi32>
// CHECK: return %[[C]] : tensor<4x2xi32>
func.func @concat_two_inputs(%x: tensor<4x2xi32>, %e: tensor<4x0xi32>) -> tensor<4x2xi32> {
  %0 = tg.concat %x, %e dim = 1 : (tensor<4x2xi32>, tensor<4x0xi32>) -> tensor<4x2xi32>
  return %0 : tensor<4x2xi32>
}

// -----

// Shape folds chain: a splat broadcast, transposed and sliced, is one constant.
// CHECK-LABEL: func.func @splat_through_shape_ops
// CHECK: %[[C:.*]] = tg.constant dense<-1.000000e+00> : tensor<2x4xf32>
// CHECK-NOT: tg.broadcast_in_dim
// CHECK-NOT: tg.transpose
// CHECK-NOT: tg.slice
// CHECK: return %[[C]] : tensor<2x4xf32>
func.func @splat_through_shape_ops() -> tensor<2x4xf32> {
  %c = tg.constant dense<-1.0> : tensor<f32>
  %0 = tg.broadcast_in_dim %c dims = [] : tensor<f32> -> tensor<4x3xf32>
  %1 = tg.transpose %0 perm = [1, 0] : tensor<4x3xf32> -> tensor<3x4xf32>
  %2 = tg.slice %1 [1:3, 0:4] : tensor<3x4xf32> -> tensor<2x4xf32>
  return %2 : tensor<2x4xf32>
}

// -----

// A pad by zeros everywhere is its operand; any non-zero padding stays.
// CHECK-LABEL: func.func @pad_zero
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x3xf32>)
// CHECK-DAG: %[[LOW:.*]] = tg.pad %[[X]] low = [1, 0] high = [0, 0] interior = [0, 0] : tensor<2x3xf32> -> tensor<3x3xf32>
// CHECK-DAG: %[[HIGH:.*]] = tg.pad %[[X]] low = [0, 0] high = [0, 2] interior = [0, 0] : tensor<2x3xf32> -> tensor<2x5xf32>
// CHECK-DAG: %[[INT:.*]] = tg.pad %[[X]] low = [0, 0] high = [0, 0] interior = [0, 1] : tensor<2x3xf32> -> tensor<2x5xf32>
// CHECK: return %[[X]], %[[LOW]], %[[HIGH]], %[[INT]] : tensor<2x3xf32>, tensor<3x3xf32>, tensor<2x5xf32>, tensor<2x5xf32>
func.func @pad_zero(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3x3xf32>, tensor<2x5xf32>, tensor<2x5xf32>) {
  %0 = tg.pad %x low = [0, 0] high = [0, 0] interior = [0, 0] : tensor<2x3xf32> -> tensor<2x3xf32>
  %1 = tg.pad %x low = [1, 0] high = [0, 0] interior = [0, 0] : tensor<2x3xf32> -> tensor<3x3xf32>
  %2 = tg.pad %x low = [0, 0] high = [0, 2] interior = [0, 0] : tensor<2x3xf32> -> tensor<2x5xf32>
  %3 = tg.pad %x low = [0, 0] high = [0, 0] interior = [0, 1] : tensor<2x3xf32> -> tensor<2x5xf32>
  return %0, %1, %2, %3 : tensor<2x3xf32>, tensor<3x3xf32>, tensor<2x5xf32>, tensor<2x5xf32>
}

// -----

// Interior padding has no neighbours to separate in a dimension of size 1 or 0: that pad is its operand too.
// CHECK-LABEL: func.func @pad_interior_without_neighbours
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x0xi64>)
// CHECK-NOT: tg.pad
// CHECK: return %[[X]] : tensor<1x0xi64>
func.func @pad_interior_without_neighbours(%x: tensor<1x0xi64>) -> tensor<1x0xi64> {
  %0 = tg.pad %x low = [0, 0] high = [0, 0] interior = [4, 3] : tensor<1x0xi64> -> tensor<1x0xi64>
  return %0 : tensor<1x0xi64>
}

// -----

// A pad of a scalar has no padding: it is its operand.
// CHECK-LABEL: func.func @pad_scalar
// CHECK-SAME: (%[[X:[^:]+]]: tensor<i1>)
// CHECK-NOT: tg.pad
// CHECK: return %[[X]] : tensor<i1>
func.func @pad_scalar(%x: tensor<i1>) -> tensor<i1> {
  %0 = tg.pad %x low = [] high = [] interior = [] : tensor<i1> -> tensor<i1>
  return %0 : tensor<i1>
}
