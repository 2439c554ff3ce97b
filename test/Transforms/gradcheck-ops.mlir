// Every differentiable op, through tg-autodiff, against central finite
// differences of the loss in the f64 interpreter (`tgc gradcheck`): one
// function per op (or per mode of an op), each with a loss that weighs the
// op's result by a random input.
// RUN: tgc gradcheck %s | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: @add {{.*}} ok
// CHECK: @sub {{.*}} ok
// CHECK: @mul {{.*}} ok
// CHECK: @div {{.*}} ok
// CHECK: @max {{.*}} ok
// CHECK: @min {{.*}} ok
// CHECK: @pow {{.*}} ok
// CHECK: @neg {{.*}} ok
// CHECK: @abs {{.*}} ok
// CHECK: @exp {{.*}} ok
// CHECK: @tanh {{.*}} ok
// CHECK: @erf {{.*}} ok
// CHECK: @sin {{.*}} ok
// CHECK: @cos {{.*}} ok
// CHECK: @sigmoid {{.*}} ok
// CHECK: @relu {{.*}} ok
// CHECK: @silu {{.*}} ok
// CHECK: @log {{.*}} ok
// CHECK: @sqrt {{.*}} ok
// CHECK: @rsqrt {{.*}} ok
// CHECK: @gelu_erf {{.*}} ok
// CHECK: @gelu_tanh {{.*}} ok
// CHECK: @select {{.*}} ok
// CHECK: @convert {{.*}} ok
// CHECK: @broadcast_in_dim {{.*}} ok
// CHECK: @reshape {{.*}} ok
// CHECK: @transpose {{.*}} ok
// CHECK: @slice {{.*}} ok
// CHECK: @pad {{.*}} ok
// CHECK: @concat {{.*}} ok
// CHECK: @reduce_sum {{.*}} ok
// CHECK: @reduce_mean {{.*}} ok
// CHECK: @reduce_mean_centered {{.*}} ok
// CHECK: @reduce_max {{.*}} ok
// CHECK: @reduce_min {{.*}} ok
// CHECK: @matmul {{.*}} ok
// CHECK: @matmul_ta {{.*}} ok
// CHECK: @matmul_tb {{.*}} ok
// CHECK: @matmul_ta_tb {{.*}} ok
// CHECK: @matmul_batched {{.*}} ok
// CHECK: @matmul_shared {{.*}} ok
// CHECK: @matmul_shared_ta {{.*}} ok
// CHECK: @embedding {{.*}} ok
// CHECK: @expert_matmul {{.*}} ok
// CHECK: @expert_matmul_transposed {{.*}} ok
// CHECK: @top_k {{.*}} ok
// CHECK: @top_k_smallest {{.*}} ok
// CHECK: @softmax {{.*}} ok
// CHECK: @log_softmax {{.*}} ok
// CHECK: @layer_norm {{.*}} ok
// CHECK: @rms_norm {{.*}} ok
// CHECK: @attention {{.*}} ok
// CHECK: @attention_causal_gqa {{.*}} ok
// CHECK: @attention_bias_trained {{.*}} ok
// CHECK: @attention_bias_mask {{.*}} ok
// CHECK: @attention_softcap {{.*}} ok
// CHECK: @attention_softcap_bias_trained {{.*}} ok
// CHECK: @attention_dropout {{.*}} ok
// CHECK: @attention_dropout_bias_trained {{.*}} ok
// CHECK: @attention_dropout_block {{.*}} ok
// CHECK: @dropout {{.*}} ok
// CHECK: @cross_entropy_mean {{.*}} ok
// CHECK: @cross_entropy_sum {{.*}} ok
// CHECK: @cross_entropy_mean_ignore {{.*}} ok

// tg.add
func.func @add(
    %a: tensor<3x4xf32> {tg.role = "param", tg.name = "a"},
    %b: tensor<3x4xf32> {tg.role = "param", tg.name = "b"},
    %c: tensor<3x4xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y = tg.add %a, %b : tensor<3x4xf32>
  %w = tg.mul %y, %c : tensor<3x4xf32>
  %loss = tg.reduce sum %w dims = [0, 1] : tensor<3x4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.sub
func.func @sub(
    %a: tensor<3x4xf32> {tg.role = "param", tg.name = "a"},
    %b: tensor<3x4xf32> {tg.role = "param", tg.name = "b"},
    %c: tensor<3x4xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y = tg.sub %a, %b : tensor<3x4xf32>
  %w = tg.mul %y, %c : tensor<3x4xf32>
  %loss = tg.reduce sum %w dims = [0, 1] : tensor<3x4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.mul
func.func @mul(
    %a: tensor<3x4xf32> {tg.role = "param", tg.name = "a"},
    %b: tensor<3x4xf32> {tg.role = "param", tg.name = "b"},
    %c: tensor<3x4xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y = tg.mul %a, %b : tensor<3x4xf32>
  %w = tg.mul %y, %c : tensor<3x4xf32>
  %loss = tg.reduce sum %w dims = [0, 1] : tensor<3x4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.div
func.func @div(
    %a: tensor<3x4xf32> {tg.role = "param", tg.name = "a"},
    %b: tensor<3x4xf32> {tg.role = "param", tg.name = "b"},
    %c: tensor<3x4xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %e = tg.exp %b : tensor<3x4xf32>
  %y = tg.div %a, %e : tensor<3x4xf32>
  %w = tg.mul %y, %c : tensor<3x4xf32>
  %loss = tg.reduce sum %w dims = [0, 1] : tensor<3x4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.max
func.func @max(
    %a: tensor<3x4xf32> {tg.role = "param", tg.name = "a"},
    %b: tensor<3x4xf32> {tg.role = "param", tg.name = "b"},
    %c: tensor<3x4xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y = tg.max %a, %b : tensor<3x4xf32>
  %w = tg.mul %y, %c : tensor<3x4xf32>
  %loss = tg.reduce sum %w dims = [0, 1] : tensor<3x4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.min
func.func @min(
    %a: tensor<3x4xf32> {tg.role = "param", tg.name = "a"},
    %b: tensor<3x4xf32> {tg.role = "param", tg.name = "b"},
    %c: tensor<3x4xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y = tg.min %a, %b : tensor<3x4xf32>
  %w = tg.mul %y, %c : tensor<3x4xf32>
  %loss = tg.reduce sum %w dims = [0, 1] : tensor<3x4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.pow on a positive base
func.func @pow(
    %a: tensor<3x4xf32> {tg.role = "param", tg.name = "a"},
    %b: tensor<3x4xf32> {tg.role = "param", tg.name = "b"},
    %c: tensor<3x4xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %e = tg.exp %a : tensor<3x4xf32>
  %y = tg.pow %e, %b : tensor<3x4xf32>
  %w = tg.mul %y, %c : tensor<3x4xf32>
  %loss = tg.reduce sum %w dims = [0, 1] : tensor<3x4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.neg
func.func @neg(
    %a: tensor<3x4xf32> {tg.role = "param", tg.name = "a"},
    %c: tensor<3x4xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y = tg.neg %a : tensor<3x4xf32>
  %w = tg.mul %y, %c : tensor<3x4xf32>
  %loss = tg.reduce sum %w dims = [0, 1] : tensor<3x4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.abs
func.func @abs(
    %a: tensor<3x4xf32> {tg.role = "param", tg.name = "a"},
    %c: tensor<3x4xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y = tg.abs %a : tensor<3x4xf32>
  %w = tg.mul %y, %c : tensor<3x4xf32>
  %loss = tg.reduce sum %w dims = [0, 1] : tensor<3x4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.exp
func.func @exp(
    %a: tensor<3x4xf32> {tg.role = "param", tg.name = "a"},
    %c: tensor<3x4xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y = tg.exp %a : tensor<3x4xf32>
  %w = tg.mul %y, %c : tensor<3x4xf32>
  %loss = tg.reduce sum %w dims = [0, 1] : tensor<3x4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.tanh
func.func @tanh(
    %a: tensor<3x4xf32> {tg.role = "param", tg.name = "a"},
    %c: tensor<3x4xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y = tg.tanh %a : tensor<3x4xf32>
  %w = tg.mul %y, %c : tensor<3x4xf32>
  %loss = tg.reduce sum %w dims = [0, 1] : tensor<3x4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.erf
func.func @erf(
    %a: tensor<3x4xf32> {tg.role = "param", tg.name = "a"},
    %c: tensor<3x4xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y = tg.erf %a : tensor<3x4xf32>
  %w = tg.mul %y, %c : tensor<3x4xf32>
  %loss = tg.reduce sum %w dims = [0, 1] : tensor<3x4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.sin
func.func @sin(
    %a: tensor<3x4xf32> {tg.role = "param", tg.name = "a"},
    %c: tensor<3x4xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y = tg.sin %a : tensor<3x4xf32>
  %w = tg.mul %y, %c : tensor<3x4xf32>
  %loss = tg.reduce sum %w dims = [0, 1] : tensor<3x4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.cos
func.func @cos(
    %a: tensor<3x4xf32> {tg.role = "param", tg.name = "a"},
    %c: tensor<3x4xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y = tg.cos %a : tensor<3x4xf32>
  %w = tg.mul %y, %c : tensor<3x4xf32>
  %loss = tg.reduce sum %w dims = [0, 1] : tensor<3x4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.sigmoid
func.func @sigmoid(
    %a: tensor<3x4xf32> {tg.role = "param", tg.name = "a"},
    %c: tensor<3x4xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y = tg.sigmoid %a : tensor<3x4xf32>
  %w = tg.mul %y, %c : tensor<3x4xf32>
  %loss = tg.reduce sum %w dims = [0, 1] : tensor<3x4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.relu
func.func @relu(
    %a: tensor<3x4xf32> {tg.role = "param", tg.name = "a"},
    %c: tensor<3x4xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y = tg.relu %a : tensor<3x4xf32>
  %w = tg.mul %y, %c : tensor<3x4xf32>
  %loss = tg.reduce sum %w dims = [0, 1] : tensor<3x4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.silu
func.func @silu(
    %a: tensor<3x4xf32> {tg.role = "param", tg.name = "a"},
    %c: tensor<3x4xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y = tg.silu %a : tensor<3x4xf32>
  %w = tg.mul %y, %c : tensor<3x4xf32>
  %loss = tg.reduce sum %w dims = [0, 1] : tensor<3x4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.log on a positive operand
func.func @log(
    %a: tensor<3x4xf32> {tg.role = "param", tg.name = "a"},
    %c: tensor<3x4xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %e = tg.exp %a : tensor<3x4xf32>
  %y = tg.log %e : tensor<3x4xf32>
  %w = tg.mul %y, %c : tensor<3x4xf32>
  %loss = tg.reduce sum %w dims = [0, 1] : tensor<3x4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.sqrt on a positive operand
func.func @sqrt(
    %a: tensor<3x4xf32> {tg.role = "param", tg.name = "a"},
    %c: tensor<3x4xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %e = tg.exp %a : tensor<3x4xf32>
  %y = tg.sqrt %e : tensor<3x4xf32>
  %w = tg.mul %y, %c : tensor<3x4xf32>
  %loss = tg.reduce sum %w dims = [0, 1] : tensor<3x4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.rsqrt on a positive operand
func.func @rsqrt(
    %a: tensor<3x4xf32> {tg.role = "param", tg.name = "a"},
    %c: tensor<3x4xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %e = tg.exp %a : tensor<3x4xf32>
  %y = tg.rsqrt %e : tensor<3x4xf32>
  %w = tg.mul %y, %c : tensor<3x4xf32>
  %loss = tg.reduce sum %w dims = [0, 1] : tensor<3x4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.gelu erf (its backward is tg.gelu_grad)
func.func @gelu_erf(
    %a: tensor<3x4xf32> {tg.role = "param", tg.name = "a"},
    %c: tensor<3x4xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y = tg.gelu erf %a : tensor<3x4xf32>
  %w = tg.mul %y, %c : tensor<3x4xf32>
  %loss = tg.reduce sum %w dims = [0, 1] : tensor<3x4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.gelu tanh (its backward is tg.gelu_grad)
func.func @gelu_tanh(
    %a: tensor<3x4xf32> {tg.role = "param", tg.name = "a"},
    %c: tensor<3x4xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y = tg.gelu tanh %a : tensor<3x4xf32>
  %w = tg.mul %y, %c : tensor<3x4xf32>
  %loss = tg.reduce sum %w dims = [0, 1] : tensor<3x4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.select routes the gradient by the predicate
func.func @select(
    %a: tensor<3x4xf32> {tg.role = "param", tg.name = "a"},
    %b: tensor<3x4xf32> {tg.role = "param", tg.name = "b"},
    %c: tensor<3x4xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %p = tg.compare gt, %a, %b : tensor<3x4xf32>
  %y = tg.select %p, %a, %b : tensor<3x4xi1>, tensor<3x4xf32>
  %w = tg.mul %y, %c : tensor<3x4xf32>
  %loss = tg.reduce sum %w dims = [0, 1] : tensor<3x4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.convert to f64 and back
func.func @convert(
    %a: tensor<3x4xf32> {tg.role = "param", tg.name = "a"},
    %c: tensor<3x4xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %d = tg.convert %a : tensor<3x4xf32> -> tensor<3x4xf64>
  %e = tg.exp %d : tensor<3x4xf64>
  %y = tg.convert %e : tensor<3x4xf64> -> tensor<3x4xf32>
  %w = tg.mul %y, %c : tensor<3x4xf32>
  %loss = tg.reduce sum %w dims = [0, 1] : tensor<3x4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.broadcast_in_dim with a new and a repeated dimension
func.func @broadcast_in_dim(
    %a: tensor<3x1xf32> {tg.role = "param", tg.name = "a"},
    %c: tensor<3x2x4xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y = tg.broadcast_in_dim %a dims = [0, 2] : tensor<3x1xf32> -> tensor<3x2x4xf32>
  %w = tg.mul %y, %c : tensor<3x2x4xf32>
  %loss = tg.reduce sum %w dims = [0, 1, 2] : tensor<3x2x4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.reshape
func.func @reshape(
    %a: tensor<3x4xf32> {tg.role = "param", tg.name = "a"},
    %c: tensor<2x6xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y = tg.reshape %a : tensor<3x4xf32> -> tensor<2x6xf32>
  %w = tg.mul %y, %c : tensor<2x6xf32>
  %loss = tg.reduce sum %w dims = [0, 1] : tensor<2x6xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.transpose
func.func @transpose(
    %a: tensor<2x3x4xf32> {tg.role = "param", tg.name = "a"},
    %c: tensor<4x2x3xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y = tg.transpose %a perm = [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %w = tg.mul %y, %c : tensor<4x2x3xf32>
  %loss = tg.reduce sum %w dims = [0, 1, 2] : tensor<4x2x3xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.slice with a stride (its backward is tg.pad)
func.func @slice(
    %a: tensor<5x6xf32> {tg.role = "param", tg.name = "a"},
    %c: tensor<2x2xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y = tg.slice %a [1:5:2, 0:5:3] : tensor<5x6xf32> -> tensor<2x2xf32>
  %w = tg.mul %y, %c : tensor<2x2xf32>
  %loss = tg.reduce sum %w dims = [0, 1] : tensor<2x2xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.pad (its backward is tg.slice)
func.func @pad(
    %a: tensor<2x3xf32> {tg.role = "param", tg.name = "a"},
    %c: tensor<3x7xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y = tg.pad %a low = [1, 0] high = [0, 2] interior = [0, 1] : tensor<2x3xf32> -> tensor<3x7xf32>
  %w = tg.mul %y, %c : tensor<3x7xf32>
  %loss = tg.reduce sum %w dims = [0, 1] : tensor<3x7xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.concat
func.func @concat(
    %a: tensor<2x3xf32> {tg.role = "param", tg.name = "a"},
    %b: tensor<2x2xf32> {tg.role = "param", tg.name = "b"},
    %c: tensor<2x5xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y = tg.concat %a, %b dim = 1 : (tensor<2x3xf32>, tensor<2x2xf32>) -> tensor<2x5xf32>
  %w = tg.mul %y, %c : tensor<2x5xf32>
  %loss = tg.reduce sum %w dims = [0, 1] : tensor<2x5xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.reduce sum
func.func @reduce_sum(
    %a: tensor<3x4x5xf32> {tg.role = "param", tg.name = "a"},
    %c: tensor<4xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y = tg.reduce sum %a dims = [0, 2] : tensor<3x4x5xf32> -> tensor<4xf32>
  %w = tg.mul %y, %c : tensor<4xf32>
  %loss = tg.reduce sum %w dims = [0] : tensor<4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.reduce mean
func.func @reduce_mean(
    %a: tensor<3x4x5xf32> {tg.role = "param", tg.name = "a"},
    %c: tensor<4xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y = tg.reduce mean %a dims = [0, 2] : tensor<3x4x5xf32> -> tensor<4xf32>
  %w = tg.mul %y, %c : tensor<4xf32>
  %loss = tg.reduce sum %w dims = [0] : tensor<4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.reduce mean over 5 rows, subtracted (a batch norm's centering): the
// bias's gradient is exactly zero, which the backward's division by 5
// keeps (a product with 0.2 rounded to f32 made it 1e-8, relative error 1).
func.func @reduce_mean_centered(
    %x: tensor<5x6xf32> {tg.role = "param", tg.name = "x"},
    %b: tensor<6xf32> {tg.role = "param", tg.name = "b"},
    %c: tensor<5x6xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %bb = tg.broadcast_in_dim %b dims = [1] : tensor<6xf32> -> tensor<5x6xf32>
  %h = tg.add %x, %bb : tensor<5x6xf32>
  %m = tg.reduce mean %h dims = [0] : tensor<5x6xf32> -> tensor<6xf32>
  %mb = tg.broadcast_in_dim %m dims = [1] : tensor<6xf32> -> tensor<5x6xf32>
  %d = tg.sub %h, %mb : tensor<5x6xf32>
  %w = tg.mul %d, %c : tensor<5x6xf32>
  %loss = tg.reduce sum %w dims = [0, 1] : tensor<5x6xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.reduce max
func.func @reduce_max(
    %a: tensor<3x4x5xf32> {tg.role = "param", tg.name = "a"},
    %c: tensor<4xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y = tg.reduce max %a dims = [0, 2] : tensor<3x4x5xf32> -> tensor<4xf32>
  %w = tg.mul %y, %c : tensor<4xf32>
  %loss = tg.reduce sum %w dims = [0] : tensor<4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.reduce min
func.func @reduce_min(
    %a: tensor<3x4x5xf32> {tg.role = "param", tg.name = "a"},
    %c: tensor<4xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y = tg.reduce min %a dims = [0, 2] : tensor<3x4x5xf32> -> tensor<4xf32>
  %w = tg.mul %y, %c : tensor<4xf32>
  %loss = tg.reduce sum %w dims = [0] : tensor<4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.matmul
func.func @matmul(
    %a: tensor<3x5xf32> {tg.role = "param", tg.name = "a"},
    %b: tensor<5x4xf32> {tg.role = "param", tg.name = "b"},
    %c: tensor<3x4xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y = tg.matmul %a, %b : (tensor<3x5xf32>, tensor<5x4xf32>) -> tensor<3x4xf32>
  %w = tg.mul %y, %c : tensor<3x4xf32>
  %loss = tg.reduce sum %w dims = [0, 1] : tensor<3x4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.matmul transpose_a
func.func @matmul_ta(
    %a: tensor<5x3xf32> {tg.role = "param", tg.name = "a"},
    %b: tensor<5x4xf32> {tg.role = "param", tg.name = "b"},
    %c: tensor<3x4xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y = tg.matmul %a, %b transpose_a : (tensor<5x3xf32>, tensor<5x4xf32>) -> tensor<3x4xf32>
  %w = tg.mul %y, %c : tensor<3x4xf32>
  %loss = tg.reduce sum %w dims = [0, 1] : tensor<3x4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.matmul transpose_b
func.func @matmul_tb(
    %a: tensor<3x5xf32> {tg.role = "param", tg.name = "a"},
    %b: tensor<4x5xf32> {tg.role = "param", tg.name = "b"},
    %c: tensor<3x4xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y = tg.matmul %a, %b transpose_b : (tensor<3x5xf32>, tensor<4x5xf32>) -> tensor<3x4xf32>
  %w = tg.mul %y, %c : tensor<3x4xf32>
  %loss = tg.reduce sum %w dims = [0, 1] : tensor<3x4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.matmul transpose_a transpose_b
func.func @matmul_ta_tb(
    %a: tensor<5x3xf32> {tg.role = "param", tg.name = "a"},
    %b: tensor<4x5xf32> {tg.role = "param", tg.name = "b"},
    %c: tensor<3x4xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y = tg.matmul %a, %b transpose_a transpose_b : (tensor<5x3xf32>, tensor<4x5xf32>) -> tensor<3x4xf32>
  %w = tg.mul %y, %c : tensor<3x4xf32>
  %loss = tg.reduce sum %w dims = [0, 1] : tensor<3x4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.matmul with equal batch dimensions
func.func @matmul_batched(
    %a: tensor<2x3x5xf32> {tg.role = "param", tg.name = "a"},
    %b: tensor<2x5x4xf32> {tg.role = "param", tg.name = "b"},
    %c: tensor<2x3x4xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y = tg.matmul %a, %b : (tensor<2x3x5xf32>, tensor<2x5x4xf32>) -> tensor<2x3x4xf32>
  %w = tg.mul %y, %c : tensor<2x3x4xf32>
  %loss = tg.reduce sum %w dims = [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.matmul of a batch by a shared matrix (a linear layer)
func.func @matmul_shared(
    %a: tensor<2x3x5xf32> {tg.role = "param", tg.name = "a"},
    %b: tensor<5x4xf32> {tg.role = "param", tg.name = "b"},
    %c: tensor<2x3x4xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y = tg.matmul %a, %b : (tensor<2x3x5xf32>, tensor<5x4xf32>) -> tensor<2x3x4xf32>
  %w = tg.mul %y, %c : tensor<2x3x4xf32>
  %loss = tg.reduce sum %w dims = [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.matmul transpose_a with a shared matrix
func.func @matmul_shared_ta(
    %a: tensor<2x5x3xf32> {tg.role = "param", tg.name = "a"},
    %b: tensor<5x4xf32> {tg.role = "param", tg.name = "b"},
    %c: tensor<2x3x4xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y = tg.matmul %a, %b transpose_a : (tensor<2x5x3xf32>, tensor<5x4xf32>) -> tensor<2x3x4xf32>
  %w = tg.mul %y, %c : tensor<2x3x4xf32>
  %loss = tg.reduce sum %w dims = [0, 1, 2] : tensor<2x3x4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.embedding with repeated ids (its backward is tg.embedding_grad)
func.func @embedding(
    %table: tensor<6x3xf32> {tg.role = "param", tg.name = "table"},
    %ids: tensor<2x4xi64> {tg.role = "input", tg.name = "ids"},
    %c: tensor<2x4x3xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y = tg.embedding %table[%ids] : (tensor<6x3xf32>, tensor<2x4xi64>) -> tensor<2x4x3xf32>
  %w = tg.mul %y, %c : tensor<2x4x3xf32>
  %loss = tg.reduce sum %w dims = [0, 1, 2] : tensor<2x4x3xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.expert_matmul with repeated ids and an expert no row names (its
// matrix's gradient is zero): the input's gradient through the transposed
// matrices, the matrices' through tg.expert_matmul_grad.
func.func @expert_matmul(
    %x: tensor<5x3xf32> {tg.role = "param", tg.name = "x"},
    %w: tensor<4x3x2xf32> {tg.role = "param", tg.name = "w"},
    %c: tensor<5x2xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %ids = tg.constant dense<[2, 0, 2, 3, 0]> : tensor<5xi64>
  %y = tg.expert_matmul %x, %w[%ids] : (tensor<5x3xf32>, tensor<4x3x2xf32>, tensor<5xi64>) -> tensor<5x2xf32>
  %p = tg.mul %y, %c : tensor<5x2xf32>
  %loss = tg.reduce sum %p dims = [0, 1] : tensor<5x2xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// The [E, O, H] layout, rows of rank 2, i32 ids.
func.func @expert_matmul_transposed(
    %x: tensor<2x3x4xf32> {tg.role = "param", tg.name = "x"},
    %w: tensor<3x2x4xf32> {tg.role = "param", tg.name = "w"},
    %c: tensor<2x3x2xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %ids = tg.constant dense<[[1, 1, 0], [2, 1, 0]]> : tensor<2x3xi32>
  %y = tg.expert_matmul %x, %w[%ids] transpose_b : (tensor<2x3x4xf32>, tensor<3x2x4xf32>, tensor<2x3xi32>) -> tensor<2x3x2xf32>
  %p = tg.mul %y, %c : tensor<2x3x2xf32>
  %loss = tg.reduce sum %p dims = [0, 1, 2] : tensor<2x3x2xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.top_k: the values' gradient goes back to the positions they came from
// (the indices have none; here they also feed the loss, through a convert).
// Offsets one apart keep the ranking fixed under the differences' steps
// (the parameters alone are 0.02 apart: a step would reorder them).
func.func @top_k(
    %p: tensor<3x2x5xf32> {tg.role = "param", tg.name = "x"},
    %c: tensor<3x2x3xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %o = tg.constant dense<[[3.0, 0.0, 4.0, 1.0, 2.0], [0.0, 4.0, 1.0, 3.0, 2.0]]> : tensor<2x5xf32>
  %ob = tg.broadcast_in_dim %o dims = [1, 2] : tensor<2x5xf32> -> tensor<3x2x5xf32>
  %x = tg.add %p, %ob : tensor<3x2x5xf32>
  %v, %i = tg.top_k %x k = 3 : tensor<3x2x5xf32> -> tensor<3x2x3xf32>, tensor<3x2x3xi64>
  %f = tg.convert %i : tensor<3x2x3xi64> -> tensor<3x2x3xf32>
  %s = tg.add %v, %f : tensor<3x2x3xf32>
  %w = tg.mul %s, %c : tensor<3x2x3xf32>
  %loss = tg.reduce sum %w dims = [0, 1, 2] : tensor<3x2x3xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.top_k smallest: ascending values.
func.func @top_k_smallest(
    %p: tensor<4x6xf32> {tg.role = "param", tg.name = "x"},
    %c: tensor<4x2xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %o = tg.constant dense<[5.0, 1.0, 3.0, 0.0, 2.0, 4.0]> : tensor<6xf32>
  %ob = tg.broadcast_in_dim %o dims = [1] : tensor<6xf32> -> tensor<4x6xf32>
  %x = tg.add %p, %ob : tensor<4x6xf32>
  %v, %i = tg.top_k %x k = 2 smallest : tensor<4x6xf32> -> tensor<4x2xf32>, tensor<4x2xi64>
  %w = tg.mul %v, %c : tensor<4x2xf32>
  %loss = tg.reduce sum %w dims = [0, 1] : tensor<4x2xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.softmax on a middle dimension (tg.softmax_grad)
func.func @softmax(
    %a: tensor<2x5x3xf32> {tg.role = "param", tg.name = "a"},
    %c: tensor<2x5x3xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y = tg.softmax %a dim = 1 : tensor<2x5x3xf32>
  %w = tg.mul %y, %c : tensor<2x5x3xf32>
  %loss = tg.reduce sum %w dims = [0, 1, 2] : tensor<2x5x3xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.log_softmax
func.func @log_softmax(
    %a: tensor<2x5x3xf32> {tg.role = "param", tg.name = "a"},
    %c: tensor<2x5x3xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y = tg.log_softmax %a dim = 1 : tensor<2x5x3xf32>
  %w = tg.mul %y, %c : tensor<2x5x3xf32>
  %loss = tg.reduce sum %w dims = [0, 1, 2] : tensor<2x5x3xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.layer_norm (tg.layer_norm_grad)
func.func @layer_norm(
    %x: tensor<3x8xf32> {tg.role = "param", tg.name = "x"},
    %g: tensor<8xf32> {tg.role = "param", tg.name = "g"},
    %b: tensor<8xf32> {tg.role = "param", tg.name = "b"},
    %c: tensor<3x8xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y, %m, %r = tg.layer_norm %x, %g, %b epsilon = 1.000000e-05 : (tensor<3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<3x8xf32>, tensor<3xf32>, tensor<3xf32>)
  %w = tg.mul %y, %c : tensor<3x8xf32>
  %loss = tg.reduce sum %w dims = [0, 1] : tensor<3x8xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.rms_norm (tg.rms_norm_grad)
func.func @rms_norm(
    %x: tensor<3x8xf32> {tg.role = "param", tg.name = "x"},
    %g: tensor<8xf32> {tg.role = "param", tg.name = "g"},
    %c: tensor<3x8xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y, %r = tg.rms_norm %x, %g epsilon = 1.000000e-06 : (tensor<3x8xf32>, tensor<8xf32>) -> (tensor<3x8xf32>, tensor<3xf32>)
  %w = tg.mul %y, %c : tensor<3x8xf32>
  %loss = tg.reduce sum %w dims = [0, 1] : tensor<3x8xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.attention (tg.attention_grad)
func.func @attention(
    %q: tensor<2x2x4x8xf32> {tg.role = "param", tg.name = "q"},
    %k: tensor<2x2x5x8xf32> {tg.role = "param", tg.name = "k"},
    %v: tensor<2x2x5x6xf32> {tg.role = "param", tg.name = "v"},
    %c: tensor<2x2x4x6xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y, %lse = tg.attention %q, %k, %v : (tensor<2x2x4x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x6xf32>) -> (tensor<2x2x4x6xf32>, tensor<2x2x4xf32>)
  %w = tg.mul %y, %c : tensor<2x2x4x6xf32>
  %loss = tg.reduce sum %w dims = [0, 1, 2, 3] : tensor<2x2x4x6xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// causal grouped-query tg.attention with a scale, Sq < Sk
func.func @attention_causal_gqa(
    %q: tensor<1x4x3x8xf32> {tg.role = "param", tg.name = "q"},
    %k: tensor<1x2x5x8xf32> {tg.role = "param", tg.name = "k"},
    %v: tensor<1x2x5x8xf32> {tg.role = "param", tg.name = "v"},
    %c: tensor<1x4x3x8xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y, %lse = tg.attention %q, %k, %v causal scale = 5.000000e-01 : (tensor<1x4x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>) -> (tensor<1x4x3x8xf32>, tensor<1x4x3xf32>)
  %w = tg.mul %y, %c : tensor<1x4x3x8xf32>
  %loss = tg.reduce sum %w dims = [0, 1, 2, 3] : tensor<1x4x3x8xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.attention with a trained bias [1, H, Sq, Sk] (broadcast over the
// batch), grouped-query heads, causal: the bias's gradient is built from
// tg ops (TGDifferentiation.cpp)
func.func @attention_bias_trained(
    %q: tensor<2x4x4x8xf32> {tg.role = "param", tg.name = "q"},
    %k: tensor<2x2x5x8xf32> {tg.role = "param", tg.name = "k"},
    %v: tensor<2x2x5x6xf32> {tg.role = "param", tg.name = "v"},
    %b: tensor<1x4x4x5xf32> {tg.role = "param", tg.name = "b"},
    %c: tensor<2x4x4x6xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y, %lse = tg.attention %q, %k, %v bias %b causal : (tensor<2x4x4x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x6xf32>, tensor<1x4x4x5xf32>) -> (tensor<2x4x4x6xf32>, tensor<2x4x4xf32>)
  %w = tg.mul %y, %c : tensor<2x4x4x6xf32>
  %loss = tg.reduce sum %w dims = [0, 1, 2, 3] : tensor<2x4x4x6xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.attention with a constant mask [B, 1, Sq, Sk]: keys hidden by -inf
// or -1e4, a query row hidden whole by -inf (zeros), two whole by -1e4 and
// -2e4 (a softmax of scores so large that the logsumexp's f32 spacing is
// too coarse: the backward rebuilds these rows; under f32's lowest value
// a score no longer depends on q and k at all, which finite differences
// cannot check: Import/hf-llama.test's mask variant checks it against
// PyTorch's autograd)
func.func @attention_bias_mask(
    %q: tensor<2x2x4x8xf32> {tg.role = "param", tg.name = "q"},
    %k: tensor<2x2x5x8xf32> {tg.role = "param", tg.name = "k"},
    %v: tensor<2x2x5x6xf32> {tg.role = "param", tg.name = "v"},
    %c: tensor<2x2x4x6xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %m = tg.constant dense<[[[[0.0, 0.0, 0xFF800000, 0.0, 0xFF800000],
                            [0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000],
                            [0.0, 1.5, -2.0, 0.0, 0.0],
                            [-2.0e4, -2.0e4, 0xFF800000, -2.0e4, -2.0e4]]],
                          [[[-1.0e4, -1.0e4, -1.0e4, -1.0e4, -1.0e4],
                            [0.0, 0.0, 0.0, 0.0, 0.0],
                            [-1.0e4, 0.0, 0.0, -1.0e4, 0.0],
                            [0.0, 0xFF800000, 0.0, 0.0, 0.0]]]]> : tensor<2x1x4x5xf32>
  %y, %lse = tg.attention %q, %k, %v bias %m : (tensor<2x2x4x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x6xf32>, tensor<2x1x4x5xf32>) -> (tensor<2x2x4x6xf32>, tensor<2x2x4xf32>)
  %w = tg.mul %y, %c : tensor<2x2x4x6xf32>
  %loss = tg.reduce sum %w dims = [0, 1, 2, 3] : tensor<2x2x4x6xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// soft-capped, causal, grouped-query tg.attention with a scale large
// enough (the random parameters are small) that the cap (1.5) bends the
// scores: the backward's ds goes through the cap's slope 1 - tanh^2
func.func @attention_softcap(
    %q: tensor<1x4x3x8xf32> {tg.role = "param", tg.name = "q"},
    %k: tensor<1x2x5x8xf32> {tg.role = "param", tg.name = "k"},
    %v: tensor<1x2x5x8xf32> {tg.role = "param", tg.name = "v"},
    %c: tensor<1x4x3x8xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y, %lse = tg.attention %q, %k, %v causal scale = 1.000000e+03 softcap = 1.500000e+00 : (tensor<1x4x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>) -> (tensor<1x4x3x8xf32>, tensor<1x4x3xf32>)
  %w = tg.mul %y, %c : tensor<1x4x3x8xf32>
  %loss = tg.reduce sum %w dims = [0, 1, 2, 3] : tensor<1x4x3x8xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// a trained bias added after the soft cap: its gradient (built from tg
// ops) rebuilds the capped scores
func.func @attention_softcap_bias_trained(
    %q: tensor<2x2x4x8xf32> {tg.role = "param", tg.name = "q"},
    %k: tensor<2x2x5x8xf32> {tg.role = "param", tg.name = "k"},
    %v: tensor<2x2x5x6xf32> {tg.role = "param", tg.name = "v"},
    %b: tensor<1x2x4x5xf32> {tg.role = "param", tg.name = "b"},
    %c: tensor<2x2x4x6xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y, %lse = tg.attention %q, %k, %v bias %b scale = 8.000000e+02 softcap = 2.000000e+00 : (tensor<2x2x4x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x6xf32>, tensor<1x2x4x5xf32>) -> (tensor<2x2x4x6xf32>, tensor<2x2x4xf32>)
  %w = tg.mul %y, %c : tensor<2x2x4x6xf32>
  %loss = tg.reduce sum %w dims = [0, 1, 2, 3] : tensor<2x2x4x6xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// causal, grouped-query tg.attention with dropout of its probabilities:
// the backward regenerates the mask (dv from the dropped probabilities, dp
// through the mask); a scale large enough that the probabilities differ
func.func @attention_dropout(
    %q: tensor<1x4x3x8xf32> {tg.role = "param", tg.name = "q"},
    %k: tensor<1x2x5x8xf32> {tg.role = "param", tg.name = "k"},
    %v: tensor<1x2x5x8xf32> {tg.role = "param", tg.name = "v"},
    %seed: tensor<i64> {tg.role = "hyper", tg.name = "seed"},
    %c: tensor<1x4x3x8xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y, %lse = tg.attention %q, %k, %v causal scale = 3.000000e+02 dropout = 4.000000e-01 seed %seed stream = 5 : (tensor<1x4x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>, tensor<i64>) -> (tensor<1x4x3x8xf32>, tensor<1x4x3xf32>)
  %w = tg.mul %y, %c : tensor<1x4x3x8xf32>
  %loss = tg.reduce sum %w dims = [0, 1, 2, 3] : tensor<1x4x3x8xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// a trained bias under dropout: its gradient (built from tg ops) takes dp
// through the same mask (a tg.dropout of the same seed and stream)
func.func @attention_dropout_bias_trained(
    %q: tensor<2x2x4x8xf32> {tg.role = "param", tg.name = "q"},
    %k: tensor<2x2x5x8xf32> {tg.role = "param", tg.name = "k"},
    %v: tensor<2x2x5x6xf32> {tg.role = "param", tg.name = "v"},
    %b: tensor<1x2x4x5xf32> {tg.role = "param", tg.name = "b"},
    %seed: tensor<i64> {tg.role = "hyper", tg.name = "seed"},
    %c: tensor<2x2x4x6xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y, %lse = tg.attention %q, %k, %v bias %b scale = 3.000000e+02 dropout = 3.000000e-01 seed %seed stream = 2 : (tensor<2x2x4x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x6xf32>, tensor<1x2x4x5xf32>, tensor<i64>) -> (tensor<2x2x4x6xf32>, tensor<2x2x4xf32>)
  %w = tg.mul %y, %c : tensor<2x2x4x6xf32>
  %loss = tg.reduce sum %w dims = [0, 1, 2, 3] : tensor<2x2x4x6xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// a device's block of the heads (global_shape and offset, as tg-partition
// writes them): the mask is the whole tensor's, read where the block lies
func.func @attention_dropout_block(
    %q: tensor<1x2x4x8xf32> {tg.role = "param", tg.name = "q"},
    %k: tensor<1x2x4x8xf32> {tg.role = "param", tg.name = "k"},
    %v: tensor<1x2x4x8xf32> {tg.role = "param", tg.name = "v"},
    %seed: tensor<i64> {tg.role = "hyper", tg.name = "seed"},
    %c: tensor<1x2x4x8xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %offset = tg.constant dense<32> : tensor<i64>
  %y, %lse = tg.attention %q, %k, %v scale = 3.000000e+02 dropout = 5.000000e-01 seed %seed offset %offset stream = 1 of [2, 4, 4, 4] : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<i64>, tensor<i64>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4xf32>)
  %w = tg.mul %y, %c : tensor<1x2x4x8xf32>
  %loss = tg.reduce sum %w dims = [0, 1, 2, 3] : tensor<1x2x4x8xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.dropout: the backward replays the mask
func.func @dropout(
    %a: tensor<4x8xf32> {tg.role = "param", tg.name = "a"},
    %seed: tensor<i64> {tg.role = "hyper", tg.name = "seed"},
    %c: tensor<4x8xf32> {tg.role = "input", tg.name = "c"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y = tg.dropout %a, %seed rate = 3.000000e-01 stream = 2 : tensor<4x8xf32>, tensor<i64>
  %w = tg.mul %y, %c : tensor<4x8xf32>
  %loss = tg.reduce sum %w dims = [0, 1] : tensor<4x8xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// tg.cross_entropy mean (tg.cross_entropy_grad)
func.func @cross_entropy_mean(
    %logits: tensor<6x4xf32> {tg.role = "param", tg.name = "logits"},
    %labels: tensor<6xi64> {tg.role = "label", tg.name = "labels"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %loss, %lse = tg.cross_entropy mean %logits, %labels : (tensor<6x4xf32>, tensor<6xi64>) -> (tensor<f32>, tensor<6xf32>)
  return %loss : tensor<f32>
}

// tg.cross_entropy sum (tg.cross_entropy_grad)
func.func @cross_entropy_sum(
    %logits: tensor<6x4xf32> {tg.role = "param", tg.name = "logits"},
    %labels: tensor<6xi64> {tg.role = "label", tg.name = "labels"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %loss, %lse = tg.cross_entropy sum %logits, %labels : (tensor<6x4xf32>, tensor<6xi64>) -> (tensor<f32>, tensor<6xf32>)
  return %loss : tensor<f32>
}

// tg.cross_entropy mean ignore_index = 1 (tg.cross_entropy_grad)
func.func @cross_entropy_mean_ignore(
    %logits: tensor<6x4xf32> {tg.role = "param", tg.name = "logits"},
    %labels: tensor<6xi64> {tg.role = "label", tg.name = "labels"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %loss, %lse = tg.cross_entropy mean %logits, %labels ignore_index = 1 : (tensor<6x4xf32>, tensor<6xi64>) -> (tensor<f32>, tensor<6xf32>)
  return %loss : tensor<f32>
}
