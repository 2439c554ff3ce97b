// RUN: tgc-opt %s --split-input-file --verify-diagnostics

// Invalid mixed-precision ops: every hand-written diagnostic.

// The format is an fp8 type.
func.func @format_not_fp8(%x: tensor<4xbf16>, %h: tensor<4xf32>) {
  // expected-error @+1 {{'tg.fake_quant' op format must be f8E4M3FN or f8E5M2, got 'f16'}}
  %0 = tg.fake_quant %x, %h format = f16 margin = 0 : tensor<4xbf16>, tensor<4xf32>
  return
}

// -----

// The operand holds dequantized values, not fp8 ones.
func.func @operand_fp8(%x: tensor<4xf8E4M3FN>, %h: tensor<4xf32>) {
  // expected-error @+1 {{'tg.fake_quant' op operand is already fp8 ('tensor<4xf8E4M3FN>'); it holds the dequantized values}}
  %0 = tg.fake_quant %x, %h format = f8E4M3FN margin = 0 : tensor<4xf8E4M3FN>, tensor<4xf32>
  return
}

// -----

// The history is a 1-D f32 tensor.
func.func @history_rank(%x: tensor<4xbf16>, %h: tensor<2x2xf32>) {
  // expected-error @+1 {{'tg.fake_quant_grad' op amax history must be a non-empty 1-D f32 tensor, got 'tensor<2x2xf32>'}}
  %0 = tg.fake_quant_grad %x, %h format = f8E5M2 margin = 0 : tensor<4xbf16>, tensor<2x2xf32>
  return
}

// -----

// An empty history has no amax.
func.func @history_empty(%x: tensor<4xbf16>, %h: tensor<0xf32>) {
  // expected-error @+1 {{'tg.fake_quant' op amax history must be a non-empty 1-D f32 tensor, got 'tensor<0xf32>'}}
  %0 = tg.fake_quant %x, %h format = f8E4M3FN margin = 0 : tensor<4xbf16>, tensor<0xf32>
  return
}

// -----

// A negative margin.
func.func @negative_margin(%x: tensor<4xbf16>, %h: tensor<4xf32>) {
  // expected-error @+1 {{'tg.fake_quant' op margin must be non-negative, got -1}}
  %0 = tg.fake_quant %x, %h format = f8E4M3FN margin = -1 : tensor<4xbf16>, tensor<4xf32>
  return
}
