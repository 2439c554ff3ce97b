// RUN: tgc-opt %s --split-input-file | tgc-opt --split-input-file | FileCheck %s
// RUN: tgc-opt %s --split-input-file --mlir-print-op-generic | tgc-opt --split-input-file | FileCheck %s

// Round trip of the shape ops, in custom syntax and in generic form.

// Splat and dense constants of every element type print their value and type.
// CHECK-LABEL: func.func @constant
// CHECK: tg.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK: tg.constant dense<[1.500000e+00, -2.000000e+00]> : tensor<2xbf16>
// CHECK: tg.constant dense<0x7C00> : tensor<2xf16>
// CHECK: tg.constant dense<4.480000e+02> : tensor<2xf8E4M3FN>
// CHECK: tg.constant dense<[5.000000e-01, -0.000000e+00]> : tensor<2xf8E5M2>
// CHECK: tg.constant dense<[1.000000e+00, 2.500000e-01]> : tensor<2xf64>
// CHECK: tg.constant dense<{{\[\[}}1, 2], [3, 4]]> : tensor<2x2xi32>
// CHECK: tg.constant dense<-9223372036854775808> : tensor<i64>
// CHECK: tg.constant dense<[true, false]> : tensor<2xi1>
// CHECK: tg.constant dense<> : tensor<0x3xf32>
func.func @constant() {
  %0 = tg.constant dense<1.0> : tensor<4xf32>
  %1 = tg.constant dense<[1.5, -2.0]> : tensor<2xbf16>
  %2 = tg.constant dense<0x7C00> : tensor<2xf16>
  %3 = tg.constant dense<448.0> : tensor<2xf8E4M3FN>
  %4 = tg.constant dense<[0.5, -0.0]> : tensor<2xf8E5M2>
  %5 = tg.constant dense<[1.0, 0.25]> : tensor<2xf64>
  %6 = tg.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %7 = tg.constant dense<-9223372036854775808> : tensor<i64>
  %8 = tg.constant dense<[true, false]> : tensor<2xi1>
  %9 = tg.constant dense<> : tensor<0x3xf32>
  return
}

// -----

// A discardable attribute of a constant prints before the value.
// CHECK-LABEL: func.func @constant_attr_dict
// CHECK: tg.constant {tag = "bias"} dense<0.000000e+00> : tensor<768xf32>
func.func @constant_attr_dict() {
  %0 = tg.constant {tag = "bias"} dense<0.0> : tensor<768xf32>
  return
}

// -----

// broadcast_in_dim adds dimensions and repeats dimensions of size 1.
// CHECK-LABEL: func.func @broadcast_in_dim
// CHECK-SAME: (%[[B:[^:]+]]: tensor<768xf32>, %[[O:[^:]+]]: tensor<1x4xbf16>, %[[S:[^:]+]]: tensor<i1>, %[[I:[^:]+]]: tensor<3x1xi64>)
// CHECK: tg.broadcast_in_dim %[[B]] dims = [1] : tensor<768xf32> -> tensor<8x768xf32>
// CHECK: tg.broadcast_in_dim %[[O]] dims = [0, 2] : tensor<1x4xbf16> -> tensor<5x6x4xbf16>
// CHECK: tg.broadcast_in_dim %[[S]] dims = [] : tensor<i1> -> tensor<2x2xi1>
// CHECK: tg.broadcast_in_dim %[[I]] dims = [0, 1] : tensor<3x1xi64> -> tensor<3x7xi64>
// CHECK: tg.broadcast_in_dim %[[B]] dims = [0] : tensor<768xf32> -> tensor<768xf32>
func.func @broadcast_in_dim(%bias: tensor<768xf32>, %ones: tensor<1x4xbf16>,
                            %s: tensor<i1>, %i: tensor<3x1xi64>) {
  %0 = tg.broadcast_in_dim %bias dims = [1] : tensor<768xf32> -> tensor<8x768xf32>
  %1 = tg.broadcast_in_dim %ones dims = [0, 2] : tensor<1x4xbf16> -> tensor<5x6x4xbf16>
  %2 = tg.broadcast_in_dim %s dims = [] : tensor<i1> -> tensor<2x2xi1>
  %3 = tg.broadcast_in_dim %i dims = [0, 1] : tensor<3x1xi64> -> tensor<3x7xi64>
  %4 = tg.broadcast_in_dim %bias dims = [0] : tensor<768xf32> -> tensor<768xf32>
  return
}

// -----

// reshape between shapes of equal element count, scalars and empty tensors.
// CHECK-LABEL: func.func @reshape
// CHECK: tg.reshape %{{.*}} : tensor<8x128x768xf32> -> tensor<1024x768xf32>
// CHECK: tg.reshape %{{.*}} : tensor<1xf8E4M3FN> -> tensor<f8E4M3FN>
// CHECK: tg.reshape %{{.*}} : tensor<f8E4M3FN> -> tensor<1x1xf8E4M3FN>
// CHECK: tg.reshape %{{.*}} : tensor<0x4xi32> -> tensor<2x0xi32>
// CHECK: tg.reshape %{{.*}} : tensor<6xi1> -> tensor<2x3xi1>
func.func @reshape(%x: tensor<8x128x768xf32>, %one: tensor<1xf8E4M3FN>,
                   %empty: tensor<0x4xi32>, %mask: tensor<6xi1>) {
  %0 = tg.reshape %x : tensor<8x128x768xf32> -> tensor<1024x768xf32>
  %1 = tg.reshape %one : tensor<1xf8E4M3FN> -> tensor<f8E4M3FN>
  %2 = tg.reshape %1 : tensor<f8E4M3FN> -> tensor<1x1xf8E4M3FN>
  %3 = tg.reshape %empty : tensor<0x4xi32> -> tensor<2x0xi32>
  %4 = tg.reshape %mask : tensor<6xi1> -> tensor<2x3xi1>
  return
}

// -----

// transpose prints its permutation; rank 0 has the empty permutation.
// CHECK-LABEL: func.func @transpose
// CHECK: tg.transpose %{{.*}} perm = [0, 2, 1, 3] : tensor<8x128x12x64xf32> -> tensor<8x12x128x64xf32>
// CHECK: tg.transpose %{{.*}} perm = [1, 0] : tensor<3x5xf16> -> tensor<5x3xf16>
// CHECK: tg.transpose %{{.*}} perm = [0, 1] : tensor<3x5xf16> -> tensor<3x5xf16>
// CHECK: tg.transpose %{{.*}} perm = [] : tensor<i64> -> tensor<i64>
// CHECK: tg.transpose %{{.*}} perm = [2, 0, 1] : tensor<2x3x4xi1> -> tensor<4x2x3xi1>
func.func @transpose(%x: tensor<8x128x12x64xf32>, %m: tensor<3x5xf16>,
                     %s: tensor<i64>, %b: tensor<2x3x4xi1>) {
  %0 = tg.transpose %x perm = [0, 2, 1, 3] : tensor<8x128x12x64xf32> -> tensor<8x12x128x64xf32>
  %1 = tg.transpose %m perm = [1, 0] : tensor<3x5xf16> -> tensor<5x3xf16>
  %2 = tg.transpose %m perm = [0, 1] : tensor<3x5xf16> -> tensor<3x5xf16>
  %3 = tg.transpose %s perm = [] : tensor<i64> -> tensor<i64>
  %4 = tg.transpose %b perm = [2, 0, 1] : tensor<2x3x4xi1> -> tensor<4x2x3xi1>
  return
}

// -----

// slice prints `start:limit` and adds `:stride` only where the stride is not 1.
// CHECK-LABEL: func.func @slice
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x16xf32>, %[[Q:[^:]+]]: tensor<8x128x2304xbf16>)
// CHECK: tg.slice %[[X]] [0:4, 0:16:2] : tensor<4x16xf32> -> tensor<4x8xf32>
// CHECK: tg.slice %[[X]] [1:4:2, 3:16:5] : tensor<4x16xf32> -> tensor<2x3xf32>
// CHECK: tg.slice %[[X]] [0:4, 0:16] : tensor<4x16xf32> -> tensor<4x16xf32>
// CHECK: tg.slice %[[X]] [2:2, 16:16] : tensor<4x16xf32> -> tensor<0x0xf32>
// CHECK: tg.slice %[[Q]] [0:8, 0:128, 768:1536] : tensor<8x128x2304xbf16> -> tensor<8x128x768xbf16>
func.func @slice(%x: tensor<4x16xf32>, %qkv: tensor<8x128x2304xbf16>) {
  %0 = tg.slice %x [0:4, 0:16:2] : tensor<4x16xf32> -> tensor<4x8xf32>
  %1 = tg.slice %x [1:4:2, 3:16:5] : tensor<4x16xf32> -> tensor<2x3xf32>
  %2 = tg.slice %x [0:4:1, 0:16] : tensor<4x16xf32> -> tensor<4x16xf32>
  %3 = tg.slice %x [2:2, 16:16] : tensor<4x16xf32> -> tensor<0x0xf32>
  %4 = tg.slice %qkv [0:8, 0:128, 768:1536] : tensor<8x128x2304xbf16> -> tensor<8x128x768xbf16>
  return
}

// -----

// slice of integer, boolean and rank-0 tensors; a rank-0 slice has no ranges.
// CHECK-LABEL: func.func @slice_types
// CHECK: tg.slice %{{.*}} [5:10:3] : tensor<10xi64> -> tensor<2xi64>
// CHECK: tg.slice %{{.*}} [0:1, 1:3] : tensor<2x3xi1> -> tensor<1x2xi1>
// CHECK: tg.slice %{{.*}} [] : tensor<f8E5M2> -> tensor<f8E5M2>
func.func @slice_types(%i: tensor<10xi64>, %b: tensor<2x3xi1>, %s: tensor<f8E5M2>) {
  %0 = tg.slice %i [5:10:3] : tensor<10xi64> -> tensor<2xi64>
  %1 = tg.slice %b [0:1, 1:3] : tensor<2x3xi1> -> tensor<1x2xi1>
  %2 = tg.slice %s [] : tensor<f8E5M2> -> tensor<f8E5M2>
  return
}

// -----

// concat prints its inputs, dimension and functional type.
// CHECK-LABEL: func.func @concat
// CHECK-SAME: (%[[A:[^:]+]]: tensor<4x2xf32>, %[[B:[^:]+]]: tensor<4x3xf32>, %[[C:[^:]+]]: tensor<1x3xf32>, %[[I:[^:]+]]: tensor<2xi32>)
// CHECK: tg.concat %[[A]], %[[B]] dim = 1 : (tensor<4x2xf32>, tensor<4x3xf32>) -> tensor<4x5xf32>
// CHECK: tg.concat %[[B]], %[[C]], %[[B]] dim = 0 : (tensor<4x3xf32>, tensor<1x3xf32>, tensor<4x3xf32>) -> tensor<9x3xf32>
// CHECK: tg.concat %[[I]] dim = 0 : (tensor<2xi32>) -> tensor<2xi32>
func.func @concat(%a: tensor<4x2xf32>, %b: tensor<4x3xf32>, %c: tensor<1x3xf32>,
                  %i: tensor<2xi32>) {
  %0 = tg.concat %a, %b dim = 1 : (tensor<4x2xf32>, tensor<4x3xf32>) -> tensor<4x5xf32>
  %1 = tg.concat %b, %c, %b dim = 0 : (tensor<4x3xf32>, tensor<1x3xf32>, tensor<4x3xf32>) -> tensor<9x3xf32>
  %2 = tg.concat %i dim = 0 : (tensor<2xi32>) -> tensor<2xi32>
  return
}

// -----

// concat of bf16, f8, f64, i64 and i1 tensors, including an empty input.
// CHECK-LABEL: func.func @concat_types
// CHECK: tg.concat %{{.*}}, %{{.*}} dim = 0 : (tensor<2xbf16>, tensor<2xbf16>) -> tensor<4xbf16>
// CHECK: tg.concat %{{.*}}, %{{.*}} dim = 0 : (tensor<2xf8E4M3FN>, tensor<0xf8E4M3FN>) -> tensor<2xf8E4M3FN>
// CHECK: tg.concat %{{.*}}, %{{.*}} dim = 0 : (tensor<2xf64>, tensor<2xf64>) -> tensor<4xf64>
// CHECK: tg.concat %{{.*}}, %{{.*}} dim = 0 : (tensor<2xi64>, tensor<2xi64>) -> tensor<4xi64>
// CHECK: tg.concat %{{.*}}, %{{.*}} dim = 0 : (tensor<2xi1>, tensor<2xi1>) -> tensor<4xi1>
func.func @concat_types(%bf16: tensor<2xbf16>, %e4m3: tensor<2xf8E4M3FN>,
                        %empty: tensor<0xf8E4M3FN>, %f64: tensor<2xf64>,
                        %i64: tensor<2xi64>, %i1: tensor<2xi1>) {
  %0 = tg.concat %bf16, %bf16 dim = 0 : (tensor<2xbf16>, tensor<2xbf16>) -> tensor<4xbf16>
  %1 = tg.concat %e4m3, %empty dim = 0 : (tensor<2xf8E4M3FN>, tensor<0xf8E4M3FN>) -> tensor<2xf8E4M3FN>
  %2 = tg.concat %f64, %f64 dim = 0 : (tensor<2xf64>, tensor<2xf64>) -> tensor<4xf64>
  %3 = tg.concat %i64, %i64 dim = 0 : (tensor<2xi64>, tensor<2xi64>) -> tensor<4xi64>
  %4 = tg.concat %i1, %i1 dim = 0 : (tensor<2xi1>, tensor<2xi1>) -> tensor<4xi1>
  return
}

// -----

// pad prints its low, high and interior paddings and its types.
// CHECK-LABEL: func.func @pad
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x3xf32>, %[[I:[^:]+]]: tensor<4xi64>)
// CHECK: tg.pad %[[X]] low = [1, 0] high = [0, 2] interior = [0, 1] : tensor<2x3xf32> -> tensor<3x7xf32>
// CHECK: tg.pad %[[X]] low = [0, 0] high = [0, 0] interior = [0, 0] : tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK: tg.pad %[[I]] low = [3] high = [1] interior = [2] : tensor<4xi64> -> tensor<14xi64>
func.func @pad(%x: tensor<2x3xf32>, %i: tensor<4xi64>) {
  %0 = tg.pad %x low = [1, 0] high = [0, 2] interior = [0, 1] : tensor<2x3xf32> -> tensor<3x7xf32>
  %1 = tg.pad %x low = [0, 0] high = [0, 0] interior = [0, 0] : tensor<2x3xf32> -> tensor<2x3xf32>
  %2 = tg.pad %i low = [3] high = [1] interior = [2] : tensor<4xi64> -> tensor<14xi64>
  return
}

// -----

// pad of an empty dimension (only low and high count), a scalar, i1 and bf16, and interior padding of a size-1 dimension.
// CHECK-LABEL: func.func @pad_edges
// CHECK-SAME: (%[[E:[^:]+]]: tensor<0x3xi32>, %[[S:[^:]+]]: tensor<i1>, %[[O:[^:]+]]: tensor<1x4xbf16>)
// CHECK: tg.pad %[[E]] low = [2, 0] high = [1, 1] interior = [5, 0] : tensor<0x3xi32> -> tensor<3x4xi32>
// CHECK: tg.pad %[[S]] low = [] high = [] interior = [] : tensor<i1> -> tensor<i1>
// CHECK: tg.pad %[[O]] low = [0, 1] high = [0, 0] interior = [7, 1] : tensor<1x4xbf16> -> tensor<1x8xbf16>
func.func @pad_edges(%e: tensor<0x3xi32>, %s: tensor<i1>, %o: tensor<1x4xbf16>) {
  %0 = tg.pad %e low = [2, 0] high = [1, 1] interior = [5, 0] : tensor<0x3xi32> -> tensor<3x4xi32>
  %1 = tg.pad %s low = [] high = [] interior = [] : tensor<i1> -> tensor<i1>
  %2 = tg.pad %o low = [0, 1] high = [0, 0] interior = [7, 1] : tensor<1x4xbf16> -> tensor<1x8xbf16>
  return
}
