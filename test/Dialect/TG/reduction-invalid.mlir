// RUN: tgc-opt %s --split-input-file --verify-diagnostics

// A mean is only defined for floating-point operands.
func.func @reduce_mean_int(%x: tensor<4x6xi32>) -> tensor<4xi32> {
  // expected-error @+2 {{'mean' needs a floating-point operand, got 'i32'}}
  // expected-error @+1 {{'tg.reduce' op failed to infer returned types}}
  %0 = tg.reduce mean %x dims = [1] : tensor<4x6xi32> -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// A reduction dimension at or past the rank.
func.func @reduce_dim_too_large(%x: tensor<4x6xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{reduction dimension 2 is out of range for rank 2}}
  // expected-error @+1 {{'tg.reduce' op failed to infer returned types}}
  %0 = tg.reduce sum %x dims = [2] : tensor<4x6xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A negative reduction dimension (no Python-style counting from the end).
func.func @reduce_dim_negative(%x: tensor<4x6xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{reduction dimension -1 is out of range for rank 2}}
  // expected-error @+1 {{'tg.reduce' op failed to infer returned types}}
  %0 = tg.reduce max %x dims = [-1] : tensor<4x6xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Reduction dimensions out of order.
func.func @reduce_dims_unsorted(%x: tensor<4x6x5xf32>) -> tensor<6xf32> {
  // expected-error @+2 {{reduction dimensions must be strictly increasing}}
  // expected-error @+1 {{'tg.reduce' op failed to infer returned types}}
  %0 = tg.reduce sum %x dims = [2, 0] : tensor<4x6x5xf32> -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

// A reduction dimension listed twice.
func.func @reduce_dims_repeated(%x: tensor<4x6x5xf32>) -> tensor<6x5xf32> {
  // expected-error @+2 {{reduction dimensions must be strictly increasing}}
  // expected-error @+1 {{'tg.reduce' op failed to infer returned types}}
  %0 = tg.reduce min %x dims = [0, 0] : tensor<4x6x5xf32> -> tensor<6x5xf32>
  return %0 : tensor<6x5xf32>
}

// -----

// Reduced dimensions disappear from the result: keeping one fails type inference.
func.func @reduce_wrong_result_shape(%x: tensor<4x6xf32>) -> tensor<1x6xf32> {
  // expected-error @+2 {{'tg.reduce' op inferred type(s) 'tensor<6xf32>' are incompatible with return type(s) of operation 'tensor<1x6xf32>'}}
  // expected-error @+1 {{'tg.reduce' op failed to infer returned types}}
  %0 = tg.reduce sum %x dims = [0] : tensor<4x6xf32> -> tensor<1x6xf32>
  return %0 : tensor<1x6xf32>
}
