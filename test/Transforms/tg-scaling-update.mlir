// RUN: tgc-opt %s --split-input-file --tg-scaling-update="growth-interval=100 backoff=0.25" | FileCheck %s

// fp16: the gradient the sgd update consumes is checked; on inf/NaN the
// parameter keeps its old value and the scale backs off; after 100 clean
// steps it doubles. The count of clean steps is new state.
// CHECK-LABEL: func.func @loss_scaled
// CHECK-SAME: %arg4: tensor<i64> {tg.default = 0 : i64, tg.name = "loss_scale.good_steps", tg.role = "state"}
// CHECK-SAME: {tg.aliases = 0 : i64, tg.name = "loss_scale", tg.role = "state"}
// CHECK-SAME: {tg.aliases = 4 : i64, tg.name = "loss_scale.good_steps", tg.role = "state"}
// CHECK: %[[NEW:.*]] = tg.sgd %arg1, %arg2, %arg3
// CHECK: %[[ZERO:.*]] = tg.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[ZEROS:.*]] = tg.broadcast_in_dim %[[ZERO]] dims = [] : tensor<f32> -> tensor<4xf32>
// CHECK: %[[PRODUCT:.*]] = tg.mul %arg2, %[[ZEROS]] : tensor<4xf32>
// CHECK: %[[SUM:.*]] = tg.reduce sum %[[PRODUCT]] dims = [0] : tensor<4xf32> -> tensor<f32>
// CHECK: %[[FINITE:.*]] = tg.compare eq, %[[SUM]], %{{.*}} : tensor<f32>
// CHECK: %[[MASK:.*]] = tg.broadcast_in_dim %[[FINITE]] dims = [] : tensor<i1> -> tensor<4xi1>
// CHECK: %[[KEPT:.*]] = tg.select %[[MASK]], %[[NEW]], %arg1 : tensor<4xi1>, tensor<4xf32>
// CHECK: %[[COUNT:.*]] = tg.add %arg4, %{{.*}} : tensor<i64>
// CHECK: %[[COUNTED:.*]] = tg.select %[[FINITE]], %[[COUNT]], %{{.*}} : tensor<i1>, tensor<i64>
// CHECK: %[[INTERVAL:.*]] = tg.constant dense<100> : tensor<i64>
// CHECK: %[[GROWS:.*]] = tg.compare ge, %[[COUNTED]], %[[INTERVAL]] : tensor<i64>
// CHECK: %[[TWO:.*]] = tg.constant dense<2.000000e+00> : tensor<f32>
// CHECK: %[[DOUBLED:.*]] = tg.mul %arg0, %[[TWO]] : tensor<f32>
// CHECK: %[[GROWN:.*]] = tg.select %[[GROWS]], %[[DOUBLED]], %arg0 : tensor<i1>, tensor<f32>
// CHECK: %[[QUARTER:.*]] = tg.constant dense<2.500000e-01> : tensor<f32>
// CHECK: %[[BACKED:.*]] = tg.mul %arg0, %[[QUARTER]] : tensor<f32>
// CHECK: %[[SCALE:.*]] = tg.select %[[FINITE]], %[[GROWN]], %[[BACKED]] : tensor<i1>, tensor<f32>
// CHECK: %[[GOOD:.*]] = tg.select %[[GROWS]], %{{.*}}, %[[COUNTED]] : tensor<i1>, tensor<i64>
// CHECK: return %{{.*}}, %[[KEPT]], %[[SCALE]], %[[GOOD]]
func.func @loss_scaled(%s: tensor<f32> {tg.role = "state", tg.name = "loss_scale", tg.default = 65536.0 : f32},
                       %w: tensor<4xf32> {tg.role = "param", tg.name = "w"},
                       %g: tensor<4xf32> {tg.role = "input"},
                       %lr: tensor<f32> {tg.role = "hyper", tg.name = "lr"})
    -> (tensor<f32> {tg.role = "loss"}, tensor<4xf32> {tg.role = "param", tg.name = "w", tg.aliases = 1}) {
  %new = tg.sgd %w, %g, %lr momentum = 0.000000e+00 weight_decay = 0.000000e+00 : tensor<4xf32>, tensor<f32>
  %loss = tg.reduce sum %g dims = [0] : tensor<4xf32> -> tensor<f32>
  return %loss, %new : tensor<f32>, tensor<4xf32>
}

// -----

// fp8: the history read by a forward fake_quant and a backward one (two
// micro-batches) takes the larger amax of the two, newest first.
// CHECK-LABEL: func.func @amax_history
// CHECK-SAME: {tg.aliases = 2 : i64, tg.name = "x.fp8_amax_history", tg.role = "state"}
// CHECK: %[[A1:.*]] = tg.abs %arg0 : tensor<2x4xbf16>
// CHECK: %[[M1:.*]] = tg.reduce max %[[A1]] dims = [0, 1] : tensor<2x4xbf16> -> tensor<bf16>
// CHECK: %[[F1:.*]] = tg.convert %[[M1]] : tensor<bf16> -> tensor<f32>
// CHECK: %[[A2:.*]] = tg.abs %arg1 : tensor<2x4xbf16>
// CHECK: %[[M2:.*]] = tg.reduce max %[[A2]] dims = [0, 1] : tensor<2x4xbf16> -> tensor<bf16>
// CHECK: %[[F2:.*]] = tg.convert %[[M2]] : tensor<bf16> -> tensor<f32>
// CHECK: %[[AMAX:.*]] = tg.max %[[F1]], %[[F2]] : tensor<f32>
// CHECK: %[[NEWEST:.*]] = tg.reshape %[[AMAX]] : tensor<f32> -> tensor<1xf32>
// CHECK: %[[OLDER:.*]] = tg.slice %arg2 [0:2] : tensor<3xf32> -> tensor<2xf32>
// CHECK: %[[ROLLED:.*]] = tg.concat %[[NEWEST]], %[[OLDER]] dim = 0
// CHECK: return %{{.*}}, %{{.*}}, %[[ROLLED]]
func.func @amax_history(%x: tensor<2x4xbf16> {tg.role = "input"}, %y: tensor<2x4xbf16> {tg.role = "input", tg.name = "y"},
                        %h: tensor<3xf32> {tg.role = "state", tg.name = "x.fp8_amax_history"})
    -> (tensor<2x4xbf16> {tg.role = "output"}, tensor<2x4xbf16> {tg.role = "output", tg.name = "o2"}) {
  %0 = tg.fake_quant %x, %h format = f8E4M3FN margin = 0 : tensor<2x4xbf16>, tensor<3xf32>
  %1 = tg.fake_quant %y, %h format = f8E4M3FN margin = 0 : tensor<2x4xbf16>, tensor<3xf32>
  return %0, %1 : tensor<2x4xbf16>, tensor<2x4xbf16>
}

// -----

// A step without scaling state is unchanged.
// CHECK-LABEL: func.func @plain
// CHECK-NEXT: return %arg0 : tensor<4xf32>
func.func @plain(%x: tensor<4xf32> {tg.role = "input"}) -> (tensor<4xf32> {tg.role = "output"}) {
  return %x : tensor<4xf32>
}
