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

// -----

// An empty quantization grid.
func.func @quantize_empty_range(%x: tensor<4xf32>) {
  // expected-error @+1 {{'tg.quantize_dequantize' op range [10, 0] is empty (low > high)}}
  %0 = tg.quantize_dequantize %x, %x, %x range = [10, 0] : tensor<4xf32>
  return
}

// -----

// A grid beyond 32-bit integers (the f32 computation could not hold it).
func.func @quantize_wide_range(%x: tensor<4xf32>) {
  // expected-error @+1 {{'tg.quantize_dequantize_grad' op range [0, 8589934592] exceeds 32-bit integers}}
  %0 = tg.quantize_dequantize_grad %x, %x, %x, %x range = [0, 8589934592] : tensor<4xf32>
  return
}

// -----

// Scale and zero point have the operand's type.
func.func @quantize_scale_type(%x: tensor<4xf32>, %s: tensor<4xf16>) {
  // expected-error @+1 {{'tg.quantize_dequantize' op requires the same type for all operands and results}}
  %0 = "tg.quantize_dequantize"(%x, %s, %x) {low = 0 : i64, high = 255 : i64} : (tensor<4xf32>, tensor<4xf16>, tensor<4xf32>) -> tensor<4xf32>
  return
}
