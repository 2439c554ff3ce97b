// RUN: tgc-opt %s --split-input-file --tg-mixed-precision=policy=bf16 | FileCheck %s --check-prefix=BF16
// RUN: tgc-opt %s --split-input-file --tg-mixed-precision=policy=fp32 | FileCheck %s --check-prefix=FP32
// RUN: tgc-opt %s --split-input-file --tg-mixed-precision="policy=bf16 keep-fp32=gelu" | FileCheck %s --check-prefix=KEEP
// RUN: tgc-opt %s --split-input-file --tg-mixed-precision="policy=bf16 keep-fp32-params=w2" | FileCheck %s --check-prefix=KEEPPARAM
// RUN: tgc-opt %s --split-input-file --tg-mixed-precision="policy=fp16 init-scale=1024" | FileCheck %s --check-prefix=FP16
// RUN: tgc-opt %s --split-input-file --tg-mixed-precision="policy=fp8 amax-history=4 margin=1" | FileCheck %s --check-prefix=FP8

// A linear layer, GELU and softmax: the matmul and GELU run in the low type,
// the softmax and the loss in f32; each parameter is cast once, the bias
// before its broadcast.
// BF16-LABEL: func.func @mlp
// BF16-DAG: %[[W:.*]] = tg.convert %arg1 : tensor<4x4xf32> -> tensor<4x4xbf16>
// BF16-DAG: %[[B:.*]] = tg.convert %arg2 : tensor<4xf32> -> tensor<4xbf16>
// BF16-DAG: %[[X:.*]] = tg.convert %arg0 : tensor<2x4xf32> -> tensor<2x4xbf16>
// BF16: %[[Y:.*]] = tg.matmul %[[X]], %[[W]] : (tensor<2x4xbf16>, tensor<4x4xbf16>) -> tensor<2x4xbf16>
// BF16: %[[BB:.*]] = tg.broadcast_in_dim %[[B]] dims = [1] : tensor<4xbf16> -> tensor<2x4xbf16>
// BF16: %[[S:.*]] = tg.add %[[Y]], %[[BB]] : tensor<2x4xbf16>
// BF16: %[[G:.*]] = tg.gelu tanh %[[S]] : tensor<2x4xbf16>
// BF16: %[[Y2:.*]] = tg.matmul %[[G]], %[[W]] : (tensor<2x4xbf16>, tensor<4x4xbf16>) -> tensor<2x4xbf16>
// BF16: %[[F:.*]] = tg.convert %[[Y2]] : tensor<2x4xbf16> -> tensor<2x4xf32>
// BF16: tg.softmax %[[F]] dim = 1 : tensor<2x4xf32>
// BF16: tg.cross_entropy mean %[[F]], %arg3 : (tensor<2x4xf32>, tensor<2xi64>)
// BF16-NOT: tg.convert
// BF16: return
// fp32 changes nothing.
// FP32-LABEL: func.func @mlp
// FP32-NOT: tg.convert
// FP32-NOT: bf16
// keep-fp32=gelu: the GELU runs in f32 between two bf16 matmuls.
// KEEP-LABEL: func.func @mlp
// KEEP: tg.add {{.*}} : tensor<2x4xbf16>
// KEEP: %[[UP:.*]] = tg.convert {{.*}} : tensor<2x4xbf16> -> tensor<2x4xf32>
// KEEP: %[[G:.*]] = tg.gelu tanh %[[UP]] : tensor<2x4xf32>
// KEEP: %[[DOWN:.*]] = tg.convert %[[G]] : tensor<2x4xf32> -> tensor<2x4xbf16>
// KEEP: tg.matmul %[[DOWN]], {{.*}} -> tensor<2x4xbf16>
func.func @mlp(%x: tensor<2x4xf32> {tg.role = "input"},
               %w: tensor<4x4xf32> {tg.role = "param", tg.name = "w"},
               %b: tensor<4xf32> {tg.role = "param", tg.name = "b"},
               %labels: tensor<2xi64> {tg.role = "label"})
    -> (tensor<f32> {tg.role = "loss"}, tensor<2x4xf32> {tg.role = "output"}) {
  %y = tg.matmul %x, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %bb = tg.broadcast_in_dim %b dims = [1] : tensor<4xf32> -> tensor<2x4xf32>
  %s = tg.add %y, %bb : tensor<2x4xf32>
  %g = tg.gelu tanh %s : tensor<2x4xf32>
  %y2 = tg.matmul %g, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %p = tg.softmax %y2 dim = 1 : tensor<2x4xf32>
  %loss, %lse = tg.cross_entropy mean %y2, %labels : (tensor<2x4xf32>, tensor<2xi64>) -> (tensor<f32>, tensor<2xf32>)
  return %loss, %p : tensor<f32>, tensor<2x4xf32>
}

// -----

// keep-fp32-params: the matmul that reads w2 runs in f32; w1's does not.
// KEEPPARAM-LABEL: func.func @two_layers
// KEEPPARAM: tg.matmul {{.*}} -> tensor<2x4xbf16>
// KEEPPARAM: %[[UP:.*]] = tg.convert {{.*}} : tensor<2x4xbf16> -> tensor<2x4xf32>
// KEEPPARAM: tg.matmul %[[UP]], %arg2 : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
// KEEPPARAM-NOT: tg.convert %arg2
// fp16: the loss is scaled by the loss_scale state, every parameter's
// gradient by its inverse; the parameters are cast once, after that.
// FP16-LABEL: func.func @two_layers
// FP16-SAME: %arg4: tensor<f32> {tg.default = 1.024000e+03 : f32, tg.name = "loss_scale", tg.role = "state"}
// FP16: %[[ONE:.*]] = tg.constant dense<1.000000e+00> : tensor<f32>
// FP16: %[[INV:.*]] = tg.div %[[ONE]], %arg4 : tensor<f32>
// FP16: %[[H1:.*]] = tg.scale_grad %arg1, %[[INV]] : tensor<4x4xf32>, tensor<f32>
// FP16: tg.convert %[[H1]] : tensor<4x4xf32> -> tensor<4x4xf16>
// FP16: %[[H2:.*]] = tg.scale_grad %arg2, %[[INV]] : tensor<4x4xf32>, tensor<f32>
// FP16: tg.convert %[[H2]] : tensor<4x4xf32> -> tensor<4x4xf16>
// FP16: tg.matmul {{.*}} -> tensor<2x4xf16>
// FP16: tg.matmul {{.*}} -> tensor<2x4xf16>
// FP16: %[[LOSS:.*]], %{{.*}} = tg.cross_entropy
// FP16: %[[SCALED:.*]] = tg.scale_grad %[[LOSS]], %arg4 : tensor<f32>, tensor<f32>
// FP16: return %[[SCALED]]
// fp8: matmul inputs are quantized to f8E4M3FN (one history per tensor,
// named after the parameter), outputs get an f8E5M2 gradient hook.
// FP8-LABEL: func.func @two_layers
// FP8-SAME: %arg4: tensor<4xf32> {tg.name = "w1.fp8_input_amax_history", tg.role = "state"}
// FP8-SAME: %arg5: tensor<4xf32> {tg.name = "w1.fp8_amax_history", tg.role = "state"}
// FP8-SAME: %arg6: tensor<4xf32> {tg.name = "w1.fp8_grad_amax_history", tg.role = "state"}
// FP8-SAME: %arg7: tensor<4xf32> {tg.name = "w2.fp8_input_amax_history", tg.role = "state"}
// FP8-SAME: %arg8: tensor<4xf32> {tg.name = "w2.fp8_amax_history", tg.role = "state"}
// FP8-SAME: %arg9: tensor<4xf32> {tg.name = "w2.fp8_grad_amax_history", tg.role = "state"}
// FP8: %[[QW:.*]] = tg.fake_quant %{{.*}}, %arg5 format = f8E4M3FN margin = 1 : tensor<4x4xbf16>, tensor<4xf32>
// FP8: %[[QX:.*]] = tg.fake_quant %{{.*}}, %arg4 format = f8E4M3FN margin = 1 : tensor<2x4xbf16>, tensor<4xf32>
// FP8: %[[Y:.*]] = tg.matmul %[[QX]], %[[QW]] : (tensor<2x4xbf16>, tensor<4x4xbf16>) -> tensor<2x4xbf16>
// FP8: %[[HY:.*]] = tg.fake_quant_grad %[[Y]], %arg6 format = f8E5M2 margin = 1
// FP8: tg.relu %[[HY]] : tensor<2x4xbf16>
func.func @two_layers(%x: tensor<2x4xf32> {tg.role = "input"},
                      %w1: tensor<4x4xf32> {tg.role = "param", tg.name = "w1"},
                      %w2: tensor<4x4xf32> {tg.role = "param", tg.name = "w2"},
                      %labels: tensor<2xi64> {tg.role = "label"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %h = tg.matmul %x, %w1 : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %r = tg.relu %h : tensor<2x4xf32>
  %y = tg.matmul %r, %w2 : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %loss, %lse = tg.cross_entropy mean %y, %labels : (tensor<2x4xf32>, tensor<2xi64>) -> (tensor<f32>, tensor<2xf32>)
  return %loss : tensor<f32>
}

// -----

// Layer norm: the normalized input and output in bf16, the scale and bias
// f32 master weights, mean and rstd f32; reductions run in f32.
// BF16-LABEL: func.func @norm
// BF16: %[[X:.*]] = tg.convert %arg0 : tensor<2x4xf32> -> tensor<2x4xbf16>
// BF16: %[[Y:.*]], %{{.*}}, %{{.*}} = tg.layer_norm %[[X]], %arg1, %arg2 epsilon = 1.000000e-05 : (tensor<2x4xbf16>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4xbf16>, tensor<2xf32>, tensor<2xf32>)
// BF16: %[[E:.*]] = tg.exp %[[Y]] : tensor<2x4xbf16>
// BF16: %[[F:.*]] = tg.convert %[[E]] : tensor<2x4xbf16> -> tensor<2x4xf32>
// BF16: tg.reduce sum %[[F]] dims = [0, 1] : tensor<2x4xf32> -> tensor<f32>
func.func @norm(%x: tensor<2x4xf32> {tg.role = "input"},
                %g: tensor<4xf32> {tg.role = "param", tg.name = "ln.weight"},
                %b: tensor<4xf32> {tg.role = "param", tg.name = "ln.bias"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y, %mean, %rstd = tg.layer_norm %x, %g, %b epsilon = 1.000000e-05 : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2xf32>, tensor<2xf32>)
  %e = tg.exp %y : tensor<2x4xf32>
  %s = tg.reduce sum %e dims = [0, 1] : tensor<2x4xf32> -> tensor<f32>
  return %s : tensor<f32>
}
