// RUN: tgc-opt %s --split-input-file | tgc-opt --split-input-file | FileCheck %s
// RUN: tgc-opt %s --split-input-file --mlir-print-op-generic | tgc-opt --split-input-file | FileCheck %s

// Round trip of the elementwise ops, in custom syntax and in generic form.

// Every binary op on f32 keeps its operand order.
// CHECK-LABEL: func.func @binary_f32
// CHECK-SAME: (%[[A:[^:]+]]: tensor<4x8xf32>, %[[B:[^:]+]]: tensor<4x8xf32>)
// CHECK: %{{.*}} = tg.add %[[A]], %[[B]] : tensor<4x8xf32>
// CHECK: %{{.*}} = tg.sub %[[A]], %[[B]] : tensor<4x8xf32>
// CHECK: %{{.*}} = tg.mul %[[A]], %[[B]] : tensor<4x8xf32>
// CHECK: %{{.*}} = tg.div %[[A]], %[[B]] : tensor<4x8xf32>
// CHECK: %{{.*}} = tg.max %[[A]], %[[B]] : tensor<4x8xf32>
// CHECK: %{{.*}} = tg.min %[[A]], %[[B]] : tensor<4x8xf32>
// CHECK: %{{.*}} = tg.pow %[[A]], %[[B]] : tensor<4x8xf32>
func.func @binary_f32(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) {
  %0 = tg.add %a, %b : tensor<4x8xf32>
  %1 = tg.sub %a, %b : tensor<4x8xf32>
  %2 = tg.mul %a, %b : tensor<4x8xf32>
  %3 = tg.div %a, %b : tensor<4x8xf32>
  %4 = tg.max %a, %b : tensor<4x8xf32>
  %5 = tg.min %a, %b : tensor<4x8xf32>
  %6 = tg.pow %a, %b : tensor<4x8xf32>
  return
}

// -----

// The arithmetic binary ops accept every float type of the dialect.
// CHECK-LABEL: func.func @binary_float_types
// CHECK: tg.add %{{.*}}, %{{.*}} : tensor<4xbf16>
// CHECK: tg.sub %{{.*}}, %{{.*}} : tensor<4xf16>
// CHECK: tg.mul %{{.*}}, %{{.*}} : tensor<4xf8E4M3FN>
// CHECK: tg.div %{{.*}}, %{{.*}} : tensor<4xf8E5M2>
// CHECK: tg.max %{{.*}}, %{{.*}} : tensor<4xf64>
// CHECK: tg.min %{{.*}}, %{{.*}} : tensor<4xbf16>
func.func @binary_float_types(%bf16: tensor<4xbf16>, %f16: tensor<4xf16>,
                              %e4m3: tensor<4xf8E4M3FN>, %e5m2: tensor<4xf8E5M2>,
                              %f64: tensor<4xf64>) {
  %0 = tg.add %bf16, %bf16 : tensor<4xbf16>
  %1 = tg.sub %f16, %f16 : tensor<4xf16>
  %2 = tg.mul %e4m3, %e4m3 : tensor<4xf8E4M3FN>
  %3 = tg.div %e5m2, %e5m2 : tensor<4xf8E5M2>
  %4 = tg.max %f64, %f64 : tensor<4xf64>
  %5 = tg.min %bf16, %bf16 : tensor<4xbf16>
  return
}

// -----

// The arithmetic binary ops accept i32 and i64.
// CHECK-LABEL: func.func @binary_integer_types
// CHECK: tg.add %{{.*}}, %{{.*}} : tensor<4xi32>
// CHECK: tg.sub %{{.*}}, %{{.*}} : tensor<4xi64>
// CHECK: tg.mul %{{.*}}, %{{.*}} : tensor<4xi32>
// CHECK: tg.div %{{.*}}, %{{.*}} : tensor<4xi64>
// CHECK: tg.max %{{.*}}, %{{.*}} : tensor<4xi32>
// CHECK: tg.min %{{.*}}, %{{.*}} : tensor<4xi64>
func.func @binary_integer_types(%i32: tensor<4xi32>, %i64: tensor<4xi64>) {
  %0 = tg.add %i32, %i32 : tensor<4xi32>
  %1 = tg.sub %i64, %i64 : tensor<4xi64>
  %2 = tg.mul %i32, %i32 : tensor<4xi32>
  %3 = tg.div %i64, %i64 : tensor<4xi64>
  %4 = tg.max %i32, %i32 : tensor<4xi32>
  %5 = tg.min %i64, %i64 : tensor<4xi64>
  return
}

// -----

// pow accepts every float type.
// CHECK-LABEL: func.func @pow_float_types
// CHECK: tg.pow %{{.*}}, %{{.*}} : tensor<2xbf16>
// CHECK: tg.pow %{{.*}}, %{{.*}} : tensor<2xf16>
// CHECK: tg.pow %{{.*}}, %{{.*}} : tensor<2xf8E4M3FN>
// CHECK: tg.pow %{{.*}}, %{{.*}} : tensor<2xf8E5M2>
// CHECK: tg.pow %{{.*}}, %{{.*}} : tensor<2xf64>
func.func @pow_float_types(%bf16: tensor<2xbf16>, %f16: tensor<2xf16>,
                           %e4m3: tensor<2xf8E4M3FN>, %e5m2: tensor<2xf8E5M2>,
                           %f64: tensor<2xf64>) {
  %0 = tg.pow %bf16, %bf16 : tensor<2xbf16>
  %1 = tg.pow %f16, %f16 : tensor<2xf16>
  %2 = tg.pow %e4m3, %e4m3 : tensor<2xf8E4M3FN>
  %3 = tg.pow %e5m2, %e5m2 : tensor<2xf8E5M2>
  %4 = tg.pow %f64, %f64 : tensor<2xf64>
  return
}

// -----

// neg and abs accept floats and integers.
// CHECK-LABEL: func.func @neg_abs
// CHECK-SAME: (%[[F:[^:]+]]: tensor<4xf32>, %[[I:[^:]+]]: tensor<4xi32>, %[[L:[^:]+]]: tensor<4xi64>, %[[E:[^:]+]]: tensor<4xf8E4M3FN>)
// CHECK: tg.neg %[[F]] : tensor<4xf32>
// CHECK: tg.neg %[[I]] : tensor<4xi32>
// CHECK: tg.neg %[[L]] : tensor<4xi64>
// CHECK: tg.abs %[[F]] : tensor<4xf32>
// CHECK: tg.abs %[[I]] : tensor<4xi32>
// CHECK: tg.abs %[[E]] : tensor<4xf8E4M3FN>
func.func @neg_abs(%f: tensor<4xf32>, %i: tensor<4xi32>, %l: tensor<4xi64>,
                   %e: tensor<4xf8E4M3FN>) {
  %0 = tg.neg %f : tensor<4xf32>
  %1 = tg.neg %i : tensor<4xi32>
  %2 = tg.neg %l : tensor<4xi64>
  %3 = tg.abs %f : tensor<4xf32>
  %4 = tg.abs %i : tensor<4xi32>
  %5 = tg.abs %e : tensor<4xf8E4M3FN>
  return
}

// -----

// Every float-only unary op on f32.
// CHECK-LABEL: func.func @unary_f32
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x3xf32>)
// CHECK: tg.exp %[[X]] : tensor<2x3xf32>
// CHECK: tg.log %[[X]] : tensor<2x3xf32>
// CHECK: tg.sqrt %[[X]] : tensor<2x3xf32>
// CHECK: tg.rsqrt %[[X]] : tensor<2x3xf32>
// CHECK: tg.tanh %[[X]] : tensor<2x3xf32>
// CHECK: tg.erf %[[X]] : tensor<2x3xf32>
// CHECK: tg.sigmoid %[[X]] : tensor<2x3xf32>
// CHECK: tg.relu %[[X]] : tensor<2x3xf32>
// CHECK: tg.silu %[[X]] : tensor<2x3xf32>
// CHECK: tg.sin %[[X]] : tensor<2x3xf32>
// CHECK: tg.cos %[[X]] : tensor<2x3xf32>
func.func @unary_f32(%x: tensor<2x3xf32>) {
  %0 = tg.exp %x : tensor<2x3xf32>
  %1 = tg.log %x : tensor<2x3xf32>
  %2 = tg.sqrt %x : tensor<2x3xf32>
  %3 = tg.rsqrt %x : tensor<2x3xf32>
  %4 = tg.tanh %x : tensor<2x3xf32>
  %5 = tg.erf %x : tensor<2x3xf32>
  %6 = tg.sigmoid %x : tensor<2x3xf32>
  %7 = tg.relu %x : tensor<2x3xf32>
  %8 = tg.silu %x : tensor<2x3xf32>
  %9 = tg.sin %x : tensor<2x3xf32>
  %10 = tg.cos %x : tensor<2x3xf32>
  return
}

// -----

// The float-only unary ops accept every float type.
// CHECK-LABEL: func.func @unary_float_types
// CHECK: tg.exp %{{.*}} : tensor<8xbf16>
// CHECK: tg.log %{{.*}} : tensor<8xf16>
// CHECK: tg.sqrt %{{.*}} : tensor<8xf8E4M3FN>
// CHECK: tg.rsqrt %{{.*}} : tensor<8xf8E5M2>
// CHECK: tg.tanh %{{.*}} : tensor<8xf64>
// CHECK: tg.sigmoid %{{.*}} : tensor<8xbf16>
// CHECK: tg.silu %{{.*}} : tensor<8xf16>
// CHECK: tg.relu %{{.*}} : tensor<8xf8E4M3FN>
// CHECK: tg.erf %{{.*}} : tensor<8xf64>
func.func @unary_float_types(%bf16: tensor<8xbf16>, %f16: tensor<8xf16>,
                             %e4m3: tensor<8xf8E4M3FN>, %e5m2: tensor<8xf8E5M2>,
                             %f64: tensor<8xf64>) {
  %0 = tg.exp %bf16 : tensor<8xbf16>
  %1 = tg.log %f16 : tensor<8xf16>
  %2 = tg.sqrt %e4m3 : tensor<8xf8E4M3FN>
  %3 = tg.rsqrt %e5m2 : tensor<8xf8E5M2>
  %4 = tg.tanh %f64 : tensor<8xf64>
  %5 = tg.sigmoid %bf16 : tensor<8xbf16>
  %6 = tg.silu %f16 : tensor<8xf16>
  %7 = tg.relu %e4m3 : tensor<8xf8E4M3FN>
  %8 = tg.erf %f64 : tensor<8xf64>
  return
}

// -----

// gelu prints its approximation before the operand.
// CHECK-LABEL: func.func @gelu
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x3072xbf16>, %[[Y:[^:]+]]: tensor<4xf32>)
// CHECK: tg.gelu erf %[[X]] : tensor<4x3072xbf16>
// CHECK: tg.gelu tanh %[[X]] : tensor<4x3072xbf16>
// CHECK: tg.gelu tanh %[[Y]] : tensor<4xf32>
func.func @gelu(%x: tensor<4x3072xbf16>, %y: tensor<4xf32>) {
  %0 = tg.gelu erf %x : tensor<4x3072xbf16>
  %1 = tg.gelu tanh %x : tensor<4x3072xbf16>
  %2 = tg.gelu tanh %y : tensor<4xf32>
  return
}

// -----

// select takes an i1 predicate of the result's shape and any element type.
// CHECK-LABEL: func.func @select
// CHECK-SAME: (%[[P:[^:]+]]: tensor<4x4xi1>, %[[A:[^:]+]]: tensor<4x4xf32>, %[[B:[^:]+]]: tensor<4x4xf32>, %[[I:[^:]+]]: tensor<4x4xi64>, %[[Q:[^:]+]]: tensor<4x4xi1>)
// CHECK: tg.select %[[P]], %[[A]], %[[B]] : tensor<4x4xi1>, tensor<4x4xf32>
// CHECK: tg.select %[[P]], %[[B]], %[[A]] : tensor<4x4xi1>, tensor<4x4xf32>
// CHECK: tg.select %[[P]], %[[I]], %[[I]] : tensor<4x4xi1>, tensor<4x4xi64>
// CHECK: tg.select %[[P]], %[[Q]], %[[P]] : tensor<4x4xi1>, tensor<4x4xi1>
func.func @select(%p: tensor<4x4xi1>, %a: tensor<4x4xf32>, %b: tensor<4x4xf32>,
                  %i: tensor<4x4xi64>, %q: tensor<4x4xi1>) {
  %0 = tg.select %p, %a, %b : tensor<4x4xi1>, tensor<4x4xf32>
  %1 = tg.select %p, %b, %a : tensor<4x4xi1>, tensor<4x4xf32>
  %2 = tg.select %p, %i, %i : tensor<4x4xi1>, tensor<4x4xi64>
  %3 = tg.select %p, %q, %p : tensor<4x4xi1>, tensor<4x4xi1>
  return
}

// -----

// mode_select takes two values of its result's type, any element type.
// CHECK-LABEL: func.func @mode_select
// CHECK-SAME: (%[[A:[^:]+]]: tensor<1x4x1xf32>, %[[B:[^:]+]]: tensor<1x4x1xf32>, %[[I:[^:]+]]: tensor<i64>)
// CHECK: tg.mode_select training %[[A]] evaluation %[[B]] : tensor<1x4x1xf32>
// CHECK: tg.mode_select training %[[I]] evaluation %[[I]] : tensor<i64>
func.func @mode_select(%a: tensor<1x4x1xf32>, %b: tensor<1x4x1xf32>, %i: tensor<i64>) {
  %0 = tg.mode_select training %a evaluation %b : tensor<1x4x1xf32>
  %1 = tg.mode_select training %i evaluation %i : tensor<i64>
  return
}

// -----

// compare prints every direction and infers an i1 result of the operands' shape.
// CHECK-LABEL: func.func @compare_directions
// CHECK-SAME: (%[[A:[^:]+]]: tensor<4xf32>, %[[B:[^:]+]]: tensor<4xf32>) -> tensor<4xi1>
// CHECK: tg.compare eq, %[[A]], %[[B]] : tensor<4xf32>
// CHECK: tg.compare ne, %[[A]], %[[B]] : tensor<4xf32>
// CHECK: tg.compare lt, %[[A]], %[[B]] : tensor<4xf32>
// CHECK: tg.compare le, %[[A]], %[[B]] : tensor<4xf32>
// CHECK: tg.compare gt, %[[A]], %[[B]] : tensor<4xf32>
// CHECK: %[[GE:.*]] = tg.compare ge, %[[B]], %[[A]] : tensor<4xf32>
// CHECK: return %[[GE]] : tensor<4xi1>
func.func @compare_directions(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xi1> {
  %0 = tg.compare eq, %a, %b : tensor<4xf32>
  %1 = tg.compare ne, %a, %b : tensor<4xf32>
  %2 = tg.compare lt, %a, %b : tensor<4xf32>
  %3 = tg.compare le, %a, %b : tensor<4xf32>
  %4 = tg.compare gt, %a, %b : tensor<4xf32>
  %5 = tg.compare ge, %b, %a : tensor<4xf32>
  return %5 : tensor<4xi1>
}

// -----

// compare accepts every numeric type; the result is always i1.
// CHECK-LABEL: func.func @compare_types
// CHECK: %[[R0:.*]] = tg.compare lt, %{{.*}}, %{{.*}} : tensor<2x2xbf16>
// CHECK: %[[R1:.*]] = tg.compare ge, %{{.*}}, %{{.*}} : tensor<2x2xf8E5M2>
// CHECK: %[[R2:.*]] = tg.compare eq, %{{.*}}, %{{.*}} : tensor<2x2xi32>
// CHECK: %[[R3:.*]] = tg.compare ne, %{{.*}}, %{{.*}} : tensor<2x2xi64>
// CHECK: %[[R4:.*]] = tg.compare le, %{{.*}}, %{{.*}} : tensor<2x2xf64>
// CHECK: return %[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[R4]] : tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>
func.func @compare_types(%bf16: tensor<2x2xbf16>, %e5m2: tensor<2x2xf8E5M2>,
                         %i32: tensor<2x2xi32>, %i64: tensor<2x2xi64>,
                         %f64: tensor<2x2xf64>)
    -> (tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>) {
  %0 = tg.compare lt, %bf16, %bf16 : tensor<2x2xbf16>
  %1 = tg.compare ge, %e5m2, %e5m2 : tensor<2x2xf8E5M2>
  %2 = tg.compare eq, %i32, %i32 : tensor<2x2xi32>
  %3 = tg.compare ne, %i64, %i64 : tensor<2x2xi64>
  %4 = tg.compare le, %f64, %f64 : tensor<2x2xf64>
  return %0, %1, %2, %3, %4 : tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>, tensor<2x2xi1>
}

// -----

// convert between float types, floats and integers, and to and from i1.
// CHECK-LABEL: func.func @convert
// CHECK: tg.convert %{{.*}} : tensor<768x768xf32> -> tensor<768x768xbf16>
// CHECK: tg.convert %{{.*}} : tensor<768x768xbf16> -> tensor<768x768xf32>
// CHECK: tg.convert %{{.*}} : tensor<768x768xf32> -> tensor<768x768xf8E4M3FN>
// CHECK: tg.convert %{{.*}} : tensor<768x768xf8E5M2> -> tensor<768x768xf16>
// CHECK: tg.convert %{{.*}} : tensor<768x768xf64> -> tensor<768x768xf32>
// CHECK: tg.convert %{{.*}} : tensor<768x768xf32> -> tensor<768x768xi32>
// CHECK: tg.convert %{{.*}} : tensor<768x768xi64> -> tensor<768x768xf32>
// CHECK: tg.convert %{{.*}} : tensor<768x768xi32> -> tensor<768x768xi64>
// CHECK: tg.convert %{{.*}} : tensor<768x768xi32> -> tensor<768x768xi1>
// CHECK: tg.convert %{{.*}} : tensor<768x768xi1> -> tensor<768x768xf32>
// CHECK: tg.convert %{{.*}} : tensor<768x768xf32> -> tensor<768x768xf32>
func.func @convert(%f32: tensor<768x768xf32>, %bf16: tensor<768x768xbf16>,
                   %e5m2: tensor<768x768xf8E5M2>, %f64: tensor<768x768xf64>,
                   %i32: tensor<768x768xi32>, %i64: tensor<768x768xi64>,
                   %i1: tensor<768x768xi1>) {
  %0 = tg.convert %f32 : tensor<768x768xf32> -> tensor<768x768xbf16>
  %1 = tg.convert %bf16 : tensor<768x768xbf16> -> tensor<768x768xf32>
  %2 = tg.convert %f32 : tensor<768x768xf32> -> tensor<768x768xf8E4M3FN>
  %3 = tg.convert %e5m2 : tensor<768x768xf8E5M2> -> tensor<768x768xf16>
  %4 = tg.convert %f64 : tensor<768x768xf64> -> tensor<768x768xf32>
  %5 = tg.convert %f32 : tensor<768x768xf32> -> tensor<768x768xi32>
  %6 = tg.convert %i64 : tensor<768x768xi64> -> tensor<768x768xf32>
  %7 = tg.convert %i32 : tensor<768x768xi32> -> tensor<768x768xi64>
  %8 = tg.convert %i32 : tensor<768x768xi32> -> tensor<768x768xi1>
  %9 = tg.convert %i1 : tensor<768x768xi1> -> tensor<768x768xf32>
  %10 = tg.convert %f32 : tensor<768x768xf32> -> tensor<768x768xf32>
  return
}

// -----

// Scalars are rank-0 tensors, and zero-size tensors are allowed.
// CHECK-LABEL: func.func @scalar_and_empty
// CHECK: tg.add %{{.*}}, %{{.*}} : tensor<f32>
// CHECK: tg.compare gt, %{{.*}}, %{{.*}} : tensor<f32>
// CHECK: tg.select %{{.*}}, %{{.*}}, %{{.*}} : tensor<i1>, tensor<f32>
// CHECK: tg.exp %{{.*}} : tensor<0x4xf32>
// CHECK: tg.convert %{{.*}} : tensor<i64> -> tensor<f64>
func.func @scalar_and_empty(%s: tensor<f32>, %e: tensor<0x4xf32>, %i: tensor<i64>) {
  %0 = tg.add %s, %s : tensor<f32>
  %1 = tg.compare gt, %s, %0 : tensor<f32>
  %2 = tg.select %1, %s, %0 : tensor<i1>, tensor<f32>
  %3 = tg.exp %e : tensor<0x4xf32>
  %4 = tg.convert %i : tensor<i64> -> tensor<f64>
  return
}

// -----

// Discardable attributes survive the round trip in the attribute dictionary.
// CHECK-LABEL: func.func @attr_dict
// CHECK: tg.add %{{.*}}, %{{.*}} {tag = "x"} : tensor<4xf32>
// CHECK: tg.gelu tanh %{{.*}} {tag = "y"} : tensor<4xf32>
// CHECK: tg.compare lt, %{{.*}}, %{{.*}} {tag = "z"} : tensor<4xf32>
func.func @attr_dict(%a: tensor<4xf32>) {
  %0 = tg.add %a, %a {tag = "x"} : tensor<4xf32>
  %1 = tg.gelu tanh %a {tag = "y"} : tensor<4xf32>
  %2 = tg.compare lt, %a, %a {tag = "z"} : tensor<4xf32>
  return
}

// -----

// The bitwise ops on integers and i1, and bitcasts between types of one
// width (i1 counts as a byte).
// CHECK-LABEL: func.func @bitwise
// CHECK: tg.bitwise and, %{{.*}}, %{{.*}} : tensor<4xi32>
// CHECK: tg.bitwise or, %{{.*}}, %{{.*}} : tensor<4xui8>
// CHECK: tg.bitwise xor, %{{.*}}, %{{.*}} : tensor<4xi1>
// CHECK: tg.bitwise_not %{{.*}} : tensor<4xi4>
// CHECK: tg.bitcast %{{.*}} : tensor<4xf32> -> tensor<4xi32>
// CHECK: tg.bitcast %{{.*}} : tensor<4xi1> -> tensor<4xui8>
// CHECK: tg.bitcast %{{.*}} : tensor<4xbf16> -> tensor<4xi16>
func.func @bitwise(%a: tensor<4xi32>, %b: tensor<4xui8>, %c: tensor<4xi1>,
                   %d: tensor<4xi4>, %e: tensor<4xf32>, %h: tensor<4xbf16>) {
  %0 = tg.bitwise and, %a, %a : tensor<4xi32>
  %1 = tg.bitwise or, %b, %b : tensor<4xui8>
  %2 = tg.bitwise xor, %c, %c : tensor<4xi1>
  %3 = tg.bitwise_not %d : tensor<4xi4>
  %4 = tg.bitcast %e : tensor<4xf32> -> tensor<4xi32>
  %5 = tg.bitcast %c : tensor<4xi1> -> tensor<4xui8>
  %6 = tg.bitcast %h : tensor<4xbf16> -> tensor<4xi16>
  return
}
