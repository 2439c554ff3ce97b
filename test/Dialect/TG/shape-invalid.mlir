// RUN: tgc-opt %s --split-input-file --verify-diagnostics

// Invalid shape ops: every hand-written diagnostic, and the slice syntax.

// A constant's element type must be one of the dialect's (i4 and i2 are,
// ONNX's INT4 and INT2; i3 and signed si8 are not).
func.func @constant_of_i3() {
  // expected-error @+1 {{'tg.constant' op result #0 must be statically shaped tensor of tg floating-point type or tg integer type or 1-bit signless integer values without encoding, of at most 2^44 bytes, but got 'tensor<4xi3>'}}
  %0 = tg.constant dense<1> : tensor<4xi3>
  return
}

// -----

// A constant's result has the type of its value.
func.func @constant_type_differs() {
  // expected-error @+1 {{'tg.constant' op failed to verify that all of {value, result} have same type}}
  %0 = "tg.constant"() <{value = dense<1.0> : tensor<4xf32>}> : () -> tensor<4xf16>
  return
}

// -----

// A constant's value is an elements attribute, not a scalar.
func.func @constant_scalar_attribute() {
  // expected-error @+1 {{custom op 'tg.constant' invalid kind of attribute specified}}
  %0 = tg.constant 1.0 : f32
  return
}

// -----

// broadcast_in_dim keeps the element type.
func.func @broadcast_element_type_differs(%a: tensor<4xf32>) {
  // expected-error @+1 {{'tg.broadcast_in_dim' op result element type 'f16' differs from operand's 'f32'}}
  %0 = tg.broadcast_in_dim %a dims = [1] : tensor<4xf32> -> tensor<8x4xf16>
  return
}

// -----

// broadcast_in_dim needs one dimension per operand dimension.
func.func @broadcast_dims_count(%a: tensor<4xf32>) {
  // expected-error @+1 {{'tg.broadcast_in_dim' op has 2 broadcast dimensions for an operand of rank 1}}
  %0 = tg.broadcast_in_dim %a dims = [0, 1] : tensor<4xf32> -> tensor<8x4xf32>
  return
}

// -----

// A broadcast dimension past the result's rank is rejected.
func.func @broadcast_dim_too_large(%a: tensor<4xf32>) {
  // expected-error @+1 {{'tg.broadcast_in_dim' op broadcast dimension 2 is out of range for a result of rank 2}}
  %0 = tg.broadcast_in_dim %a dims = [2] : tensor<4xf32> -> tensor<8x4xf32>
  return
}

// -----

// A negative broadcast dimension is rejected.
func.func @broadcast_dim_negative(%a: tensor<4xf32>) {
  // expected-error @+1 {{'tg.broadcast_in_dim' op broadcast dimension -1 is out of range for a result of rank 2}}
  %0 = tg.broadcast_in_dim %a dims = [-1] : tensor<4xf32> -> tensor<8x4xf32>
  return
}

// -----

// broadcast_in_dim cannot transpose: decreasing dimensions are rejected.
func.func @broadcast_dims_decreasing(%a: tensor<4x4xf32>) {
  // expected-error @+1 {{'tg.broadcast_in_dim' op broadcast dimensions must be strictly increasing}}
  %0 = tg.broadcast_in_dim %a dims = [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
  return
}

// -----

// A repeated broadcast dimension is rejected.
func.func @broadcast_dims_repeated(%a: tensor<4x4xf32>) {
  // expected-error @+1 {{'tg.broadcast_in_dim' op broadcast dimensions must be strictly increasing}}
  %0 = tg.broadcast_in_dim %a dims = [1, 1] : tensor<4x4xf32> -> tensor<4x4x4xf32>
  return
}

// -----

// An operand dimension is either 1 or the size of its result dimension.
func.func @broadcast_size_mismatch(%a: tensor<3xf32>) {
  // expected-error @+1 {{'tg.broadcast_in_dim' op operand dimension 0 has size 3, which is neither 1 nor 4 (result dimension 1)}}
  %0 = tg.broadcast_in_dim %a dims = [1] : tensor<3xf32> -> tensor<8x4xf32>
  return
}

// -----

// broadcast_in_dim rejects a dynamic result.
func.func @broadcast_dynamic_result(%a: tensor<4xf32>) {
  // expected-error @+1 {{'tg.broadcast_in_dim' op result #0 must be statically shaped tensor of tg floating-point type or tg integer type or 1-bit signless integer values without encoding, of at most 2^44 bytes, but got 'tensor<8x?xf32>'}}
  %0 = tg.broadcast_in_dim %a dims = [1] : tensor<4xf32> -> tensor<8x?xf32>
  return
}

// -----

// reshape keeps the element type.
func.func @reshape_element_type_differs(%a: tensor<4x16xf32>) {
  // expected-error @+1 {{'tg.reshape' op result element type 'bf16' differs from operand's 'f32'}}
  %0 = tg.reshape %a : tensor<4x16xf32> -> tensor<64xbf16>
  return
}

// -----

// reshape keeps the element count.
func.func @reshape_element_count_differs(%a: tensor<4x16xf32>) {
  // expected-error @+1 {{'tg.reshape' op cannot reshape 4x16 (64 elements) to 63 (63 elements)}}
  %0 = tg.reshape %a : tensor<4x16xf32> -> tensor<63xf32>
  return
}

// -----

// reshape writes a rank-0 shape as `scalar`.
func.func @reshape_scalar_count_differs(%a: tensor<f32>) {
  // expected-error @+1 {{'tg.reshape' op cannot reshape scalar (1 elements) to 2 (2 elements)}}
  %0 = tg.reshape %a : tensor<f32> -> tensor<2xf32>
  return
}

// -----

// transpose needs one permutation entry per operand dimension.
func.func @transpose_perm_size(%a: tensor<4x16xf32>) {
  // expected-error @+2 {{permutation has 1 entries for an operand of rank 2}}
  // expected-error @+1 {{'tg.transpose' op failed to infer returned types}}
  %0 = tg.transpose %a perm = [0] : tensor<4x16xf32> -> tensor<4xf32>
  return
}

// -----

// A repeated dimension is not a permutation.
func.func @transpose_perm_repeated(%a: tensor<4x16xf32>) {
  // expected-error @+2 {{[0, 0] is not a permutation of the dimensions 0..1}}
  // expected-error @+1 {{'tg.transpose' op failed to infer returned types}}
  %0 = tg.transpose %a perm = [0, 0] : tensor<4x16xf32> -> tensor<4x4xf32>
  return
}

// -----

// A dimension past the rank is not a permutation.
func.func @transpose_perm_too_large(%a: tensor<4x16x2xf32>) {
  // expected-error @+2 {{[0, 3, 1] is not a permutation of the dimensions 0..2}}
  // expected-error @+1 {{'tg.transpose' op failed to infer returned types}}
  %0 = tg.transpose %a perm = [0, 3, 1] : tensor<4x16x2xf32> -> tensor<4x2x16xf32>
  return
}

// -----

// A negative dimension is not a permutation.
func.func @transpose_perm_negative(%a: tensor<4x16xf32>) {
  // expected-error @+2 {{[-1, 0] is not a permutation of the dimensions 0..1}}
  // expected-error @+1 {{'tg.transpose' op failed to infer returned types}}
  %0 = tg.transpose %a perm = [-1, 0] : tensor<4x16xf32> -> tensor<16x4xf32>
  return
}

// -----

// transpose's result type must be the permuted operand type.
func.func @transpose_result_type(%a: tensor<4x16xf32>) {
  // expected-error @+2 {{'tg.transpose' op inferred type(s) 'tensor<4x16xf32>' are incompatible with return type(s) of operation 'tensor<16x4xf32>'}}
  // expected-error @+1 {{'tg.transpose' op failed to infer returned types}}
  %0 = tg.transpose %a perm = [0, 1] : tensor<4x16xf32> -> tensor<16x4xf32>
  return
}

// -----

// slice needs one range per operand dimension.
func.func @slice_range_count(%a: tensor<4x16xf32>) {
  // expected-error @+2 {{expected one slice range per dimension (2), got 1 starts, 1 limits and 1 strides}}
  // expected-error @+1 {{'tg.slice' op failed to infer returned types}}
  %0 = tg.slice %a [0:4] : tensor<4x16xf32> -> tensor<4xf32>
  return
}

// -----

// A slice limit past the dimension's size is rejected.
func.func @slice_limit_too_large(%a: tensor<4x16xf32>) {
  // expected-error @+2 {{slice range 0:5 of dimension 0 is not within 0:4}}
  // expected-error @+1 {{'tg.slice' op failed to infer returned types}}
  %0 = tg.slice %a [0:5, 0:16] : tensor<4x16xf32> -> tensor<5x16xf32>
  return
}

// -----

// A negative slice start is rejected.
func.func @slice_start_negative(%a: tensor<4x16xf32>) {
  // expected-error @+2 {{slice range -1:16 of dimension 1 is not within 0:16}}
  // expected-error @+1 {{'tg.slice' op failed to infer returned types}}
  %0 = tg.slice %a [0:4, -1:16] : tensor<4x16xf32> -> tensor<4x17xf32>
  return
}

// -----

// A zero slice stride is rejected.
func.func @slice_stride_zero(%a: tensor<4x16xf32>) {
  // expected-error @+2 {{slice stride 0 of dimension 1 is not positive}}
  // expected-error @+1 {{'tg.slice' op failed to infer returned types}}
  %0 = tg.slice %a [0:4, 0:16:0] : tensor<4x16xf32> -> tensor<4x16xf32>
  return
}

// -----

// A negative slice stride is rejected (no reversal).
func.func @slice_stride_negative(%a: tensor<4x16xf32>) {
  // expected-error @+2 {{slice stride -2 of dimension 0 is not positive}}
  // expected-error @+1 {{'tg.slice' op failed to infer returned types}}
  %0 = tg.slice %a [3:4:-2, 0:16] : tensor<4x16xf32> -> tensor<1x16xf32>
  return
}

// -----

// slice's result type must be the one its ranges give (here 16/2 = 8 columns).
func.func @slice_result_type(%a: tensor<4x16xf32>) {
  // expected-error @+2 {{'tg.slice' op inferred type(s) 'tensor<4x8xf32>' are incompatible with return type(s) of operation 'tensor<4x16xf32>'}}
  // expected-error @+1 {{'tg.slice' op failed to infer returned types}}
  %0 = tg.slice %a [0:4, 0:16:2] : tensor<4x16xf32> -> tensor<4x16xf32>
  return
}

// -----

// Slice syntax: a range needs a limit after its start.
func.func @slice_syntax_missing_colon(%a: tensor<4x16xf32>) {
  // expected-error @+1 {{expected ':'}}
  %0 = tg.slice %a [0, 0:16] : tensor<4x16xf32> -> tensor<4x16xf32>
  return
}

// -----

// Slice syntax: the limit after the colon is an integer.
func.func @slice_syntax_missing_limit(%a: tensor<4x16xf32>) {
  // expected-error @+1 {{custom op 'tg.slice' expected integer value}}
  %0 = tg.slice %a [0:, 0:16] : tensor<4x16xf32> -> tensor<4x16xf32>
  return
}

// -----

// Slice syntax: a second colon must be followed by a stride.
func.func @slice_syntax_missing_stride(%a: tensor<4x16xf32>) {
  // expected-error @+1 {{custom op 'tg.slice' expected integer value}}
  %0 = tg.slice %a [0:4:, 0:16] : tensor<4x16xf32> -> tensor<4x16xf32>
  return
}

// -----

// Slice syntax: a range has at most three parts.
func.func @slice_syntax_four_parts(%a: tensor<4x16xf32>) {
  // expected-error @+1 {{expected ']' in slice ranges}}
  %0 = tg.slice %a [0:4:1:1, 0:16] : tensor<4x16xf32> -> tensor<4x16xf32>
  return
}

// -----

// Slice syntax: ranges are separated by commas.
func.func @slice_syntax_missing_comma(%a: tensor<4x16xf32>) {
  // expected-error @+1 {{expected ']' in slice ranges}}
  %0 = tg.slice %a [0:4 0:16] : tensor<4x16xf32> -> tensor<4x16xf32>
  return
}

// -----

// Slice syntax: the ranges are in square brackets.
func.func @slice_syntax_missing_brackets(%a: tensor<4x16xf32>) {
  // expected-error @+1 {{expected '[' in slice ranges}}
  %0 = tg.slice %a 0:4, 0:16 : tensor<4x16xf32> -> tensor<4x16xf32>
  return
}

// -----

// Slice syntax: bounds are integers, not names.
func.func @slice_syntax_not_integer(%a: tensor<4x16xf32>) {
  // expected-error @+1 {{custom op 'tg.slice' expected integer value}}
  %0 = tg.slice %a [a:4, 0:16] : tensor<4x16xf32> -> tensor<4x16xf32>
  return
}

// -----

// Slice syntax: bounds fit in 64 bits.
func.func @slice_syntax_integer_too_large(%a: tensor<4x16xf32>) {
  // expected-error @+1 {{custom op 'tg.slice' integer value too large}}
  %0 = tg.slice %a [0:99999999999999999999, 0:16] : tensor<4x16xf32> -> tensor<4x16xf32>
  return
}

// -----

// concat needs at least one input.
func.func @concat_no_inputs() {
  // expected-error @+2 {{expected at least one input}}
  // expected-error @+1 {{'tg.concat' op failed to infer returned types}}
  %0 = tg.concat dim = 0 : () -> tensor<4xf32>
  return
}

// -----

// The concatenation dimension must be below the rank.
func.func @concat_dim_too_large(%a: tensor<4x16xf32>) {
  // expected-error @+2 {{concatenation dimension 2 is out of range for rank 2}}
  // expected-error @+1 {{'tg.concat' op failed to infer returned types}}
  %0 = tg.concat %a, %a dim = 2 : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x32xf32>
  return
}

// -----

// A negative concatenation dimension is rejected.
func.func @concat_dim_negative(%a: tensor<4x16xf32>) {
  // expected-error @+2 {{concatenation dimension -1 is out of range for rank 2}}
  // expected-error @+1 {{'tg.concat' op failed to infer returned types}}
  %0 = tg.concat %a, %a dim = -1 : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x32xf32>
  return
}

// -----

// Scalars cannot be concatenated: they have no dimension.
func.func @concat_scalars(%a: tensor<f32>) {
  // expected-error @+2 {{concatenation dimension 0 is out of range for rank 0}}
  // expected-error @+1 {{'tg.concat' op failed to infer returned types}}
  %0 = tg.concat %a, %a dim = 0 : (tensor<f32>, tensor<f32>) -> tensor<2xf32>
  return
}

// -----

// concat inputs share one element type.
func.func @concat_element_types_differ(%a: tensor<4x16xf32>, %b: tensor<4x16xbf16>) {
  // expected-error @+2 {{input 1 has type 'tensor<4x16xbf16>', which differs from input 0 ('tensor<4x16xf32>') in rank or element type}}
  // expected-error @+1 {{'tg.concat' op failed to infer returned types}}
  %0 = tg.concat %a, %b dim = 1 : (tensor<4x16xf32>, tensor<4x16xbf16>) -> tensor<4x32xf32>
  return
}

// -----

// concat inputs share one rank.
func.func @concat_ranks_differ(%a: tensor<4x16xf32>, %b: tensor<4x16x1xf32>) {
  // expected-error @+2 {{input 1 has type 'tensor<4x16x1xf32>', which differs from input 0 ('tensor<4x16xf32>') in rank or element type}}
  // expected-error @+1 {{'tg.concat' op failed to infer returned types}}
  %0 = tg.concat %a, %b dim = 1 : (tensor<4x16xf32>, tensor<4x16x1xf32>) -> tensor<4x32xf32>
  return
}

// -----

// concat inputs agree on every other dimension; the error names the input.
func.func @concat_sizes_differ(%a: tensor<4x16xf32>, %b: tensor<5x16xf32>) {
  // expected-error @+2 {{input 2 has size 5 in dimension 0, input 0 has 4}}
  // expected-error @+1 {{'tg.concat' op failed to infer returned types}}
  %0 = tg.concat %a, %a, %b dim = 1 : (tensor<4x16xf32>, tensor<4x16xf32>, tensor<5x16xf32>) -> tensor<4x48xf32>
  return
}

// -----

// concat's result type must be the one its inputs give.
func.func @concat_result_type(%a: tensor<4x16xf32>) {
  // expected-error @+2 {{'tg.concat' op inferred type(s) 'tensor<4x32xf32>' are incompatible with return type(s) of operation 'tensor<4x33xf32>'}}
  // expected-error @+1 {{'tg.concat' op failed to infer returned types}}
  %0 = tg.concat %a, %a dim = 1 : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x33xf32>
  return
}

// -----

// The count diagnostic names the length of each array.
func.func @slice_stride_count(%a: tensor<4x16xf32>) {
  // expected-error @+2 {{expected one slice range per dimension (2), got 2 starts, 2 limits and 1 strides}}
  // expected-error @+1 {{'tg.slice' op failed to infer returned types}}
  %0 = "tg.slice"(%a) <{start_indices = array<i64: 0, 0>, limit_indices = array<i64: 4, 16>, strides = array<i64: 1>}> : (tensor<4x16xf32>) -> tensor<4x16xf32>
  return
}

// -----

// A start above its limit is named as such.
func.func @slice_start_above_limit(%a: tensor<4x16xf32>) {
  // expected-error @+2 {{slice range 3:2 of dimension 0 starts after its limit}}
  // expected-error @+1 {{'tg.slice' op failed to infer returned types}}
  %0 = tg.slice %a [3:2, 0:16] : tensor<4x16xf32> -> tensor<0x16xf32>
  return
}

// -----

// An encoded operand is rejected.
func.func @transpose_encoded_operand(%a: tensor<4xf32, "enc">) -> tensor<4xf32> {
  // expected-error @+1 {{'tg.transpose' op operand #0 must be statically shaped tensor}}
  %0 = tg.transpose %a perm = [0] : tensor<4xf32, "enc"> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// An encoded input is rejected.
func.func @concat_encoded_input(%a: tensor<4xf32, "enc">) -> tensor<4xf32> {
  // expected-error @+1 {{'tg.concat' op operand #0 must be variadic of statically shaped tensor}}
  %0 = tg.concat %a dim = 0 : (tensor<4xf32, "enc">) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// pad needs one low padding per dimension.
func.func @pad_low_count(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{expected one padding per dimension (2), got 1 low, 2 high and 2 interior}}
  // expected-error @+1 {{'tg.pad' op failed to infer returned types}}
  %0 = tg.pad %a low = [1] high = [0, 0] interior = [0, 0] : tensor<2x3xf32> -> tensor<3x3xf32>
  return
}

// -----

// pad needs one high and one interior padding per dimension.
func.func @pad_high_interior_count(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{expected one padding per dimension (2), got 2 low, 3 high and 0 interior}}
  // expected-error @+1 {{'tg.pad' op failed to infer returned types}}
  %0 = tg.pad %a low = [0, 0] high = [0, 0, 0] interior = [] : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

// A negative low padding (a crop) is rejected.
func.func @pad_negative_low(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{padding of dimension 1 is negative}}
  // expected-error @+1 {{'tg.pad' op failed to infer returned types}}
  %0 = tg.pad %a low = [0, -1] high = [0, 0] interior = [0, 0] : tensor<2x3xf32> -> tensor<2x2xf32>
  return
}

// -----

// A negative high padding is rejected.
func.func @pad_negative_high(%a: tensor<2x3xi64>) {
  // expected-error @+2 {{padding of dimension 0 is negative}}
  // expected-error @+1 {{'tg.pad' op failed to infer returned types}}
  %0 = tg.pad %a low = [0, 0] high = [-1, 0] interior = [0, 0] : tensor<2x3xi64> -> tensor<1x3xi64>
  return
}

// -----

// A negative interior padding is rejected.
func.func @pad_negative_interior(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{padding of dimension 1 is negative}}
  // expected-error @+1 {{'tg.pad' op failed to infer returned types}}
  %0 = tg.pad %a low = [0, 0] high = [0, 0] interior = [0, -1] : tensor<2x3xf32> -> tensor<2x1xf32>
  return
}

// -----

// A pad result of another shape than the paddings give.
func.func @pad_result_shape(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'tg.pad' op inferred type(s) 'tensor<3x7xf32>' are incompatible with return type(s) of operation 'tensor<3x6xf32>'}}
  // expected-error @+1 {{'tg.pad' op failed to infer returned types}}
  %0 = tg.pad %a low = [1, 0] high = [0, 2] interior = [0, 1] : tensor<2x3xf32> -> tensor<3x6xf32>
  return
}

// -----

// Paddings near 2^63 must not wrap around to a small size (the result would
// be accepted and written out of bounds).
func.func @pad_overflowing_low_high(%a: tensor<4x8xf32>) {
  // expected-error @+2 {{padding of dimension 0 makes it larger than 2^44 elements}}
  // expected-error @+1 {{'tg.pad' op failed to infer returned types}}
  %0 = tg.pad %a low = [9223372036854775807, 0] high = [9223372036854775807, 0] interior = [0, 0] : tensor<4x8xf32> -> tensor<2x8xf32>
  return
}

// -----

// A huge interior padding is refused the same way.
func.func @pad_overflowing_interior(%a: tensor<4x8xf32>) {
  // expected-error @+2 {{padding of dimension 1 makes it larger than 2^44 elements}}
  // expected-error @+1 {{'tg.pad' op failed to infer returned types}}
  %0 = tg.pad %a low = [0, 0] high = [0, 0] interior = [0, 4611686018427387904] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

// A concatenation whose size would wrap around.
func.func @concat_overflowing(%a: tensor<17592186044416xi1>) {
  // expected-error @+2 {{the concatenation is larger than 2^44 elements in dimension 0}}
  // expected-error @+1 {{'tg.concat' op failed to infer returned types}}
  %0 = tg.concat %a, %a dim = 0 : (tensor<17592186044416xi1>, tensor<17592186044416xi1>) -> tensor<4xi1>
  return
}

// -----

// A tensor of more than 2^44 bytes is refused by every op's type constraint:
// its byte size, FLOPs and the memory figures would overflow int64.
func.func @tensor_too_large(%a: tensor<9223372036854775807x2xf32>) {
  // expected-error @+1 {{'tg.neg' op operand #0 must be statically shaped tensor of}}
  %0 = tg.neg %a : tensor<9223372036854775807x2xf32>
  return
}

// -----

func.func @tensor_just_too_large(%a: tensor<4398046511104x2xf32>) {
  // expected-error @+1 {{of at most 2^44 bytes, but got 'tensor<4398046511104x2xf32>'}}
  %0 = tg.neg %a : tensor<4398046511104x2xf32>
  return
}
