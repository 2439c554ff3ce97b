// RUN: tgc-opt %s --split-input-file --verify-diagnostics --allow-unregistered-dialect

// Unregistered ops are allowed only so that a body can end with a terminator
// other than tg.yield: no registered terminator may appear in a fusion.

// The body has fewer arguments than the fusion has inputs.
func.func @fusion_arg_count(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tg.fusion' op body has 1 argument(s) for 2 input(s)}}
  %0 = tg.fusion (%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    tg.yield %x : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

// A body argument whose type is not its input's.
func.func @fusion_arg_type(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tg.fusion' op body argument 1 has type 'tensor<4xf16>', input has 'tensor<4xf32>'}}
  %0 = tg.fusion (%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>, %y: tensor<4xf16>):
    tg.yield %x : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

// A body that ends with another terminator.
func.func @fusion_without_yield(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tg.fusion' op body must end with tg.yield}}
  %0 = tg.fusion (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    "test.terminator"(%x) : (tensor<4xf32>) -> ()
  }
  return %0 : tensor<4xf32>
}

// -----

// A yield of more values than the fusion has results.
func.func @yield_count(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tg.fusion (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    // expected-error @+1 {{'tg.yield' op yields 'tensor<4xf32>', 'tensor<4xf32>', the fusion returns 'tensor<4xf32>'}}
    tg.yield %x, %x : tensor<4xf32>, tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

// A yield of another type than the fusion's result.
func.func @yield_type(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tg.fusion (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %c = tg.convert %x : tensor<4xf32> -> tensor<4xf16>
    // expected-error @+1 {{'tg.yield' op yields 'tensor<4xf16>', the fusion returns 'tensor<4xf32>'}}
    tg.yield %c : tensor<4xf16>
  }
  return %0 : tensor<4xf32>
}

// -----

// A bare tg.yield in a fusion that returns a value.
func.func @yield_nothing(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tg.fusion (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    // expected-error @+1 {{'tg.yield' op yields no values, the fusion returns 'tensor<4xf32>'}}
    tg.yield
  }
  return %0 : tensor<4xf32>
}

// -----

// The kind of kernel is one tg-fuse forms.
func.func @fusion_unknown_kind(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tg.fusion' op has unknown kind 'tile' (expected loop, reduction, gemm or multi_tensor)}}
  %0 = tg.fusion (%a) {kind = "tile"} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    tg.yield %x : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

// Only a GEMM region has a cuBLASLt epilogue.
func.func @fusion_epilogue_not_gemm(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tg.fusion' op has an epilogue but is not a gemm region}}
  %0 = tg.fusion (%a) {kind = "loop", epilogue = "CUBLASLT_EPILOGUE_RELU"} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    tg.yield %x : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

// The epilogue is named as in cuBLASLt.
func.func @fusion_epilogue_name(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tg.fusion' op epilogue 'GELU' is not a cuBLASLt epilogue name}}
  %0 = tg.fusion (%a) {kind = "gemm", epilogue = "GELU"} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    tg.yield %x : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}
