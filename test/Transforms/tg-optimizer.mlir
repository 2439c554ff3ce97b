// RUN: tgc-opt %s --split-input-file --tg-optimizer | FileCheck %s --check-prefix=ADAMW
// RUN: tgc-opt %s --split-input-file --tg-optimizer='kind=sgd lr=0.5' | FileCheck %s --check-prefix=SGD
// RUN: tgc-opt %s --split-input-file --tg-optimizer='kind=sgd momentum=0.9 nesterov=true weight-decay=0.1' | FileCheck %s --check-prefix=MOMENTUM
// RUN: tgc-opt %s --split-input-file --tg-optimizer='kind=lamb weight-decay=0.01 no-decay=b,frozen' | FileCheck %s --check-prefix=LAMB
// RUN: tgc-opt %s --split-input-file --tg-optimizer='clip-norm=1.0' | FileCheck %s --check-prefix=CLIP
// RUN: tgc-opt %s --split-input-file --tg-optimizer='beta1=0.8 beta2=0.95 eps=1e-6' | FileCheck %s --check-prefix=BETAS
// RUN: tgc-opt %s --split-input-file --tg-optimizer='kind=adafactor' | FileCheck %s --check-prefix=ADAFACTOR
// RUN: tgc-opt %s --split-input-file --tg-optimizer='kind=adafactor lr=0.01 decay-rate=-0.5 eps1=1e-20 clip-threshold=2.0 weight-decay=0.1' | FileCheck %s --check-prefix=ADAFACTOR-OPTS

// A differentiated step: the gradients become AdamW updates, with state
// and hyperparameter arguments, and results that alias what they replace.
// ADAMW-LABEL: func.func @step
// ADAMW-SAME: %arg3: tensor<2xf32> {tg.name = "w.exp_avg", tg.role = "state"}, %arg4: tensor<2xf32> {tg.name = "w.exp_avg_sq", tg.role = "state"}
// ADAMW-SAME: %arg7: tensor<f32> {tg.default = 1.000000e-03 : f32, tg.name = "lr", tg.role = "hyper"}, %arg8: tensor<i64> {tg.default = 1 : i64, tg.name = "step", tg.role = "hyper"}
// ADAMW-SAME: -> (tensor<f32> {tg.role = "loss"}, tensor<2xf32> {tg.aliases = 0 : i64, tg.name = "w", tg.role = "param"}, tensor<2xf32> {tg.aliases = 3 : i64, tg.name = "w.exp_avg", tg.role = "state"}, tensor<2xf32> {tg.aliases = 4 : i64, tg.name = "w.exp_avg_sq", tg.role = "state"}, tensor<3xf32> {tg.aliases = 1 : i64, tg.name = "b", tg.role = "param"}
// ADAMW: tg.adamw %arg0, %arg0, %arg3, %arg4, %arg7, %arg8 betas = (9.000000e-01, 0.99899999999999999) epsilon = 1.000000e-08 weight_decay = 0.000000e+00
// ADAMW: tg.adamw %arg1, %arg1, %arg5, %arg6, %arg7, %arg8
// The frozen parameter (no gradient) is left alone.
// ADAMW-NOT: tg.adamw %arg2
// SGD-LABEL: func.func @step
// SGD-SAME: %arg3: tensor<f32> {tg.default = 5.000000e-01 : f32, tg.name = "lr", tg.role = "hyper"})
// SGD: tg.sgd %arg0, %arg0, %arg3 momentum = 0.000000e+00 weight_decay = 0.000000e+00 : tensor<2xf32>, tensor<f32>
// MOMENTUM-LABEL: func.func @step
// MOMENTUM-SAME: {tg.name = "w.momentum_buffer", tg.role = "state"}
// MOMENTUM: tg.sgd %arg0, %arg0, %arg5, %arg3 momentum = 9.000000e-01 weight_decay = 1.000000e-01 nesterov
// MOMENTUM: tg.sgd %arg1, %arg1, %arg5, %arg4 momentum = 9.000000e-01 weight_decay = 1.000000e-01 nesterov
// LAMB-LABEL: func.func @step
// LAMB: tg.lamb %arg0, {{.*}} weight_decay = 1.000000e-02
// LAMB: tg.lamb %arg1, {{.*}} weight_decay = 0.000000e+00
// BETAS-LABEL: func.func @step
// BETAS: tg.adamw %arg0, {{.*}} betas = (8.000000e-01, 0.94999999999999996) epsilon = 9.9999999999999995E-7
// CLIP-LABEL: func.func @step
// CLIP: tg.reduce sum %arg0
// CLIP: %[[S0:[0-9]+]] = tg.reduce sum
// CLIP: %[[S1:[0-9]+]] = tg.reduce sum
// CLIP: %[[T:[0-9]+]] = tg.add %[[S0]], %[[S1]]
// CLIP: tg.sqrt %[[T]]
// CLIP: tg.min
// CLIP: tg.adamw
// Adafactor keeps one unfactored second moment per vector.
// ADAFACTOR-LABEL: func.func @step
// ADAFACTOR-SAME: %arg3: tensor<2xf32> {tg.name = "w.exp_avg_sq", tg.role = "state"}, %arg4: tensor<3xf32> {tg.name = "b.exp_avg_sq", tg.role = "state"}
// ADAFACTOR-SAME: %arg5: tensor<f32> {tg.default = 1.000000e-03 : f32, tg.name = "lr", tg.role = "hyper"}, %arg6: tensor<i64> {tg.default = 1 : i64, tg.name = "step", tg.role = "hyper"}
// ADAFACTOR-SAME: -> (tensor<f32> {tg.role = "loss"}, tensor<2xf32> {tg.aliases = 0 : i64, tg.name = "w", tg.role = "param"}, tensor<2xf32> {tg.aliases = 3 : i64, tg.name = "w.exp_avg_sq", tg.role = "state"}, tensor<3xf32> {tg.aliases = 1 : i64, tg.name = "b", tg.role = "param"}, tensor<3xf32> {tg.aliases = 4 : i64, tg.name = "b.exp_avg_sq", tg.role = "state"})
// ADAFACTOR: tg.adafactor %arg0, %arg0, [%arg3], %arg5, %arg6 decay_rate = -8.000000e-01 epsilon1 = 1.000000e-30 clip_threshold = 1.000000e+00 weight_decay = 0.000000e+00 : tensor<2xf32>, [tensor<2xf32>], tensor<f32>, tensor<i64>
// ADAFACTOR: tg.adafactor %arg1, %arg1, [%arg4], %arg5, %arg6
// ADAFACTOR-NOT: tg.adafactor %arg2
// ADAFACTOR-OPTS-LABEL: func.func @step
func.func @step(%w: tensor<2xf32> {tg.role = "param", tg.name = "w"},
                %b: tensor<3xf32> {tg.role = "param", tg.name = "b"},
                %frozen: tensor<4xf32> {tg.role = "param", tg.name = "frozen"})
    -> (tensor<f32> {tg.role = "loss"}, tensor<2xf32> {tg.role = "grad", tg.name = "w.grad"},
        tensor<3xf32> {tg.role = "grad", tg.name = "b.grad"}) {
  %loss = tg.reduce sum %w dims = [0] : tensor<2xf32> -> tensor<f32>
  return %loss, %w, %b : tensor<f32>, tensor<2xf32>, tensor<3xf32>
}

// -----

// Default no-decay globs: biases and norms get no weight decay.
// ADAMW-LABEL: func.func @decay
// SGD-LABEL: func.func @decay
// MOMENTUM-LABEL: func.func @decay
// MOMENTUM: tg.sgd %arg0, {{.*}} weight_decay = 1.000000e-01
// MOMENTUM: tg.sgd %arg1, {{.*}} weight_decay = 0.000000e+00
// MOMENTUM: tg.sgd %arg2, {{.*}} weight_decay = 0.000000e+00
// LAMB-LABEL: func.func @decay
// CLIP-LABEL: func.func @decay
// BETAS-LABEL: func.func @decay
// ADAFACTOR-LABEL: func.func @decay
// ADAFACTOR-OPTS-LABEL: func.func @decay
func.func @decay(%w: tensor<2xf32> {tg.role = "param", tg.name = "h.0.attn.weight"},
                 %b: tensor<2xf32> {tg.role = "param", tg.name = "h.0.attn.bias"},
                 %n: tensor<2xf32> {tg.role = "param", tg.name = "h.0.ln_1.weight"})
    -> (tensor<f32> {tg.role = "loss"}, tensor<2xf32> {tg.role = "grad", tg.name = "h.0.attn.weight.grad"},
        tensor<2xf32> {tg.role = "grad", tg.name = "h.0.attn.bias.grad"},
        tensor<2xf32> {tg.role = "grad", tg.name = "h.0.ln_1.weight.grad"}) {
  %loss = tg.reduce sum %w dims = [0] : tensor<2xf32> -> tensor<f32>
  return %loss, %w, %b, %n : tensor<f32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// -----

// Adafactor factors the second moment of a matrix, and of each matrix of a
// batch (the last two dimensions), into row and column states, named and
// aliased as the moments; a bias keeps one unfactored state.
// ADAFACTOR-LABEL: func.func @matrices
// ADAFACTOR-SAME: %arg3: tensor<4xf32> {tg.name = "h.0.mlp.weight.exp_avg_sq_row", tg.role = "state"}, %arg4: tensor<8xf32> {tg.name = "h.0.mlp.weight.exp_avg_sq_col", tg.role = "state"}
// ADAFACTOR-SAME: %arg5: tensor<2x4xf32> {tg.name = "experts.exp_avg_sq_row", tg.role = "state"}, %arg6: tensor<2x8xf32> {tg.name = "experts.exp_avg_sq_col", tg.role = "state"}
// ADAFACTOR-SAME: %arg7: tensor<8xf32> {tg.name = "h.0.mlp.bias.exp_avg_sq", tg.role = "state"}
// ADAFACTOR-SAME: %arg8: tensor<f32> {tg.default = 1.000000e-03 : f32, tg.name = "lr", tg.role = "hyper"}, %arg9: tensor<i64> {tg.default = 1 : i64, tg.name = "step", tg.role = "hyper"}
// ADAFACTOR-SAME: -> (tensor<f32> {tg.role = "loss"}, tensor<4x8xf32> {tg.aliases = 0 : i64, tg.name = "h.0.mlp.weight", tg.role = "param"}, tensor<4xf32> {tg.aliases = 3 : i64, tg.name = "h.0.mlp.weight.exp_avg_sq_row", tg.role = "state"}, tensor<8xf32> {tg.aliases = 4 : i64, tg.name = "h.0.mlp.weight.exp_avg_sq_col", tg.role = "state"},
// ADAFACTOR-SAME: tensor<2x4x8xf32> {tg.aliases = 1 : i64, tg.name = "experts", tg.role = "param"}, tensor<2x4xf32> {tg.aliases = 5 : i64, tg.name = "experts.exp_avg_sq_row", tg.role = "state"}, tensor<2x8xf32> {tg.aliases = 6 : i64, tg.name = "experts.exp_avg_sq_col", tg.role = "state"},
// ADAFACTOR-SAME: tensor<8xf32> {tg.aliases = 2 : i64, tg.name = "h.0.mlp.bias", tg.role = "param"}, tensor<8xf32> {tg.aliases = 7 : i64, tg.name = "h.0.mlp.bias.exp_avg_sq", tg.role = "state"})
// ADAFACTOR: %[[W:[a-z_0-9]+]], %[[WS:[a-z_0-9]+]]:2 = tg.adafactor %arg0, %arg0, [%arg3, %arg4], %arg8, %arg9 decay_rate = -8.000000e-01 epsilon1 = 1.000000e-30 clip_threshold = 1.000000e+00 weight_decay = 0.000000e+00 : tensor<4x8xf32>, [tensor<4xf32>, tensor<8xf32>], tensor<f32>, tensor<i64>
// ADAFACTOR: %[[E:[a-z_0-9]+]], %[[ES:[a-z_0-9]+]]:2 = tg.adafactor %arg1, %arg1, [%arg5, %arg6], %arg8, %arg9 {{.*}} : tensor<2x4x8xf32>, [tensor<2x4xf32>, tensor<2x8xf32>], tensor<f32>, tensor<i64>
// ADAFACTOR: %[[B:[a-z_0-9]+]], %[[BS:[a-z_0-9]+]] = tg.adafactor %arg2, %arg2, [%arg7], %arg8, %arg9 {{.*}} : tensor<8xf32>, [tensor<8xf32>], tensor<f32>, tensor<i64>
// ADAFACTOR: return %{{.*}}, %[[W]], %[[WS]]#0, %[[WS]]#1, %[[E]], %[[ES]]#0, %[[ES]]#1, %[[B]], %[[BS]] :
// The options set the attributes; the bias gets no weight decay.
// ADAFACTOR-OPTS-LABEL: func.func @matrices
// ADAFACTOR-OPTS-SAME: tg.default = 0.00999999977 : f32, tg.name = "lr"
// ADAFACTOR-OPTS: tg.adafactor %arg0, {{.*}} decay_rate = -5.000000e-01 epsilon1 = 9.9999999999999995E-21 clip_threshold = 2.000000e+00 weight_decay = 1.000000e-01
// ADAFACTOR-OPTS: tg.adafactor %arg1, {{.*}} decay_rate = -5.000000e-01 epsilon1 = 9.9999999999999995E-21 clip_threshold = 2.000000e+00 weight_decay = 1.000000e-01
// ADAFACTOR-OPTS: tg.adafactor %arg2, {{.*}} decay_rate = -5.000000e-01 epsilon1 = 9.9999999999999995E-21 clip_threshold = 2.000000e+00 weight_decay = 0.000000e+00
func.func @matrices(%w: tensor<4x8xf32> {tg.role = "param", tg.name = "h.0.mlp.weight"},
                    %e: tensor<2x4x8xf32> {tg.role = "param", tg.name = "experts"},
                    %b: tensor<8xf32> {tg.role = "param", tg.name = "h.0.mlp.bias"})
    -> (tensor<f32> {tg.role = "loss"}, tensor<4x8xf32> {tg.role = "grad", tg.name = "h.0.mlp.weight.grad"},
        tensor<2x4x8xf32> {tg.role = "grad", tg.name = "experts.grad"},
        tensor<8xf32> {tg.role = "grad", tg.name = "h.0.mlp.bias.grad"}) {
  %loss = tg.reduce sum %b dims = [0] : tensor<8xf32> -> tensor<f32>
  return %loss, %w, %e, %b : tensor<f32>, tensor<4x8xf32>, tensor<2x4x8xf32>, tensor<8xf32>
}
