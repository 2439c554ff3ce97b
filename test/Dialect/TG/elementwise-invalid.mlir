// RUN: tgc-opt %s --split-input-file --verify-diagnostics

// Invalid elementwise ops: the type constraints users hit most often.

// add needs both operands of one type; custom syntax reports the second use.
func.func @add_operand_types_differ(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-note @-1 {{prior use here}}
  // expected-error @+1 {{use of value '%b' expects different type than prior uses: 'tensor<4xf32>' vs 'tensor<4xf16>'}}
  %0 = tg.add %a, %b : tensor<4xf32>
  return
}

// -----

// add needs both operands of one type; the generic form reaches the verifier.
func.func @add_operand_types_differ_generic(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{'tg.add' op requires the same type for all operands and results}}
  %0 = "tg.add"(%a, %b) : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return
}

// -----

// A unary op's result has its operand's type.
func.func @neg_result_type_differs(%a: tensor<4xf32>) {
  // expected-error @+1 {{'tg.neg' op requires the same type for all operands and results}}
  %0 = "tg.neg"(%a) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

// exp is for floats: an i1 operand is rejected.
func.func @exp_of_i1(%a: tensor<4xi1>) {
  // expected-error @+1 {{'tg.exp' op operand #0 must be statically shaped tensor of tg floating-point type values without encoding, of at most 2^44 bytes, but got 'tensor<4xi1>'}}
  %0 = tg.exp %a : tensor<4xi1>
  return
}

// -----

// sqrt is for floats: an integer operand is rejected.
func.func @sqrt_of_integer(%a: tensor<4xi32>) {
  // expected-error @+1 {{'tg.sqrt' op operand #0 must be statically shaped tensor of tg floating-point type values without encoding, of at most 2^44 bytes, but got 'tensor<4xi32>'}}
  %0 = tg.sqrt %a : tensor<4xi32>
  return
}

// -----

// pow is for floats: integer operands are rejected.
func.func @pow_of_integers(%a: tensor<4xi32>) {
  // expected-error @+1 {{'tg.pow' op operand #0 must be statically shaped tensor of tg floating-point type values without encoding, of at most 2^44 bytes, but got 'tensor<4xi32>'}}
  %0 = tg.pow %a, %a : tensor<4xi32>
  return
}

// -----

// neg is numeric: i1 is not a numeric type.
func.func @neg_of_i1(%a: tensor<4xi1>) {
  // expected-error @+1 {{'tg.neg' op operand #0 must be statically shaped tensor of tg floating-point type or tg integer type values without encoding, of at most 2^44 bytes, but got 'tensor<4xi1>'}}
  %0 = tg.neg %a : tensor<4xi1>
  return
}

// -----

// max is numeric: i1 is not a numeric type.
func.func @max_of_i1(%a: tensor<4xi1>) {
  // expected-error @+1 {{'tg.max' op operand #0 must be statically shaped tensor of tg floating-point type or tg integer type values without encoding, of at most 2^44 bytes, but got 'tensor<4xi1>'}}
  %0 = tg.max %a, %a : tensor<4xi1>
  return
}

// -----

// Element types outside the dialect's list (here i48, which no framework
// has) are rejected.
func.func @add_of_i48(%a: tensor<4xi48>) {
  // expected-error @+1 {{'tg.add' op operand #0 must be statically shaped tensor of tg floating-point type or tg integer type values without encoding, of at most 2^44 bytes, but got 'tensor<4xi48>'}}
  %0 = tg.add %a, %a : tensor<4xi48>
  return
}

// -----

// Dynamic shapes are rejected.
func.func @add_dynamic_shape(%a: tensor<?x4xf32>) {
  // expected-error @+1 {{'tg.add' op operand #0 must be statically shaped tensor of tg floating-point type or tg integer type values without encoding, of at most 2^44 bytes, but got 'tensor<?x4xf32>'}}
  %0 = tg.add %a, %a : tensor<?x4xf32>
  return
}

// -----

// Unranked tensors are rejected by the parser.
func.func @exp_unranked(%a: tensor<*xf32>) {
  // expected-error @+1 {{custom op 'tg.exp' invalid kind of type specified: expected builtin.tensor, but found 'tensor<*xf32>'}}
  %0 = tg.exp %a : tensor<*xf32>
  return
}

// -----

// Operands are tensors: a bare scalar is rejected (use tensor<f32>).
func.func @neg_of_bare_scalar(%a: f32) {
  // expected-error @+1 {{'tg.neg' op operand #0 must be statically shaped tensor of tg floating-point type or tg integer type values without encoding, of at most 2^44 bytes, but got 'f32'}}
  %0 = "tg.neg"(%a) : (f32) -> f32
  return
}

// -----

// gelu has two approximations only.
func.func @gelu_unknown_approximation(%a: tensor<4xf32>) {
  // expected-error @+1 {{custom op 'tg.gelu' expected string or keyword containing one of the following enum values for attribute 'approximation' [erf, tanh]}}
  %0 = tg.gelu exact %a : tensor<4xf32>
  return
}

// -----

// select needs an i1 predicate.
func.func @select_non_i1_predicate(%p: tensor<4xi32>, %a: tensor<4xf32>) {
  // expected-error @+1 {{'tg.select' op operand #0 must be statically shaped tensor of 1-bit signless integer values without encoding, of at most 2^44 bytes, but got 'tensor<4xi32>'}}
  %0 = tg.select %p, %a, %a : tensor<4xi32>, tensor<4xf32>
  return
}

// -----

// select needs a predicate of the result's shape (no implicit broadcast).
func.func @select_predicate_shape(%p: tensor<5xi1>, %a: tensor<4xf32>) {
  // expected-error @+1 {{'tg.select' op failed to verify that all of {pred, result} have same shape}}
  %0 = tg.select %p, %a, %a : tensor<5xi1>, tensor<4xf32>
  return
}

// -----

// select needs both branches of the result's type.
func.func @select_branch_types_differ(%p: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{'tg.select' op failed to verify that all of {on_true, on_false, result} have same type}}
  %0 = "tg.select"(%p, %a, %b) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return
}

// -----

// mode_select needs both values of the result's type.
func.func @mode_select_types_differ(%a: tensor<4xf32>, %b: tensor<1x4xf32>) {
  // expected-error @+1 {{'tg.mode_select' op failed to verify that all of {training, evaluation, result} have same type}}
  %0 = "tg.mode_select"(%a, %b) : (tensor<4xf32>, tensor<1x4xf32>) -> tensor<4xf32>
  return
}

// -----

// compare is numeric: i1 operands are rejected.
func.func @compare_of_i1(%a: tensor<4xi1>) {
  // expected-error @+1 {{'tg.compare' op operand #0 must be statically shaped tensor of tg floating-point type or tg integer type values without encoding, of at most 2^44 bytes, but got 'tensor<4xi1>'}}
  %0 = tg.compare eq, %a, %a : tensor<4xi1>
  return
}

// -----

// compare needs both operands of one type.
func.func @compare_operand_types_differ(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{'tg.compare' op failed to verify that all of {lhs, rhs} have same type}}
  %0 = "tg.compare"(%a, %b) <{direction = 2 : i32}> : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xi1>
  return
}

// -----

// compare returns i1, never another element type.
func.func @compare_result_not_i1(%a: tensor<4xf32>) {
  // expected-error @+1 {{'tg.compare' op result #0 must be statically shaped tensor of 1-bit signless integer values without encoding, of at most 2^44 bytes, but got 'tensor<4xi32>'}}
  %0 = "tg.compare"(%a, %a) <{direction = 2 : i32}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi32>
  return
}

// -----

// compare returns the operands' shape.
func.func @compare_result_shape(%a: tensor<4xf32>) {
  // expected-error @+1 {{'tg.compare' op all non-scalar operands/results must have the same shape and base type}}
  %0 = "tg.compare"(%a, %a) <{direction = 2 : i32}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<5xi1>
  return
}

// -----

// compare has six directions.
func.func @compare_unknown_direction(%a: tensor<4xf32>) {
  // expected-error @+1 {{custom op 'tg.compare' expected string or keyword containing one of the following enum values for attribute 'direction' [eq, ne, lt, le, gt, ge]}}
  %0 = tg.compare ult, %a, %a : tensor<4xf32>
  return
}

// -----

// convert keeps the shape.
func.func @convert_shape_differs(%a: tensor<4xf32>) {
  // expected-error @+1 {{'tg.convert' op failed to verify that all of {operand, result} have same shape}}
  %0 = tg.convert %a : tensor<4xf32> -> tensor<5xf16>
  return
}

// -----

// convert targets only the dialect's element types (signless or unsigned
// integers, not explicitly signed ones).
func.func @convert_to_si8(%a: tensor<4xf32>) {
  // expected-error @+1 {{'tg.convert' op result #0 must be statically shaped tensor of tg floating-point type or tg integer type or 1-bit signless integer values without encoding, of at most 2^44 bytes, but got 'tensor<4xsi8>'}}
  %0 = tg.convert %a : tensor<4xf32> -> tensor<4xsi8>
  return
}

// -----

// The bitwise ops take integers or i1, not floats.
func.func @bitwise_of_floats(%a: tensor<4xf32>) {
  // expected-error @+1 {{'tg.bitwise' op operand #0 must be statically shaped tensor of tg integer type or 1-bit signless integer values without encoding, of at most 2^44 bytes, but got 'tensor<4xf32>'}}
  %0 = tg.bitwise and, %a, %a : tensor<4xf32>
  return
}

// -----

// bitwise has three kinds; the complement is tg.bitwise_not.
func.func @bitwise_unknown_kind(%a: tensor<4xi32>) {
  // expected-error @+1 {{custom op 'tg.bitwise' expected string or keyword containing one of the following enum values for attribute 'kind' [and, or, xor]}}
  %0 = tg.bitwise nand, %a, %a : tensor<4xi32>
  return
}

// -----

// bitwise_not keeps the type.
func.func @bitwise_not_type_differs(%a: tensor<4xi32>) {
  // expected-error @+1 {{'tg.bitwise_not' op requires the same type for all operands and results}}
  %0 = "tg.bitwise_not"(%a) : (tensor<4xi32>) -> tensor<4xi64>
  return
}

// -----

// bitcast keeps the element width.
func.func @bitcast_width_differs(%a: tensor<4xf32>) {
  // expected-error @+1 {{'tg.bitcast' op reinterprets 'f32' (32 bits) as 'i64' (64 bits): the widths must be equal (i1 counts as 8)}}
  %0 = tg.bitcast %a : tensor<4xf32> -> tensor<4xi64>
  return
}

// -----

// bitcast keeps the shape.
func.func @bitcast_shape_differs(%a: tensor<4xf32>) {
  // expected-error @+1 {{'tg.bitcast' op failed to verify that all of {operand, result} have same shape}}
  %0 = tg.bitcast %a : tensor<4xf32> -> tensor<2xi32>
  return
}
