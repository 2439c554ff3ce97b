// tg-raise keeps the numbers: each function is run on the interpreter before
// and after raising, on the same random inputs, and the results must agree
// within float32 rounding of the different evaluation orders.
// RUN: tgc-opt %s --tg-raise -o %t.mlir
// RUN: FileCheck %s --check-prefix=RAISED < %t.mlir
// RUN: tgc run --compare %s %t.mlir --entry layer_norm --random-inputs 1 --rtol 1e-5 --atol 1e-5 | FileCheck %s
// RUN: tgc run --compare %s %t.mlir --entry rms_norm --random-inputs 2 --rtol 1e-5 --atol 1e-5 | FileCheck %s
// RUN: tgc run --compare %s %t.mlir --entry gelu_erf --random-inputs 3 --rtol 1e-5 --atol 1e-6 | FileCheck %s
// RUN: tgc run --compare %s %t.mlir --entry gelu_tanh --random-inputs 4 --rtol 1e-5 --atol 1e-6 | FileCheck %s
// RUN: tgc run --compare %s %t.mlir --entry silu --random-inputs 5 --rtol 1e-5 --atol 1e-6 | FileCheck %s
// RUN: tgc run --compare %s %t.mlir --entry attention_causal --random-inputs 6 --rtol 1e-5 --atol 1e-6 | FileCheck %s
// RUN: tgc run --compare %s %t.mlir --entry attention_gqa_additive --random-inputs 7 --rtol 1e-5 --atol 1e-6 | FileCheck %s
// RUN: tgc run --compare %s %t.mlir --entry attention_runtime_bias --random-inputs 10 --rtol 1e-5 --atol 1e-6 | FileCheck %s
// RUN: tgc run --compare %s %t.mlir --entry attention_runtime_select --random-inputs 11 --rtol 1e-5 --atol 1e-6 | FileCheck %s
// RUN: tgc run --compare %s %t.mlir --entry attention_causal_and_padding --random-inputs 12 --rtol 1e-5 --atol 1e-6 | FileCheck %s
// RUN: tgc run --compare %s %t.mlir --entry attention_safe_softmax --random-inputs 13 --rtol 1e-5 --atol 1e-6 | FileCheck %s
// RUN: tgc run --compare %s %t.mlir --entry attention_alibi --random-inputs 14 --rtol 1e-5 --atol 1e-6 | FileCheck %s
// RUN: tgc run --compare %s %t.mlir --entry attention_softcap --random-inputs 15 --rtol 1e-5 --atol 1e-6 | FileCheck %s
// RUN: tgc run --compare %s %t.mlir --entry attention_position_bias_causal --random-inputs 16 --rtol 1e-5 --atol 1e-6 | FileCheck %s
// RUN: tgc run --compare %s %t.mlir --entry attention_dropout --random-inputs 17 --rtol 1e-5 --atol 1e-6 | FileCheck %s
// RUN: tgc run --compare %s %t.mlir --entry attention_dropout_block --random-inputs 18 --rtol 1e-5 --atol 1e-6 | FileCheck %s
// RUN: tgc run --compare %s %t.mlir --entry cross_entropy --random-inputs 8 --rtol 1e-5 --atol 1e-6 | FileCheck %s
// RUN: tgc run --compare %s %t.mlir --entry cross_entropy_of_log_softmax --random-inputs 9 --rtol 1e-5 --atol 1e-6 | FileCheck %s
// RUN: tgc run --compare %s %t.mlir --entry attention_sinks --random-inputs 21 --rtol 1e-5 --atol 1e-6 | FileCheck %s
// RUN: tgc run --compare %s %t.mlir --entry experts_left --random-inputs 19 --rtol 1e-5 --atol 1e-6 | FileCheck %s
// RUN: tgc run --compare %s %t.mlir --entry experts_right --random-inputs 20 --rtol 1e-5 --atol 1e-6 | FileCheck %s
// RUN: tgc run --compare %s %t.mlir --entry attention_merged_heads --random-inputs 22 --rtol 1e-5 --atol 1e-6 | FileCheck %s
// CHECK: y: max abs error {{.*}} ok

// RAISED-LABEL: func.func @layer_norm
// RAISED: tg.layer_norm
// RAISED-LABEL: func.func @rms_norm
// RAISED: tg.rms_norm
// RAISED-LABEL: func.func @gelu_erf
// RAISED: tg.gelu erf
// RAISED-LABEL: func.func @gelu_tanh
// RAISED: tg.gelu tanh
// RAISED-LABEL: func.func @silu
// RAISED: tg.silu
// RAISED-LABEL: func.func @attention_causal
// RAISED: tg.attention %{{.*}}, %{{.*}}, %{{.*}} causal :
// RAISED-LABEL: func.func @attention_dropout
// RAISED: tg.attention %{{.*}}, %{{.*}}, %{{.*}} causal dropout = 2.500000e-01 seed %{{.*}} stream = 3 :
// RAISED-NOT: tg.dropout
// RAISED-LABEL: func.func @attention_dropout_block
// RAISED: tg.attention %{{.*}}, %{{.*}}, %{{.*}} scale = 1.000000e+00 dropout = 5.000000e-01 seed %{{.*}} offset %{{.*}} stream = 0 of [2, 4, 6, 6] :
// RAISED-NOT: tg.dropout
// RAISED-LABEL: func.func @attention_gqa_additive
// RAISED: tg.attention %{{.*}}, %{{.*}}, %{{.*}} causal scale = 5.000000e-01 : (tensor<2x4x6x8xf32>, tensor<2x2x6x8xf32>, tensor<2x2x6x8xf32>)
// RAISED-LABEL: func.func @attention_runtime_bias
// RAISED: tg.attention %{{.*}}, %{{.*}}, %{{.*}} bias %{{.*}} scale = 5.000000e-01 : (tensor<2x4x6x8xf32>, tensor<2x2x6x8xf32>, tensor<2x2x6x8xf32>, tensor<2x1x1x6xf32>)
// RAISED-LABEL: func.func @attention_runtime_select
// RAISED: tg.attention %{{.*}}, %{{.*}}, %{{.*}} bias %{{.*}} : (tensor<2x2x6x8xf32>, tensor<2x2x6x8xf32>, tensor<2x2x6x8xf32>, tensor<2x1x6x6xf32>)
// RAISED-LABEL: func.func @attention_causal_and_padding
// RAISED: tg.attention %{{.*}}, %{{.*}}, %{{.*}} bias %{{.*}} : (tensor<2x2x6x8xf32>, tensor<2x2x6x8xf32>, tensor<2x2x6x8xf32>, tensor<2x1x6x6xf32>)
// RAISED-LABEL: func.func @attention_safe_softmax
// RAISED: tg.attention %{{.*}}, %{{.*}}, %{{.*}} bias %{{.*}} : (tensor<2x2x3x8xf32>, tensor<2x2x3x8xf32>, tensor<2x2x3x8xf32>, tensor<2x1x3x3xf32>)
// RAISED-LABEL: func.func @attention_alibi
// RAISED: tg.attention %{{.*}}, %{{.*}}, %{{.*}} bias %{{.*}} : (tensor<2x2x3x8xf32>, tensor<2x2x3x8xf32>, tensor<2x2x3x8xf32>, tensor<1x2x3x3xf32>)
// RAISED-LABEL: func.func @attention_softcap
// RAISED: tg.attention %{{.*}}, %{{.*}}, %{{.*}} bias %{{.*}} causal scale = 2.0{{[0-9e+]*}} softcap = 1.500000e+00 : (tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>, tensor<2x1x1x5xf32>)
// RAISED-NOT: tg.tanh
// RAISED-LABEL: func.func @attention_position_bias_causal
// RAISED: tg.attention %{{.*}}, %{{.*}}, %{{.*}} bias %{{.*}} scale = 1.000000e+00 : (tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>, tensor<1x2x5x5xf32>)
// RAISED-NOT: tg.softmax
// RAISED-LABEL: func.func @cross_entropy
// RAISED: tg.cross_entropy mean
// RAISED-LABEL: func.func @cross_entropy_of_log_softmax
// RAISED-NOT: tg.log_softmax
// RAISED: tg.cross_entropy mean
// RAISED-LABEL: func.func @experts_left
// RAISED-NOT: tg.embedding
// RAISED: tg.expert_matmul {{.*}} transpose_b
// RAISED-LABEL: func.func @experts_right
// RAISED-NOT: tg.embedding
// RAISED: tg.expert_matmul
// RAISED-LABEL: func.func @attention_sinks
// RAISED: tg.attention {{.*}} causal : (tensor<2x2x6x8xf32>, tensor<2x2x7x8xf32>, tensor<2x2x7x8xf32>, tensor<1x2x1x7xf32>)
// RAISED-LABEL: func.func @attention_merged_heads
// RAISED-NOT: tg.softmax
// RAISED: tg.attention {{.*}} bias {{.*}} : (tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32>, tensor<2x3x5x8xf32>, tensor<2x3x5x5xf32>)

func.func @layer_norm(%x: tensor<2x5x16xf32> {tg.role = "input", tg.name = "x"},
                      %g: tensor<16xf32> {tg.role = "input", tg.name = "g"},
                      %b: tensor<16xf32> {tg.role = "input", tg.name = "b"})
    -> (tensor<2x5x16xf32> {tg.name = "y"}) {
  %m = tg.reduce mean %x dims = [2] : tensor<2x5x16xf32> -> tensor<2x5xf32>
  %mk = tg.reshape %m : tensor<2x5xf32> -> tensor<2x5x1xf32>
  %mb = tg.broadcast_in_dim %mk dims = [0, 1, 2] : tensor<2x5x1xf32> -> tensor<2x5x16xf32>
  %d = tg.sub %x, %mb : tensor<2x5x16xf32>
  %two = tg.constant dense<2.0> : tensor<f32>
  %twob = tg.broadcast_in_dim %two dims = [] : tensor<f32> -> tensor<2x5x16xf32>
  %sq = tg.pow %d, %twob : tensor<2x5x16xf32>
  %v = tg.reduce mean %sq dims = [2] : tensor<2x5x16xf32> -> tensor<2x5xf32>
  %vk = tg.reshape %v : tensor<2x5xf32> -> tensor<2x5x1xf32>
  %eps = tg.constant dense<9.99999974E-6> : tensor<f32>
  %epsb = tg.broadcast_in_dim %eps dims = [] : tensor<f32> -> tensor<2x5x1xf32>
  %ve = tg.add %vk, %epsb : tensor<2x5x1xf32>
  %s = tg.sqrt %ve : tensor<2x5x1xf32>
  %sb = tg.broadcast_in_dim %s dims = [0, 1, 2] : tensor<2x5x1xf32> -> tensor<2x5x16xf32>
  %n = tg.div %d, %sb : tensor<2x5x16xf32>
  %gb = tg.broadcast_in_dim %g dims = [2] : tensor<16xf32> -> tensor<2x5x16xf32>
  %y0 = tg.mul %n, %gb : tensor<2x5x16xf32>
  %bb = tg.broadcast_in_dim %b dims = [2] : tensor<16xf32> -> tensor<2x5x16xf32>
  %y = tg.add %y0, %bb : tensor<2x5x16xf32>
  return %y : tensor<2x5x16xf32>
}

func.func @rms_norm(%x: tensor<2x5x16xf32> {tg.role = "input", tg.name = "x"},
                    %w: tensor<16xf32> {tg.role = "input", tg.name = "w"})
    -> (tensor<2x5x16xf32> {tg.name = "y"}) {
  %two = tg.constant dense<2.0> : tensor<f32>
  %twob = tg.broadcast_in_dim %two dims = [] : tensor<f32> -> tensor<2x5x16xf32>
  %sq = tg.pow %x, %twob : tensor<2x5x16xf32>
  %v = tg.reduce mean %sq dims = [2] : tensor<2x5x16xf32> -> tensor<2x5xf32>
  %vk = tg.reshape %v : tensor<2x5xf32> -> tensor<2x5x1xf32>
  %eps = tg.constant dense<9.99999997E-7> : tensor<f32>
  %epsb = tg.broadcast_in_dim %eps dims = [] : tensor<f32> -> tensor<2x5x1xf32>
  %ve = tg.add %vk, %epsb : tensor<2x5x1xf32>
  %s = tg.sqrt %ve : tensor<2x5x1xf32>
  %one = tg.constant dense<1.0> : tensor<f32>
  %oneb = tg.broadcast_in_dim %one dims = [] : tensor<f32> -> tensor<2x5x1xf32>
  %r = tg.div %oneb, %s : tensor<2x5x1xf32>
  %rb = tg.broadcast_in_dim %r dims = [0, 1, 2] : tensor<2x5x1xf32> -> tensor<2x5x16xf32>
  %n = tg.mul %x, %rb : tensor<2x5x16xf32>
  %wb = tg.broadcast_in_dim %w dims = [2] : tensor<16xf32> -> tensor<2x5x16xf32>
  %y = tg.mul %n, %wb : tensor<2x5x16xf32>
  return %y : tensor<2x5x16xf32>
}

func.func @gelu_erf(%x: tensor<4x32xf32> {tg.role = "input", tg.name = "x"})
    -> (tensor<4x32xf32> {tg.name = "y"}) {
  %c = tg.constant dense<1.41421354> : tensor<f32>
  %cb = tg.broadcast_in_dim %c dims = [] : tensor<f32> -> tensor<4x32xf32>
  %0 = tg.div %x, %cb : tensor<4x32xf32>
  %1 = tg.erf %0 : tensor<4x32xf32>
  %one = tg.constant dense<1.0> : tensor<f32>
  %oneb = tg.broadcast_in_dim %one dims = [] : tensor<f32> -> tensor<4x32xf32>
  %2 = tg.add %1, %oneb : tensor<4x32xf32>
  %3 = tg.mul %x, %2 : tensor<4x32xf32>
  %h = tg.constant dense<0.5> : tensor<f32>
  %hb = tg.broadcast_in_dim %h dims = [] : tensor<f32> -> tensor<4x32xf32>
  %y = tg.mul %3, %hb : tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}

func.func @gelu_tanh(%x: tensor<4x32xf32> {tg.role = "input", tg.name = "x"})
    -> (tensor<4x32xf32> {tg.name = "y"}) {
  %0 = tg.mul %x, %x : tensor<4x32xf32>
  %1 = tg.mul %x, %0 : tensor<4x32xf32>
  %c0 = tg.constant dense<0.0447149985> : tensor<f32>
  %c0b = tg.broadcast_in_dim %c0 dims = [] : tensor<f32> -> tensor<4x32xf32>
  %2 = tg.mul %c0b, %1 : tensor<4x32xf32>
  %3 = tg.add %x, %2 : tensor<4x32xf32>
  %c1 = tg.constant dense<0.797884583> : tensor<f32>
  %c1b = tg.broadcast_in_dim %c1 dims = [] : tensor<f32> -> tensor<4x32xf32>
  %4 = tg.mul %c1b, %3 : tensor<4x32xf32>
  %5 = tg.tanh %4 : tensor<4x32xf32>
  %one = tg.constant dense<1.0> : tensor<f32>
  %oneb = tg.broadcast_in_dim %one dims = [] : tensor<f32> -> tensor<4x32xf32>
  %6 = tg.add %oneb, %5 : tensor<4x32xf32>
  %7 = tg.mul %x, %6 : tensor<4x32xf32>
  %h = tg.constant dense<0.5> : tensor<f32>
  %hb = tg.broadcast_in_dim %h dims = [] : tensor<f32> -> tensor<4x32xf32>
  %y = tg.mul %hb, %7 : tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}

func.func @silu(%x: tensor<4x32xf32> {tg.role = "input", tg.name = "x"})
    -> (tensor<4x32xf32> {tg.name = "y"}) {
  %0 = tg.sigmoid %x : tensor<4x32xf32>
  %y = tg.mul %x, %0 : tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}

func.func @attention_causal(%q: tensor<2x2x6x8xf32> {tg.role = "input", tg.name = "q"},
                            %k: tensor<2x2x6x8xf32> {tg.role = "input", tg.name = "k"},
                            %v: tensor<2x2x6x8xf32> {tg.role = "input", tg.name = "v"})
    -> (tensor<2x2x6x8xf32> {tg.name = "y"}) {
  %kt = tg.transpose %k perm = [0, 1, 3, 2] : tensor<2x2x6x8xf32> -> tensor<2x2x8x6xf32>
  %s = tg.matmul %q, %kt : (tensor<2x2x6x8xf32>, tensor<2x2x8x6xf32>) -> tensor<2x2x6x6xf32>
  %c = tg.constant dense<0.353553385> : tensor<f32>
  %cb = tg.broadcast_in_dim %c dims = [] : tensor<f32> -> tensor<2x2x6x6xf32>
  %y = tg.mul %s, %cb : tensor<2x2x6x6xf32>
  %mask = tg.constant dense<[[[[false, true, true, true, true, true], [false, false, true, true, true, true], [false, false, false, true, true, true], [false, false, false, false, true, true], [false, false, false, false, false, true], [false, false, false, false, false, false]]]]> : tensor<1x1x6x6xi1>
  %mb = tg.broadcast_in_dim %mask dims = [0, 1, 2, 3] : tensor<1x1x6x6xi1> -> tensor<2x2x6x6xi1>
  %fill = tg.constant dense<0xFF800000> : tensor<f32>
  %fb = tg.broadcast_in_dim %fill dims = [] : tensor<f32> -> tensor<2x2x6x6xf32>
  %z = tg.select %mb, %fb, %y : tensor<2x2x6x6xi1>, tensor<2x2x6x6xf32>
  %p = tg.softmax %z dim = 3 : tensor<2x2x6x6xf32>
  %o = tg.matmul %p, %v : (tensor<2x2x6x6xf32>, tensor<2x2x6x8xf32>) -> tensor<2x2x6x8xf32>
  return %o : tensor<2x2x6x8xf32>
}

// Attention dropout after PyTorch's NaN guard: tg.attention's own mask is
// the tg.dropout's (the same seed, stream and elements).
func.func @attention_dropout(%q: tensor<2x2x6x8xf32> {tg.role = "input", tg.name = "q"},
                             %k: tensor<2x2x6x8xf32> {tg.role = "input", tg.name = "k"},
                             %v: tensor<2x2x6x8xf32> {tg.role = "input", tg.name = "v"},
                             %seed: tensor<i64> {tg.role = "hyper", tg.name = "seed"})
    -> (tensor<2x2x6x8xf32> {tg.name = "y"}) {
  %s = tg.matmul %q, %k transpose_b : (tensor<2x2x6x8xf32>, tensor<2x2x6x8xf32>) -> tensor<2x2x6x6xf32>
  %c = tg.constant dense<0.353553385> : tensor<f32>
  %cb = tg.broadcast_in_dim %c dims = [] : tensor<f32> -> tensor<2x2x6x6xf32>
  %y = tg.mul %s, %cb : tensor<2x2x6x6xf32>
  %mask = tg.constant dense<[[[[false, true, true, true, true, true], [false, false, true, true, true, true], [false, false, false, true, true, true], [false, false, false, false, true, true], [false, false, false, false, false, true], [false, false, false, false, false, false]]]]> : tensor<1x1x6x6xi1>
  %mb = tg.broadcast_in_dim %mask dims = [0, 1, 2, 3] : tensor<1x1x6x6xi1> -> tensor<2x2x6x6xi1>
  %fill = tg.constant dense<0xFF800000> : tensor<f32>
  %fb = tg.broadcast_in_dim %fill dims = [] : tensor<f32> -> tensor<2x2x6x6xf32>
  %z = tg.select %mb, %fb, %y : tensor<2x2x6x6xi1>, tensor<2x2x6x6xf32>
  %p = tg.softmax %z dim = 3 : tensor<2x2x6x6xf32>
  %nan = tg.compare ne, %p, %p : tensor<2x2x6x6xf32>
  %zero = tg.constant dense<0.0> : tensor<2x2x6x6xf32>
  %g = tg.select %nan, %zero, %p : tensor<2x2x6x6xi1>, tensor<2x2x6x6xf32>
  %d = tg.dropout %g, %seed rate = 2.500000e-01 stream = 3 : tensor<2x2x6x6xf32>, tensor<i64>
  %o = tg.matmul %d, %v : (tensor<2x2x6x6xf32>, tensor<2x2x6x8xf32>) -> tensor<2x2x6x8xf32>
  return %o : tensor<2x2x6x8xf32>
}

// A device's block of the heads (a dropout with an offset and the whole
// probabilities' shape, as tg-partition writes it): the raised attention
// keeps both.
func.func @attention_dropout_block(%q: tensor<1x2x6x8xf32> {tg.role = "input", tg.name = "q"},
                                   %k: tensor<1x2x6x8xf32> {tg.role = "input", tg.name = "k"},
                                   %v: tensor<1x2x6x8xf32> {tg.role = "input", tg.name = "v"},
                                   %seed: tensor<i64> {tg.role = "hyper", tg.name = "seed"})
    -> (tensor<1x2x6x8xf32> {tg.name = "y"}) {
  %s = tg.matmul %q, %k transpose_b : (tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x6x6xf32>
  %p = tg.softmax %s dim = 3 : tensor<1x2x6x6xf32>
  %offset = tg.constant dense<72> : tensor<i64>
  %d = tg.dropout %p, %seed offset %offset rate = 5.000000e-01 stream = 0 of [2, 4, 6, 6] : tensor<1x2x6x6xf32>, tensor<i64>, tensor<i64>
  %o = tg.matmul %d, %v : (tensor<1x2x6x6xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x6x8xf32>
  return %o : tensor<1x2x6x8xf32>
}

func.func @attention_gqa_additive(%q: tensor<2x4x6x8xf32> {tg.role = "input", tg.name = "q"},
                                  %k: tensor<2x2x6x8xf32> {tg.role = "input", tg.name = "k"},
                                  %v: tensor<2x2x6x8xf32> {tg.role = "input", tg.name = "v"})
    -> (tensor<2x4x6x8xf32> {tg.name = "y"}) {
  %k5 = tg.reshape %k : tensor<2x2x6x8xf32> -> tensor<2x2x1x6x8xf32>
  %ke = tg.broadcast_in_dim %k5 dims = [0, 1, 2, 3, 4] : tensor<2x2x1x6x8xf32> -> tensor<2x2x2x6x8xf32>
  %kr = tg.reshape %ke : tensor<2x2x2x6x8xf32> -> tensor<2x4x6x8xf32>
  %v5 = tg.reshape %v : tensor<2x2x6x8xf32> -> tensor<2x2x1x6x8xf32>
  %ve = tg.broadcast_in_dim %v5 dims = [0, 1, 2, 3, 4] : tensor<2x2x1x6x8xf32> -> tensor<2x2x2x6x8xf32>
  %vr = tg.reshape %ve : tensor<2x2x2x6x8xf32> -> tensor<2x4x6x8xf32>
  %kt = tg.transpose %kr perm = [0, 1, 3, 2] : tensor<2x4x6x8xf32> -> tensor<2x4x8x6xf32>
  %s = tg.matmul %q, %kt : (tensor<2x4x6x8xf32>, tensor<2x4x8x6xf32>) -> tensor<2x4x6x6xf32>
  %c = tg.constant dense<2.0> : tensor<2x4x6x6xf32>
  %y = tg.div %s, %c : tensor<2x4x6x6xf32>
  %mask = tg.constant dense<[[0.0, -1.0e9, -1.0e9, -1.0e9, -1.0e9, -1.0e9], [0.0, 0.0, -1.0e9, -1.0e9, -1.0e9, -1.0e9], [0.0, 0.0, 0.0, -1.0e9, -1.0e9, -1.0e9], [0.0, 0.0, 0.0, 0.0, -1.0e9, -1.0e9], [0.0, 0.0, 0.0, 0.0, 0.0, -1.0e9], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<6x6xf32>
  %mb = tg.broadcast_in_dim %mask dims = [2, 3] : tensor<6x6xf32> -> tensor<2x4x6x6xf32>
  %z = tg.add %y, %mb : tensor<2x4x6x6xf32>
  %p = tg.softmax %z dim = 3 : tensor<2x4x6x6xf32>
  %o = tg.matmul %p, %vr : (tensor<2x4x6x6xf32>, tensor<2x4x6x8xf32>) -> tensor<2x4x6x8xf32>
  return %o : tensor<2x4x6x8xf32>
}

// A bias given at run time ([B, Sk], e.g. a padding mask or ALiBi), added
// before the scale (so that the bias is the scaled one), grouped-query.
func.func @attention_runtime_bias(%q: tensor<2x4x6x8xf32> {tg.role = "input", tg.name = "q"},
                                  %k: tensor<2x2x6x8xf32> {tg.role = "input", tg.name = "k"},
                                  %v: tensor<2x2x6x8xf32> {tg.role = "input", tg.name = "v"},
                                  %m: tensor<2x6xf32> {tg.role = "input", tg.name = "m"})
    -> (tensor<2x4x6x8xf32> {tg.name = "y"}) {
  %k5 = tg.reshape %k : tensor<2x2x6x8xf32> -> tensor<2x2x1x6x8xf32>
  %ke = tg.broadcast_in_dim %k5 dims = [0, 1, 2, 3, 4] : tensor<2x2x1x6x8xf32> -> tensor<2x2x2x6x8xf32>
  %kr = tg.reshape %ke : tensor<2x2x2x6x8xf32> -> tensor<2x4x6x8xf32>
  %v5 = tg.reshape %v : tensor<2x2x6x8xf32> -> tensor<2x2x1x6x8xf32>
  %ve = tg.broadcast_in_dim %v5 dims = [0, 1, 2, 3, 4] : tensor<2x2x1x6x8xf32> -> tensor<2x2x2x6x8xf32>
  %vr = tg.reshape %ve : tensor<2x2x2x6x8xf32> -> tensor<2x4x6x8xf32>
  %s = tg.matmul %q, %kr transpose_b : (tensor<2x4x6x8xf32>, tensor<2x4x6x8xf32>) -> tensor<2x4x6x6xf32>
  %mb = tg.broadcast_in_dim %m dims = [0, 3] : tensor<2x6xf32> -> tensor<2x4x6x6xf32>
  %z = tg.add %s, %mb : tensor<2x4x6x6xf32>
  %c = tg.constant dense<2.0> : tensor<2x4x6x6xf32>
  %y = tg.div %z, %c : tensor<2x4x6x6xf32>
  %p = tg.softmax %y dim = 3 : tensor<2x4x6x6xf32>
  %o = tg.matmul %p, %vr : (tensor<2x4x6x6xf32>, tensor<2x4x6x8xf32>) -> tensor<2x4x6x8xf32>
  return %o : tensor<2x4x6x8xf32>
}

// A mask predicate given at run time ([B, 1, Sq, Sk]), masked_fill with
// f32's lowest value (random: some query rows hide every key).
func.func @attention_runtime_select(%q: tensor<2x2x6x8xf32> {tg.role = "input", tg.name = "q"},
                                    %k: tensor<2x2x6x8xf32> {tg.role = "input", tg.name = "k"},
                                    %v: tensor<2x2x6x8xf32> {tg.role = "input", tg.name = "v"},
                                    %hide: tensor<2x1x6x6xi1> {tg.role = "input", tg.name = "hide"})
    -> (tensor<2x2x6x8xf32> {tg.name = "y"}) {
  %s = tg.matmul %q, %k transpose_b : (tensor<2x2x6x8xf32>, tensor<2x2x6x8xf32>) -> tensor<2x2x6x6xf32>
  %c = tg.constant dense<0.353553385> : tensor<2x2x6x6xf32>
  %y = tg.mul %s, %c : tensor<2x2x6x6xf32>
  %hb = tg.broadcast_in_dim %hide dims = [0, 1, 2, 3] : tensor<2x1x6x6xi1> -> tensor<2x2x6x6xi1>
  %fill = tg.constant dense<-3.40282347E+38> : tensor<2x2x6x6xf32>
  %z = tg.select %hb, %fill, %y : tensor<2x2x6x6xi1>, tensor<2x2x6x6xf32>
  %p = tg.softmax %z dim = 3 : tensor<2x2x6x6xf32>
  %o = tg.matmul %p, %v : (tensor<2x2x6x6xf32>, tensor<2x2x6x8xf32>) -> tensor<2x2x6x8xf32>
  return %o : tensor<2x2x6x8xf32>
}

// Hugging Face GPT-2's eager attention on a padded batch: the causal
// select with f32's lowest value, then the padding mask added (random
// here): both join the bias.
func.func @attention_causal_and_padding(%q: tensor<2x2x6x8xf32> {tg.role = "input", tg.name = "q"},
                                        %k: tensor<2x2x6x8xf32> {tg.role = "input", tg.name = "k"},
                                        %v: tensor<2x2x6x8xf32> {tg.role = "input", tg.name = "v"},
                                        %m: tensor<2x6xf32> {tg.role = "input", tg.name = "m"})
    -> (tensor<2x2x6x8xf32> {tg.name = "y"}) {
  %s = tg.matmul %q, %k transpose_b : (tensor<2x2x6x8xf32>, tensor<2x2x6x8xf32>) -> tensor<2x2x6x6xf32>
  %c = tg.constant dense<0.353553385> : tensor<2x2x6x6xf32>
  %y = tg.mul %s, %c : tensor<2x2x6x6xf32>
  %keep = tg.constant dense<[[true, false, false, false, false, false], [true, true, false, false, false, false], [true, true, true, false, false, false], [true, true, true, true, false, false], [true, true, true, true, true, false], [true, true, true, true, true, true]]> : tensor<6x6xi1>
  %kb = tg.broadcast_in_dim %keep dims = [2, 3] : tensor<6x6xi1> -> tensor<2x2x6x6xi1>
  %fill = tg.constant dense<-3.40282347E+38> : tensor<2x2x6x6xf32>
  %z = tg.select %kb, %y, %fill : tensor<2x2x6x6xi1>, tensor<2x2x6x6xf32>
  %mb = tg.broadcast_in_dim %m dims = [0, 3] : tensor<2x6xf32> -> tensor<2x2x6x6xf32>
  %w = tg.add %z, %mb : tensor<2x2x6x6xf32>
  %p = tg.softmax %w dim = 3 : tensor<2x2x6x6xf32>
  %o = tg.matmul %p, %v : (tensor<2x2x6x6xf32>, tensor<2x2x6x8xf32>) -> tensor<2x2x6x8xf32>
  return %o : tensor<2x2x6x8xf32>
}

// The dynamo exporter's masked SDPA: a boolean mask as 0 / -inf added,
// then PyTorch's NaN guard; a random mask [B, 1, Sq, Sk] of 3 keys hides
// every key of some rows (zeros both ways).
func.func @attention_safe_softmax(%q: tensor<2x2x3x8xf32> {tg.role = "input", tg.name = "q"},
                                  %k: tensor<2x2x3x8xf32> {tg.role = "input", tg.name = "k"},
                                  %v: tensor<2x2x3x8xf32> {tg.role = "input", tg.name = "v"},
                                  %keep: tensor<2x1x3x3xi1> {tg.role = "input", tg.name = "keep"})
    -> (tensor<2x2x3x8xf32> {tg.name = "y"}) {
  %zero = tg.constant dense<0.0> : tensor<2x1x3x3xf32>
  %hide = tg.constant dense<0xFF800000> : tensor<2x1x3x3xf32>
  %bias = tg.select %keep, %zero, %hide : tensor<2x1x3x3xi1>, tensor<2x1x3x3xf32>
  %s = tg.matmul %q, %k transpose_b : (tensor<2x2x3x8xf32>, tensor<2x2x3x8xf32>) -> tensor<2x2x3x3xf32>
  %c = tg.constant dense<0.353553385> : tensor<2x2x3x3xf32>
  %y = tg.mul %s, %c : tensor<2x2x3x3xf32>
  %bb = tg.broadcast_in_dim %bias dims = [0, 1, 2, 3] : tensor<2x1x3x3xf32> -> tensor<2x2x3x3xf32>
  %z = tg.add %y, %bb : tensor<2x2x3x3xf32>
  %p = tg.softmax %z dim = 3 : tensor<2x2x3x3xf32>
  %nan = tg.compare ne, %p, %p : tensor<2x2x3x3xf32>
  %zeros = tg.constant dense<0.0> : tensor<2x2x3x3xf32>
  %safe = tg.select %nan, %zeros, %p : tensor<2x2x3x3xi1>, tensor<2x2x3x3xf32>
  %o = tg.matmul %safe, %v : (tensor<2x2x3x3xf32>, tensor<2x2x3x8xf32>) -> tensor<2x2x3x8xf32>
  return %o : tensor<2x2x3x8xf32>
}

// ALiBi: a constant bias per head, causal by -inf.
func.func @attention_alibi(%q: tensor<2x2x3x8xf32> {tg.role = "input", tg.name = "q"},
                           %k: tensor<2x2x3x8xf32> {tg.role = "input", tg.name = "k"},
                           %v: tensor<2x2x3x8xf32> {tg.role = "input", tg.name = "v"})
    -> (tensor<2x2x3x8xf32> {tg.name = "y"}) {
  %s = tg.matmul %q, %k transpose_b : (tensor<2x2x3x8xf32>, tensor<2x2x3x8xf32>) -> tensor<2x2x3x3xf32>
  %c = tg.constant dense<0.353553385> : tensor<2x2x3x3xf32>
  %y = tg.mul %s, %c : tensor<2x2x3x3xf32>
  %alibi = tg.constant dense<[[[[0.0, 0xFF800000, 0xFF800000], [-0.5, 0.0, 0xFF800000], [-1.0, -0.5, 0.0]], [[0.0, 0xFF800000, 0xFF800000], [-0.25, 0.0, 0xFF800000], [-0.5, -0.25, 0.0]]]]> : tensor<1x2x3x3xf32>
  %ab = tg.broadcast_in_dim %alibi dims = [0, 1, 2, 3] : tensor<1x2x3x3xf32> -> tensor<2x2x3x3xf32>
  %z = tg.add %y, %ab : tensor<2x2x3x3xf32>
  %p = tg.softmax %z dim = 3 : tensor<2x2x3x3xf32>
  %o = tg.matmul %p, %v : (tensor<2x2x3x3xf32>, tensor<2x2x3x8xf32>) -> tensor<2x2x3x8xf32>
  return %o : tensor<2x2x3x8xf32>
}

// A soft cap of 1.5 (written as a product with 1 / 1.5 inside the tanh)
// on scores scaled by 2, so that it bends them, then a causal mask and a
// run-time padding mask.
func.func @attention_softcap(%q: tensor<2x2x5x8xf32> {tg.role = "input", tg.name = "q"},
                             %k: tensor<2x2x5x8xf32> {tg.role = "input", tg.name = "k"},
                             %v: tensor<2x2x5x8xf32> {tg.role = "input", tg.name = "v"},
                             %m: tensor<2x5xf32> {tg.role = "input", tg.name = "m"})
    -> (tensor<2x2x5x8xf32> {tg.name = "y"}) {
  %s = tg.matmul %q, %k transpose_b : (tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>) -> tensor<2x2x5x5xf32>
  %two = tg.constant dense<2.0> : tensor<2x2x5x5xf32>
  %ss = tg.mul %s, %two : tensor<2x2x5x5xf32>
  %inv = tg.constant dense<0.666666686> : tensor<2x2x5x5xf32>
  %d = tg.mul %ss, %inv : tensor<2x2x5x5xf32>
  %t = tg.tanh %d : tensor<2x2x5x5xf32>
  %cap = tg.constant dense<1.5> : tensor<2x2x5x5xf32>
  %c = tg.mul %cap, %t : tensor<2x2x5x5xf32>
  %keep = tg.constant dense<[[true, false, false, false, false], [true, true, false, false, false], [true, true, true, false, false], [true, true, true, true, false], [true, true, true, true, true]]> : tensor<5x5xi1>
  %kb = tg.broadcast_in_dim %keep dims = [2, 3] : tensor<5x5xi1> -> tensor<2x2x5x5xi1>
  %fill = tg.constant dense<0xFF800000> : tensor<2x2x5x5xf32>
  %z = tg.select %kb, %c, %fill : tensor<2x2x5x5xi1>, tensor<2x2x5x5xf32>
  %mb = tg.broadcast_in_dim %m dims = [0, 3] : tensor<2x5xf32> -> tensor<2x2x5x5xf32>
  %w = tg.add %z, %mb : tensor<2x2x5x5xf32>
  %p = tg.softmax %w dim = 3 : tensor<2x2x5x5xf32>
  %o = tg.matmul %p, %v : (tensor<2x2x5x5xf32>, tensor<2x2x5x8xf32>) -> tensor<2x2x5x8xf32>
  return %o : tensor<2x2x5x8xf32>
}

// T5's decoder self-attention: a position bias computed at run time added
// to the unscaled scores, then a causal mask of f32's lowest value added.
func.func @attention_position_bias_causal(%q: tensor<2x2x5x8xf32> {tg.role = "input", tg.name = "q"},
                                          %k: tensor<2x2x5x8xf32> {tg.role = "input", tg.name = "k"},
                                          %v: tensor<2x2x5x8xf32> {tg.role = "input", tg.name = "v"},
                                          %pos: tensor<1x2x5x5xf32> {tg.role = "input", tg.name = "pos"})
    -> (tensor<2x2x5x8xf32> {tg.name = "y"}) {
  %s = tg.matmul %q, %k transpose_b : (tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>) -> tensor<2x2x5x5xf32>
  %pb = tg.broadcast_in_dim %pos dims = [0, 1, 2, 3] : tensor<1x2x5x5xf32> -> tensor<2x2x5x5xf32>
  %w = tg.add %s, %pb : tensor<2x2x5x5xf32>
  %causal = tg.constant dense<[[0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<5x5xf32>
  %cb = tg.broadcast_in_dim %causal dims = [2, 3] : tensor<5x5xf32> -> tensor<2x2x5x5xf32>
  %z = tg.add %w, %cb : tensor<2x2x5x5xf32>
  %p = tg.softmax %z dim = 3 : tensor<2x2x5x5xf32>
  %o = tg.matmul %p, %v : (tensor<2x2x5x5xf32>, tensor<2x2x5x8xf32>) -> tensor<2x2x5x8xf32>
  return %o : tensor<2x2x5x8xf32>
}

func.func @cross_entropy(%x: tensor<3x5x16xf32> {tg.role = "input", tg.name = "x"},
                         %labels: tensor<3x5xi64> {tg.role = "input", tg.name = "labels"})
    -> (tensor<f32> {tg.name = "y"}) {
  %lp = tg.log_softmax %x dim = 2 : tensor<3x5x16xf32>
  %yb = tg.broadcast_in_dim %labels dims = [0, 1] : tensor<3x5xi64> -> tensor<3x5x16xi64>
  %iota = tg.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]> : tensor<16xi64>
  %ib = tg.broadcast_in_dim %iota dims = [2] : tensor<16xi64> -> tensor<3x5x16xi64>
  %oh = tg.compare eq, %yb, %ib : tensor<3x5x16xi64>
  %zero = tg.constant dense<0.0> : tensor<3x5x16xf32>
  %sel = tg.select %oh, %lp, %zero : tensor<3x5x16xi1>, tensor<3x5x16xf32>
  %picked = tg.reduce sum %sel dims = [2] : tensor<3x5x16xf32> -> tensor<3x5xf32>
  %m = tg.reduce mean %picked dims = [0, 1] : tensor<3x5xf32> -> tensor<f32>
  %loss = tg.neg %m : tensor<f32>
  return %loss : tensor<f32>
}

func.func @cross_entropy_of_log_softmax(%x: tensor<15x16xf32> {tg.role = "input", tg.name = "x"},
                                        %labels: tensor<15xi64> {tg.role = "label", tg.name = "labels"})
    -> (tensor<f32> {tg.name = "y"}) {
  %lp = tg.log_softmax %x dim = 1 : tensor<15x16xf32>
  %l, %lse = tg.cross_entropy mean %lp, %labels : (tensor<15x16xf32>, tensor<15xi64>) -> (tensor<f32>, tensor<15xf32>)
  return %l : tensor<f32>
}

// Transformers' batched_mm experts (tg-raise.mlir): matrices gathered by
// the router's top-k, raised to a grouped product of each routed vector with
// its expert's matrix.
func.func @experts_left(%router: tensor<5x4xf32> {tg.role = "input", tg.name = "router"},
                        %w: tensor<4x12x24xf32> {tg.role = "input", tg.name = "w"},
                        %x: tensor<10x24x1xf32> {tg.role = "input", tg.name = "x"})
    -> (tensor<10x12x1xf32> {tg.name = "y"}) {
  %v, %i = tg.top_k %router k = 2 : tensor<5x4xf32> -> tensor<5x2xf32>, tensor<5x2xi64>
  %ids = tg.reshape %i : tensor<5x2xi64> -> tensor<10xi64>
  %table = tg.reshape %w : tensor<4x12x24xf32> -> tensor<4x288xf32>
  %g = tg.embedding %table[%ids] : (tensor<4x288xf32>, tensor<10xi64>) -> tensor<10x288xf32>
  %m = tg.reshape %g : tensor<10x288xf32> -> tensor<10x12x24xf32>
  %y = tg.matmul %m, %x : (tensor<10x12x24xf32>, tensor<10x24x1xf32>) -> tensor<10x12x1xf32>
  return %y : tensor<10x12x1xf32>
}

func.func @experts_right(%router: tensor<10x4xf32> {tg.role = "input", tg.name = "router"},
                         %w: tensor<4x24x12xf32> {tg.role = "input", tg.name = "w"},
                         %x: tensor<10x1x24xf32> {tg.role = "input", tg.name = "x"})
    -> (tensor<10x1x12xf32> {tg.name = "y"}) {
  %v, %i = tg.top_k %router k = 1 : tensor<10x4xf32> -> tensor<10x1xf32>, tensor<10x1xi64>
  %ids = tg.reshape %i : tensor<10x1xi64> -> tensor<10xi64>
  %table = tg.reshape %w : tensor<4x24x12xf32> -> tensor<4x288xf32>
  %g = tg.embedding %table[%ids] : (tensor<4x288xf32>, tensor<10xi64>) -> tensor<10x288xf32>
  %m = tg.reshape %g : tensor<10x288xf32> -> tensor<10x24x12xf32>
  %y = tg.matmul %x, %m : (tensor<10x1x24xf32>, tensor<10x24x12xf32>) -> tensor<10x1x12xf32>
  return %y : tensor<10x1x12xf32>
}

// GPT-OSS's attention sinks: a logit per head joins each row of scores, the
// rows' maximum is subtracted, and the sink's probability is dropped after
// the softmax.
func.func @attention_sinks(%q: tensor<2x2x6x8xf32> {tg.role = "input", tg.name = "q"},
                           %k: tensor<2x2x6x8xf32> {tg.role = "input", tg.name = "k"},
                           %v: tensor<2x2x6x8xf32> {tg.role = "input", tg.name = "v"},
                           %sink: tensor<2xf32> {tg.role = "input", tg.name = "sink"})
    -> (tensor<2x2x6x8xf32> {tg.name = "y"}) {
  %kt = tg.transpose %k perm = [0, 1, 3, 2] : tensor<2x2x6x8xf32> -> tensor<2x2x8x6xf32>
  %s = tg.matmul %q, %kt : (tensor<2x2x6x8xf32>, tensor<2x2x8x6xf32>) -> tensor<2x2x6x6xf32>
  %c = tg.constant dense<0.353553385> : tensor<f32>
  %cb = tg.broadcast_in_dim %c dims = [] : tensor<f32> -> tensor<2x2x6x6xf32>
  %y = tg.mul %s, %cb : tensor<2x2x6x6xf32>
  %mask = tg.constant dense<[[[[false, true, true, true, true, true], [false, false, true, true, true, true], [false, false, false, true, true, true], [false, false, false, false, true, true], [false, false, false, false, false, true], [false, false, false, false, false, false]]]]> : tensor<1x1x6x6xi1>
  %mb = tg.broadcast_in_dim %mask dims = [0, 1, 2, 3] : tensor<1x1x6x6xi1> -> tensor<2x2x6x6xi1>
  %fill = tg.constant dense<0xFF800000> : tensor<f32>
  %fb = tg.broadcast_in_dim %fill dims = [] : tensor<f32> -> tensor<2x2x6x6xf32>
  %z = tg.select %mb, %fb, %y : tensor<2x2x6x6xi1>, tensor<2x2x6x6xf32>
  %sr = tg.reshape %sink : tensor<2xf32> -> tensor<1x2x1x1xf32>
  %sb = tg.broadcast_in_dim %sr dims = [0, 1, 2, 3] : tensor<1x2x1x1xf32> -> tensor<2x2x6x1xf32>
  %x = tg.concat %z, %sb dim = 3 : (tensor<2x2x6x6xf32>, tensor<2x2x6x1xf32>) -> tensor<2x2x6x7xf32>
  %mx = tg.reduce max %x dims = [3] : tensor<2x2x6x7xf32> -> tensor<2x2x6xf32>
  %mr = tg.reshape %mx : tensor<2x2x6xf32> -> tensor<2x2x6x1xf32>
  %mxb = tg.broadcast_in_dim %mr dims = [0, 1, 2, 3] : tensor<2x2x6x1xf32> -> tensor<2x2x6x7xf32>
  %d = tg.sub %x, %mxb : tensor<2x2x6x7xf32>
  %p = tg.softmax %d dim = 3 : tensor<2x2x6x7xf32>
  %ps = tg.slice %p [0:2, 0:2, 0:6, 0:6] : tensor<2x2x6x7xf32> -> tensor<2x2x6x6xf32>
  %o = tg.matmul %ps, %v : (tensor<2x2x6x6xf32>, tensor<2x2x6x8xf32>) -> tensor<2x2x6x8xf32>
  return %o : tensor<2x2x6x8xf32>
}

// BLOOM's attention: q, k and v merged to [B * H, S, D], the scaled
// product plus ALiBi computed at run time from a padding mask's positions
// (as BLOOM's mask exports do), viewed as [B, H, S, S] for the padding mask
// and the softmax, and viewed back for the product with the values.
func.func @attention_merged_heads(%q: tensor<2x3x5x8xf32> {tg.role = "input", tg.name = "q"},
                                  %k: tensor<2x3x5x8xf32> {tg.role = "input", tg.name = "k"},
                                  %v: tensor<2x3x5x8xf32> {tg.role = "input", tg.name = "v"},
                                  %slopes: tensor<6x1x1xf32> {tg.role = "input", tg.name = "slopes"},
                                  %positions: tensor<6x1x5xf32> {tg.role = "input", tg.name = "positions"},
                                  %pad: tensor<2x1x1x5xf32> {tg.role = "input", tg.name = "pad"})
    -> (tensor<2x3x5x8xf32> {tg.name = "y"}) {
  %q3 = tg.reshape %q : tensor<2x3x5x8xf32> -> tensor<6x5x8xf32>
  %k3 = tg.reshape %k : tensor<2x3x5x8xf32> -> tensor<6x5x8xf32>
  %kt = tg.transpose %k3 perm = [0, 2, 1] : tensor<6x5x8xf32> -> tensor<6x8x5xf32>
  %v3 = tg.reshape %v : tensor<2x3x5x8xf32> -> tensor<6x5x8xf32>
  %sb = tg.broadcast_in_dim %slopes dims = [0, 1, 2] : tensor<6x1x1xf32> -> tensor<6x1x5xf32>
  %alibi1 = tg.mul %sb, %positions : tensor<6x1x5xf32>
  %alibi = tg.broadcast_in_dim %alibi1 dims = [0, 1, 2] : tensor<6x1x5xf32> -> tensor<6x5x5xf32>
  %s = tg.matmul %q3, %kt : (tensor<6x5x8xf32>, tensor<6x8x5xf32>) -> tensor<6x5x5xf32>
  %alpha = tg.constant dense<0.353553385> : tensor<6x5x5xf32>
  %scaled = tg.mul %s, %alpha : tensor<6x5x5xf32>
  %biased = tg.add %alibi, %scaled : tensor<6x5x5xf32>
  %s4 = tg.reshape %biased : tensor<6x5x5xf32> -> tensor<2x3x5x5xf32>
  %pb = tg.broadcast_in_dim %pad dims = [0, 1, 2, 3] : tensor<2x1x1x5xf32> -> tensor<2x3x5x5xf32>
  %masked = tg.add %s4, %pb : tensor<2x3x5x5xf32>
  %p = tg.softmax %masked dim = 3 : tensor<2x3x5x5xf32>
  %p3 = tg.reshape %p : tensor<2x3x5x5xf32> -> tensor<6x5x5xf32>
  %o = tg.matmul %p3, %v3 : (tensor<6x5x5xf32>, tensor<6x5x8xf32>) -> tensor<6x5x8xf32>
  %o4 = tg.reshape %o : tensor<6x5x8xf32> -> tensor<2x3x5x8xf32>
  return %o4 : tensor<2x3x5x8xf32>
}
