// RUN: tgc-opt %s --split-input-file --tg-training-mode --verify-diagnostics

// tg-training-mode cannot fail on a verified module: the two values of a
// mode_select are checked before it takes one, so it never replaces a
// value by one of another type.
func.func @types_differ(%a: tensor<1x4xf32>, %b: tensor<1x4xbf16>) -> tensor<1x4xf32> {
  // expected-error @+1 {{'tg.mode_select' op failed to verify that all of {training, evaluation, result} have same type}}
  %0 = "tg.mode_select"(%a, %b) : (tensor<1x4xf32>, tensor<1x4xbf16>) -> tensor<1x4xf32>
  return %0 : tensor<1x4xf32>
}

// -----

func.func @one_value(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tg.mode_select' op expected 2 operands, but found 1}}
  %0 = "tg.mode_select"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
