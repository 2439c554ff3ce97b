// RUN: tgc-opt %s --split-input-file --canonicalize | FileCheck %s

// Folders and patterns of the elementwise ops, and where they must not apply.

// x * 1 is x.
// CHECK-LABEL: func.func @mul_by_one
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4xf32>)
// CHECK-NOT: tg.mul
// CHECK: return %[[X]] : tensor<4xf32>
func.func @mul_by_one(%x: tensor<4xf32>) -> tensor<4xf32> {
  %one = tg.constant dense<1.0> : tensor<4xf32>
  %0 = tg.mul %x, %one : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// 1 * x is x: mul is commutative, so the constant moves to the right and folds.
// CHECK-LABEL: func.func @one_times_x
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x3xbf16>)
// CHECK-NOT: tg.mul
// CHECK: return %[[X]] : tensor<2x3xbf16>
func.func @one_times_x(%x: tensor<2x3xbf16>) -> tensor<2x3xbf16> {
  %one = tg.constant dense<1.0> : tensor<2x3xbf16>
  %0 = tg.mul %one, %x : tensor<2x3xbf16>
  return %0 : tensor<2x3xbf16>
}

// -----

// Integer x * 1 is x.
// CHECK-LABEL: func.func @mul_by_one_integer
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4xi64>)
// CHECK-NOT: tg.mul
// CHECK: return %[[X]] : tensor<4xi64>
func.func @mul_by_one_integer(%x: tensor<4xi64>) -> tensor<4xi64> {
  %one = tg.constant dense<1> : tensor<4xi64>
  %0 = tg.mul %x, %one : tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

// x * 2 does not fold; the constant operand is moved to the right.
// CHECK-LABEL: func.func @mul_by_two
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4xf32>)
// CHECK: %[[TWO:.*]] = tg.constant dense<2.000000e+00> : tensor<4xf32>
// CHECK: %[[R:.*]] = tg.mul %[[X]], %[[TWO]] : tensor<4xf32>
// CHECK: return %[[R]]
func.func @mul_by_two(%x: tensor<4xf32>) -> tensor<4xf32> {
  %two = tg.constant dense<2.0> : tensor<4xf32>
  %0 = tg.mul %two, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// x / 1 is x, for floats and integers.
// CHECK-LABEL: func.func @div_by_one
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4xf16>, %[[I:[^:]+]]: tensor<4xi32>)
// CHECK-NOT: tg.div
// CHECK: return %[[X]], %[[I]] : tensor<4xf16>, tensor<4xi32>
func.func @div_by_one(%x: tensor<4xf16>, %i: tensor<4xi32>) -> (tensor<4xf16>, tensor<4xi32>) {
  %one = tg.constant dense<1.0> : tensor<4xf16>
  %ione = tg.constant dense<1> : tensor<4xi32>
  %0 = tg.div %x, %one : tensor<4xf16>
  %1 = tg.div %i, %ione : tensor<4xi32>
  return %0, %1 : tensor<4xf16>, tensor<4xi32>
}

// -----

// 1 / x does not fold: div is not commutative.
// CHECK-LABEL: func.func @one_over_x
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4xf32>)
// CHECK: %[[ONE:.*]] = tg.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK: %[[R:.*]] = tg.div %[[ONE]], %[[X]] : tensor<4xf32>
// CHECK: return %[[R]]
func.func @one_over_x(%x: tensor<4xf32>) -> tensor<4xf32> {
  %one = tg.constant dense<1.0> : tensor<4xf32>
  %0 = tg.div %one, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// x - 0 is x, for floats (+0.0) and integers.
// CHECK-LABEL: func.func @sub_zero
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4xf32>, %[[I:[^:]+]]: tensor<4xi64>)
// CHECK-NOT: tg.sub
// CHECK: return %[[X]], %[[I]] : tensor<4xf32>, tensor<4xi64>
func.func @sub_zero(%x: tensor<4xf32>, %i: tensor<4xi64>) -> (tensor<4xf32>, tensor<4xi64>) {
  %zero = tg.constant dense<0.0> : tensor<4xf32>
  %izero = tg.constant dense<0> : tensor<4xi64>
  %0 = tg.sub %x, %zero : tensor<4xf32>
  %1 = tg.sub %i, %izero : tensor<4xi64>
  return %0, %1 : tensor<4xf32>, tensor<4xi64>
}

// -----

// x - (-0.0) does not fold: it is +0.0 for x = -0.0.
// CHECK-LABEL: func.func @sub_negative_zero
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4xf32>)
// CHECK: %[[NZ:.*]] = tg.constant dense<-0.000000e+00> : tensor<4xf32>
// CHECK: %[[R:.*]] = tg.sub %[[X]], %[[NZ]] : tensor<4xf32>
// CHECK: return %[[R]]
func.func @sub_negative_zero(%x: tensor<4xf32>) -> tensor<4xf32> {
  %nz = tg.constant dense<-0.0> : tensor<4xf32>
  %0 = tg.sub %x, %nz : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// 0 - x does not fold: sub is not commutative.
// CHECK-LABEL: func.func @zero_minus_x
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4xi32>)
// CHECK: %[[Z:.*]] = tg.constant dense<0> : tensor<4xi32>
// CHECK: %[[R:.*]] = tg.sub %[[Z]], %[[X]] : tensor<4xi32>
// CHECK: return %[[R]]
func.func @zero_minus_x(%x: tensor<4xi32>) -> tensor<4xi32> {
  %zero = tg.constant dense<0> : tensor<4xi32>
  %0 = tg.sub %zero, %x : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// x + (-0.0) is x for every float x, on either side.
// CHECK-LABEL: func.func @add_negative_zero
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4xf32>, %[[Y:[^:]+]]: tensor<4xf8E4M3FN>)
// CHECK-NOT: tg.add
// CHECK: return %[[X]], %[[X]], %[[Y]] : tensor<4xf32>, tensor<4xf32>, tensor<4xf8E4M3FN>
func.func @add_negative_zero(%x: tensor<4xf32>, %y: tensor<4xf8E4M3FN>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf8E4M3FN>) {
  %nz = tg.constant dense<-0.0> : tensor<4xf32>
  %nz8 = tg.constant dense<-0.0> : tensor<4xf8E4M3FN>
  %0 = tg.add %x, %nz : tensor<4xf32>
  %1 = tg.add %nz, %x : tensor<4xf32>
  %2 = tg.add %y, %nz8 : tensor<4xf8E4M3FN>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf8E4M3FN>
}

// -----

// Float x + (+0.0) does not fold: it is +0.0 for x = -0.0.
// CHECK-LABEL: func.func @add_positive_zero_float
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4xf32>)
// CHECK: %[[Z:.*]] = tg.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK: %[[R:.*]] = tg.add %[[X]], %[[Z]] : tensor<4xf32>
// CHECK: return %[[R]]
func.func @add_positive_zero_float(%x: tensor<4xf32>) -> tensor<4xf32> {
  %zero = tg.constant dense<0.0> : tensor<4xf32>
  %0 = tg.add %x, %zero : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Integer x + 0 and 0 + x are x.
// CHECK-LABEL: func.func @add_zero_integer
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4xi32>)
// CHECK-NOT: tg.add
// CHECK: return %[[X]], %[[X]] : tensor<4xi32>, tensor<4xi32>
func.func @add_zero_integer(%x: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
  %zero = tg.constant dense<0> : tensor<4xi32>
  %0 = tg.add %x, %zero : tensor<4xi32>
  %1 = tg.add %zero, %x : tensor<4xi32>
  return %0, %1 : tensor<4xi32>, tensor<4xi32>
}

// -----

// A constant that is not a splat does not fold, even if it holds the identity.
// CHECK-LABEL: func.func @add_non_splat
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2xi32>)
// CHECK: %[[C:.*]] = tg.constant dense<[0, 1]> : tensor<2xi32>
// CHECK: %[[R:.*]] = tg.add %[[X]], %[[C]] : tensor<2xi32>
// CHECK: return %[[R]]
func.func @add_non_splat(%x: tensor<2xi32>) -> tensor<2xi32> {
  %c = tg.constant dense<[0, 1]> : tensor<2xi32>
  %0 = tg.add %x, %c : tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// neg(neg(x)) is x.
// CHECK-LABEL: func.func @neg_neg
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4xf32>, %[[I:[^:]+]]: tensor<4xi64>)
// CHECK-NOT: tg.neg
// CHECK: return %[[X]], %[[I]] : tensor<4xf32>, tensor<4xi64>
func.func @neg_neg(%x: tensor<4xf32>, %i: tensor<4xi64>) -> (tensor<4xf32>, tensor<4xi64>) {
  %0 = tg.neg %x : tensor<4xf32>
  %1 = tg.neg %0 : tensor<4xf32>
  %2 = tg.neg %i : tensor<4xi64>
  %3 = tg.neg %2 : tensor<4xi64>
  return %1, %3 : tensor<4xf32>, tensor<4xi64>
}

// -----

// neg(neg(neg(x))) is neg(x): an odd number of negations keeps one.
// CHECK-LABEL: func.func @neg_odd
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4xf32>)
// CHECK: %[[N:.*]] = tg.neg %[[X]] : tensor<4xf32>
// CHECK-NOT: tg.neg
// CHECK: return %[[N]] : tensor<4xf32>
func.func @neg_odd(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tg.neg %x : tensor<4xf32>
  %1 = tg.neg %0 : tensor<4xf32>
  %2 = tg.neg %1 : tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

// select with a splat predicate is one of its branches.
// CHECK-LABEL: func.func @select_splat_predicate
// CHECK-SAME: (%[[A:[^:]+]]: tensor<4xf32>, %[[B:[^:]+]]: tensor<4xf32>)
// CHECK-NOT: tg.select
// CHECK: return %[[A]], %[[B]] : tensor<4xf32>, tensor<4xf32>
func.func @select_splat_predicate(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %t = tg.constant dense<true> : tensor<4xi1>
  %f = tg.constant dense<false> : tensor<4xi1>
  %0 = tg.select %t, %a, %b : tensor<4xi1>, tensor<4xf32>
  %1 = tg.select %f, %a, %b : tensor<4xi1>, tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// select between equal branches is that branch, whatever the predicate.
// CHECK-LABEL: func.func @select_equal_branches
// CHECK-SAME: (%[[P:[^:]+]]: tensor<4xi1>, %[[A:[^:]+]]: tensor<4xi64>)
// CHECK-NOT: tg.select
// CHECK: return %[[A]] : tensor<4xi64>
func.func @select_equal_branches(%p: tensor<4xi1>, %a: tensor<4xi64>) -> tensor<4xi64> {
  %0 = tg.select %p, %a, %a : tensor<4xi1>, tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

// select with a mixed constant predicate or an unknown one does not fold.
// CHECK-LABEL: func.func @select_does_not_fold
// CHECK-SAME: (%[[P:[^:]+]]: tensor<4xi1>, %[[A:[^:]+]]: tensor<4xf32>, %[[B:[^:]+]]: tensor<4xf32>)
// CHECK: %[[M:.*]] = tg.constant dense<[true, false, true, false]> : tensor<4xi1>
// CHECK: %[[R0:.*]] = tg.select %[[P]], %[[A]], %[[B]] : tensor<4xi1>, tensor<4xf32>
// CHECK: %[[R1:.*]] = tg.select %[[M]], %[[A]], %[[B]] : tensor<4xi1>, tensor<4xf32>
// CHECK: return %[[R0]], %[[R1]]
func.func @select_does_not_fold(%p: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %m = tg.constant dense<[true, false, true, false]> : tensor<4xi1>
  %0 = tg.select %p, %a, %b : tensor<4xi1>, tensor<4xf32>
  %1 = tg.select %m, %a, %b : tensor<4xi1>, tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// convert to the operand's own type is the operand.
// CHECK-LABEL: func.func @convert_same_type
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4xbf16>, %[[I:[^:]+]]: tensor<4xi1>)
// CHECK-NOT: tg.convert
// CHECK: return %[[X]], %[[I]] : tensor<4xbf16>, tensor<4xi1>
func.func @convert_same_type(%x: tensor<4xbf16>, %i: tensor<4xi1>) -> (tensor<4xbf16>, tensor<4xi1>) {
  %0 = tg.convert %x : tensor<4xbf16> -> tensor<4xbf16>
  %1 = tg.convert %i : tensor<4xi1> -> tensor<4xi1>
  return %0, %1 : tensor<4xbf16>, tensor<4xi1>
}

// -----

// bf16 -> f32 -> f16 is bf16 -> f16: the widening step loses nothing.
// CHECK-LABEL: func.func @convert_chain_widening_first
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4xbf16>)
// CHECK: %[[R:.*]] = tg.convert %[[X]] : tensor<4xbf16> -> tensor<4xf16>
// CHECK-NOT: tg.convert
// CHECK: return %[[R]] : tensor<4xf16>
func.func @convert_chain_widening_first(%x: tensor<4xbf16>) -> tensor<4xf16> {
  %0 = tg.convert %x : tensor<4xbf16> -> tensor<4xf32>
  %1 = tg.convert %0 : tensor<4xf32> -> tensor<4xf16>
  return %1 : tensor<4xf16>
}

// -----

// f8E4M3FN -> f16 -> bf16 is f8E4M3FN -> bf16.
// CHECK-LABEL: func.func @convert_chain_f8
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4xf8E4M3FN>)
// CHECK: %[[R:.*]] = tg.convert %[[X]] : tensor<4xf8E4M3FN> -> tensor<4xbf16>
// CHECK-NOT: tg.convert
// CHECK: return %[[R]] : tensor<4xbf16>
func.func @convert_chain_f8(%x: tensor<4xf8E4M3FN>) -> tensor<4xbf16> {
  %0 = tg.convert %x : tensor<4xf8E4M3FN> -> tensor<4xf16>
  %1 = tg.convert %0 : tensor<4xf16> -> tensor<4xbf16>
  return %1 : tensor<4xbf16>
}

// -----

// f16 -> f32 -> f16 is the identity.
// CHECK-LABEL: func.func @convert_round_trip_lossless
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4xf16>)
// CHECK-NOT: tg.convert
// CHECK: return %[[X]] : tensor<4xf16>
func.func @convert_round_trip_lossless(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = tg.convert %x : tensor<4xf16> -> tensor<4xf32>
  %1 = tg.convert %0 : tensor<4xf32> -> tensor<4xf16>
  return %1 : tensor<4xf16>
}

// -----

// f32 -> bf16 -> f32 does not fold: the first step rounds.
// CHECK-LABEL: func.func @convert_round_trip_lossy
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4xf32>)
// CHECK: %[[N:.*]] = tg.convert %[[X]] : tensor<4xf32> -> tensor<4xbf16>
// CHECK: %[[W:.*]] = tg.convert %[[N]] : tensor<4xbf16> -> tensor<4xf32>
// CHECK: return %[[W]] : tensor<4xf32>
func.func @convert_round_trip_lossy(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tg.convert %x : tensor<4xf32> -> tensor<4xbf16>
  %1 = tg.convert %0 : tensor<4xbf16> -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// f16 -> bf16 -> f32 does not fold: neither of f16 and bf16 holds the other.
// CHECK-LABEL: func.func @convert_chain_f16_bf16
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4xf16>)
// CHECK: %[[N:.*]] = tg.convert %[[X]] : tensor<4xf16> -> tensor<4xbf16>
// CHECK: %[[W:.*]] = tg.convert %[[N]] : tensor<4xbf16> -> tensor<4xf32>
// CHECK: return %[[W]] : tensor<4xf32>
func.func @convert_chain_f16_bf16(%x: tensor<4xf16>) -> tensor<4xf32> {
  %0 = tg.convert %x : tensor<4xf16> -> tensor<4xbf16>
  %1 = tg.convert %0 : tensor<4xbf16> -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// i32 -> i64 -> f32 is i32 -> f32: integer widening loses nothing.
// CHECK-LABEL: func.func @convert_chain_integer_widening
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4xi32>)
// CHECK: %[[R:.*]] = tg.convert %[[X]] : tensor<4xi32> -> tensor<4xf32>
// CHECK-NOT: tg.convert
// CHECK: return %[[R]] : tensor<4xf32>
func.func @convert_chain_integer_widening(%x: tensor<4xi32>) -> tensor<4xf32> {
  %0 = tg.convert %x : tensor<4xi32> -> tensor<4xi64>
  %1 = tg.convert %0 : tensor<4xi64> -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// Chains through a narrowing, float-to-integer or i1 step do not fold.
// CHECK-LABEL: func.func @convert_chain_does_not_fold
// CHECK-SAME: (%[[L:[^:]+]]: tensor<4xi64>, %[[F:[^:]+]]: tensor<4xf32>, %[[B:[^:]+]]: tensor<4xi1>)
// CHECK: %[[N:.*]] = tg.convert %[[L]] : tensor<4xi64> -> tensor<4xi32>
// CHECK: %[[NW:.*]] = tg.convert %[[N]] : tensor<4xi32> -> tensor<4xi64>
// CHECK: %[[FI:.*]] = tg.convert %[[F]] : tensor<4xf32> -> tensor<4xi32>
// CHECK: %[[FIF:.*]] = tg.convert %[[FI]] : tensor<4xi32> -> tensor<4xf64>
// CHECK: %[[BI:.*]] = tg.convert %[[B]] : tensor<4xi1> -> tensor<4xi32>
// CHECK: %[[BIF:.*]] = tg.convert %[[BI]] : tensor<4xi32> -> tensor<4xi64>
// CHECK: return %[[NW]], %[[FIF]], %[[BIF]]
func.func @convert_chain_does_not_fold(%l: tensor<4xi64>, %f: tensor<4xf32>, %b: tensor<4xi1>)
    -> (tensor<4xi64>, tensor<4xf64>, tensor<4xi64>) {
  %0 = tg.convert %l : tensor<4xi64> -> tensor<4xi32>
  %1 = tg.convert %0 : tensor<4xi32> -> tensor<4xi64>
  %2 = tg.convert %f : tensor<4xf32> -> tensor<4xi32>
  %3 = tg.convert %2 : tensor<4xi32> -> tensor<4xf64>
  %4 = tg.convert %b : tensor<4xi1> -> tensor<4xi32>
  %5 = tg.convert %4 : tensor<4xi32> -> tensor<4xi64>
  return %1, %3, %5 : tensor<4xi64>, tensor<4xf64>, tensor<4xi64>
}

// -----

// A folded chain keeps the intermediate convert while something else uses it.
// CHECK-LABEL: func.func @convert_chain_shared_middle
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4xbf16>)
// CHECK-DAG: %[[W:.*]] = tg.convert %[[X]] : tensor<4xbf16> -> tensor<4xf32>
// CHECK-DAG: %[[H:.*]] = tg.convert %[[X]] : tensor<4xbf16> -> tensor<4xf16>
// CHECK: return %[[W]], %[[H]] : tensor<4xf32>, tensor<4xf16>
func.func @convert_chain_shared_middle(%x: tensor<4xbf16>) -> (tensor<4xf32>, tensor<4xf16>) {
  %0 = tg.convert %x : tensor<4xbf16> -> tensor<4xf32>
  %1 = tg.convert %0 : tensor<4xf32> -> tensor<4xf16>
  return %0, %1 : tensor<4xf32>, tensor<4xf16>
}

// -----

// mode_select does not fold, even with equal values: which one the graph
// computes is decided by tg-training-mode or tg-evaluation, after import.
// CHECK-LABEL: func.func @mode_select_kept
// CHECK: %[[M:.*]] = tg.mode_select training %{{.*}} evaluation %{{.*}} : tensor<4xf32>
// CHECK: return %[[M]]
func.func @mode_select_kept(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tg.mode_select training %a evaluation %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
