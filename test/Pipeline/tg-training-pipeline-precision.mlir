// precision=POLICY (tgc compile --precision): tg-mixed-precision before
// tg-autodiff, so that the backward inherits the forward's precision, and
// tg-scaling-update after tg-optimizer, so that an overflow can skip the
// update.
// RUN: tgc-opt %s --pass-pipeline='builtin.module(tg-training-pipeline{precision=fp16 optimizer=sgd micro-batches=2 init-scale=128 growth-interval=5 no-memory-plan=1})' --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=ORDER
// ORDER: tg-mixed-precision{{.*}}init-scale=1.280000e+02{{.*}}policy=fp16
// ORDER-NEXT: tg-autodiff
// ORDER-NEXT: tg-microbatch{micro-batches=2}
// ORDER-NEXT: tg-optimizer
// ORDER-NEXT: tg-scaling-update{{.*}}growth-interval=5
// ORDER-NEXT: canonicalize
// fp32 (the default) adds neither pass.
// RUN: tgc-opt %s --pass-pipeline='builtin.module(tg-training-pipeline{optimizer=sgd})' --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=FP32
// FP32-NOT: tg-mixed-precision
// FP32-NOT: tg-scaling-update

// The fp16 step: the loss scale and its counter are state updated in place;
// the exp runs in f16, the sum in f32, the update in f32 and only when the
// gradient is finite.
// RUN: tgc-opt %s --pass-pipeline='builtin.module(tg-training-pipeline{precision=fp16 optimizer=sgd no-fuse=1 no-memory-plan=1})' | FileCheck %s
// CHECK-LABEL: func.func @step
// CHECK-SAME: tensor<f32> {tg.default = 6.553600e+04 : f32, tg.name = "loss_scale", tg.role = "state"}
// CHECK-SAME: tensor<i64> {tg.default = 0 : i64, tg.name = "loss_scale.good_steps", tg.role = "state"}
// CHECK-SAME: {tg.aliases = 0 : i64, tg.name = "p", tg.role = "param"}
// CHECK-SAME: {tg.aliases = 1 : i64, tg.name = "loss_scale", tg.role = "state"}
// CHECK: tg.exp %{{.*}} : tensor<4xf16>
// CHECK: tg.reduce sum %{{.*}} : tensor<4xf32> -> tensor<f32>
// CHECK: %[[NEW:.*]] = tg.sgd %arg0
// CHECK: tg.select %{{.*}}, %[[NEW]], %arg0 : tensor<4xi1>, tensor<4xf32>
func.func @step(%p: tensor<4xf32> {tg.role = "param", tg.name = "p"}) -> (tensor<f32> {tg.role = "loss"}) {
  %e = tg.exp %p : tensor<4xf32>
  %loss = tg.reduce sum %e dims = [0] : tensor<4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}
