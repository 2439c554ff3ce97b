// RUN: tgc-opt %s | tgc-opt | FileCheck %s

// The mixed-precision ops round-trip.
// CHECK-LABEL: func.func @precision_ops
// CHECK: tg.scale_grad %arg0, %arg1 : tensor<2x4xf16>, tensor<f32>
// CHECK: tg.fake_quant %arg2, %arg3 format = f8E4M3FN margin = 0 : tensor<2x4xbf16>, tensor<16xf32>
// CHECK: tg.fake_quant_grad %arg2, %arg3 format = f8E5M2 margin = 2 : tensor<2x4xbf16>, tensor<16xf32>
func.func @precision_ops(%x: tensor<2x4xf16>, %s: tensor<f32>, %y: tensor<2x4xbf16>, %h: tensor<16xf32>)
    -> (tensor<2x4xf16>, tensor<2x4xbf16>, tensor<2x4xbf16>) {
  %0 = tg.scale_grad %x, %s : tensor<2x4xf16>, tensor<f32>
  %1 = tg.fake_quant %y, %h format = f8E4M3FN margin = 0 : tensor<2x4xbf16>, tensor<16xf32>
  %2 = tg.fake_quant_grad %y, %h format = f8E5M2 margin = 2 : tensor<2x4xbf16>, tensor<16xf32>
  return %0, %1, %2 : tensor<2x4xf16>, tensor<2x4xbf16>, tensor<2x4xbf16>
}

// Fake quantization to an integer grid and its straight-through backward.
// CHECK-LABEL: func.func @quantize_dequantize
// CHECK: %[[Q:.+]] = tg.quantize_dequantize %arg0, %arg1, %arg2 range = [-128, 127] : tensor<2x4xf32>
// CHECK: tg.quantize_dequantize_grad %arg3, %arg0, %arg1, %arg2 range = [0, 255] : tensor<2x4xf32>
func.func @quantize_dequantize(%x: tensor<2x4xf32>, %s: tensor<2x4xf32>, %z: tensor<2x4xf32>, %g: tensor<2x4xf32>)
    -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %0 = tg.quantize_dequantize %x, %s, %z range = [-128, 127] : tensor<2x4xf32>
  %1 = tg.quantize_dequantize_grad %g, %x, %s, %z range = [0, 255] : tensor<2x4xf32>
  return %0, %1 : tensor<2x4xf32>, tensor<2x4xf32>
}
