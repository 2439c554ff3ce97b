// The bundled GPT-2 example parses and verifies, is exactly what
// benchmarks/gen_gpt.py writes, and gen_gpt.py counts GPT-2's parameters.

// RUN: tgc-opt %tgc_src_root/examples/gpt2-tiny.mlir | FileCheck %s
// RUN: %python %tgc_src_root/benchmarks/gen_gpt.py --layers 2 --hidden 64 --heads 4 --seq 16 --batch 2 --vocab 128 --dropout 0.1 | diff - %tgc_src_root/examples/gpt2-tiny.mlir

// The arguments: ids, labels, the dropout seed, then the parameters under
// Hugging Face's names; one loss result.
// CHECK-LABEL: func.func @gpt2(
// CHECK-SAME: %[[IDS:arg[0-9]+]]: tensor<2x16xi64> {tg.name = "input_ids", tg.role = "input"}
// CHECK-SAME: %[[LABELS:arg[0-9]+]]: tensor<2x16xi64> {tg.name = "labels", tg.role = "label"}
// CHECK-SAME: %[[SEED:arg[0-9]+]]: tensor<i64> {tg.name = "dropout_seed", tg.role = "hyper"}
// CHECK-SAME: %[[WTE:arg[0-9]+]]: tensor<128x64xf32> {tg.name = "wte.weight", tg.role = "param"}
// CHECK-SAME: tensor<16x64xf32> {tg.name = "wpe.weight", tg.role = "param"}
// CHECK-SAME: tensor<64xf32> {tg.name = "h.0.ln_1.weight", tg.role = "param"}
// CHECK-SAME: tensor<64xf32> {tg.name = "h.0.ln_1.bias", tg.role = "param"}
// CHECK-SAME: tensor<64x192xf32> {tg.name = "h.0.attn.c_attn.weight", tg.role = "param"}
// CHECK-SAME: tensor<192xf32> {tg.name = "h.0.attn.c_attn.bias", tg.role = "param"}
// CHECK-SAME: tensor<64x64xf32> {tg.name = "h.0.attn.c_proj.weight", tg.role = "param"}
// CHECK-SAME: tensor<64xf32> {tg.name = "h.0.attn.c_proj.bias", tg.role = "param"}
// CHECK-SAME: tensor<64xf32> {tg.name = "h.0.ln_2.weight", tg.role = "param"}
// CHECK-SAME: tensor<64xf32> {tg.name = "h.0.ln_2.bias", tg.role = "param"}
// CHECK-SAME: tensor<64x256xf32> {tg.name = "h.0.mlp.c_fc.weight", tg.role = "param"}
// CHECK-SAME: tensor<256xf32> {tg.name = "h.0.mlp.c_fc.bias", tg.role = "param"}
// CHECK-SAME: tensor<256x64xf32> {tg.name = "h.0.mlp.c_proj.weight", tg.role = "param"}
// CHECK-SAME: tensor<64xf32> {tg.name = "h.0.mlp.c_proj.bias", tg.role = "param"}
// CHECK-SAME: tensor<64xf32> {tg.name = "h.1.ln_1.weight", tg.role = "param"}
// CHECK-SAME: tensor<64xf32> {tg.name = "h.1.ln_1.bias", tg.role = "param"}
// CHECK-SAME: tensor<64x192xf32> {tg.name = "h.1.attn.c_attn.weight", tg.role = "param"}
// CHECK-SAME: tensor<192xf32> {tg.name = "h.1.attn.c_attn.bias", tg.role = "param"}
// CHECK-SAME: tensor<64x64xf32> {tg.name = "h.1.attn.c_proj.weight", tg.role = "param"}
// CHECK-SAME: tensor<64xf32> {tg.name = "h.1.attn.c_proj.bias", tg.role = "param"}
// CHECK-SAME: tensor<64xf32> {tg.name = "h.1.ln_2.weight", tg.role = "param"}
// CHECK-SAME: tensor<64xf32> {tg.name = "h.1.ln_2.bias", tg.role = "param"}
// CHECK-SAME: tensor<64x256xf32> {tg.name = "h.1.mlp.c_fc.weight", tg.role = "param"}
// CHECK-SAME: tensor<256xf32> {tg.name = "h.1.mlp.c_fc.bias", tg.role = "param"}
// CHECK-SAME: tensor<256x64xf32> {tg.name = "h.1.mlp.c_proj.weight", tg.role = "param"}
// CHECK-SAME: tensor<64xf32> {tg.name = "h.1.mlp.c_proj.bias", tg.role = "param"}
// CHECK-SAME: tensor<64xf32> {tg.name = "ln_f.weight", tg.role = "param"}
// CHECK-SAME: tensor<64xf32> {tg.name = "ln_f.bias", tg.role = "param"})
// CHECK-SAME: -> (tensor<f32> {tg.name = "loss", tg.role = "loss"})

// Embeddings, then dropout with stream 0.
// CHECK: tg.embedding %[[WTE]][%[[IDS]]] : (tensor<128x64xf32>, tensor<2x16xi64>) -> tensor<2x16x64xf32>
// CHECK: tg.dropout %{{.*}}, %[[SEED]] rate = 1.000000e-01 stream = 0 :

// Each layer: ln_1, causal attention (scale 1/sqrt(16)) with dropout of
// its probabilities, dropout, ln_2, GELU (tanh), dropout; each dropout has
// its own stream.
// CHECK: tg.layer_norm {{.*}} epsilon = 1.000000e-05
// CHECK: tg.attention {{.*}} causal scale = 2.500000e-01 dropout = 1.000000e-01 seed %[[SEED]] stream = 1 : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>, tensor<i64>)
// CHECK: tg.dropout {{.*}} stream = 2 :
// CHECK: tg.layer_norm {{.*}} epsilon = 1.000000e-05
// CHECK: tg.gelu tanh %{{.*}} : tensor<2x16x256xf32>
// CHECK: tg.dropout {{.*}} stream = 3 :
// CHECK: tg.layer_norm {{.*}} epsilon = 1.000000e-05
// CHECK: tg.attention {{.*}} causal scale = 2.500000e-01 dropout = 1.000000e-01 seed %[[SEED]] stream = 4 :
// CHECK: tg.dropout {{.*}} stream = 5 :
// CHECK: tg.layer_norm {{.*}} epsilon = 1.000000e-05
// CHECK: tg.gelu tanh
// CHECK: tg.dropout {{.*}} stream = 6 :
// CHECK-NOT: tg.attention
// CHECK-NOT: tg.dropout

// ln_f, the LM head tied to wte, and the mean cross-entropy as the result.
// CHECK: tg.layer_norm {{.*}} epsilon = 1.000000e-05
// CHECK: %[[LOGITS:[0-9]+]] = tg.matmul %{{[a-z_0-9]+}}, %[[WTE]] transpose_b : (tensor<2x16x64xf32>, tensor<128x64xf32>) -> tensor<2x16x128xf32>
// CHECK: %[[LOSS:[a-z_0-9]+]], %{{[a-z_0-9]+}} = tg.cross_entropy mean %[[LOGITS]], %[[LABELS]] : (tensor<2x16x128xf32>, tensor<2x16xi64>) -> (tensor<f32>, tensor<2x16xf32>)
// CHECK: return %[[LOSS]] : tensor<f32>

// --summary counts the parameters.
// GPT-2 small (124M): wte 50257*768 = 38597376, wpe 1024*768 = 786432,
// 12 layers of 12*768^2 + 13*768 = 7087872 (= 85054464), ln_f 2*768 = 1536:
// 38597376 + 786432 + 85054464 + 1536 = 124439808, Hugging Face's count.
// RUN: %python %tgc_src_root/benchmarks/gen_gpt.py --layers 12 --hidden 768 --heads 12 --seq 1024 --vocab 50257 --summary | FileCheck %s --check-prefix=SMALL
// SMALL: parameters: 124439808
//
// The tiny example: wte 128*64 = 8192, wpe 16*64 = 1024, per layer
// ln_1 2*64 = 128, c_attn 64*192 + 192 = 12480, attn.c_proj 64*64 + 64 = 4160,
// ln_2 128, c_fc 64*256 + 256 = 16640, mlp.c_proj 256*64 + 64 = 16448
// (49984 = 12*64^2 + 13*64, twice: 99968), ln_f 128:
// 8192 + 1024 + 99968 + 128 = 109312.
// RUN: %python %tgc_src_root/benchmarks/gen_gpt.py --layers 2 --hidden 64 --heads 4 --seq 16 --batch 2 --vocab 128 --dropout 0.1 --summary | FileCheck %s --check-prefix=TINY
// TINY: parameters: 109312

// bf16 precision also verifies: matmul and attention operands are converted
// from the f32 parameters and activations, their results back to f32.
// RUN: %python %tgc_src_root/benchmarks/gen_gpt.py --layers 1 --hidden 64 --heads 4 --seq 16 --batch 2 --vocab 128 --precision bf16 | tgc-opt | FileCheck %s --check-prefix=BF16
// BF16: tg.convert %{{.*}} : tensor<2x16x64xf32> -> tensor<2x16x64xbf16>
// BF16-NEXT: tg.convert %{{.*}} : tensor<64x192xf32> -> tensor<64x192xbf16>
// BF16-NEXT: tg.matmul {{.*}} : (tensor<2x16x64xbf16>, tensor<64x192xbf16>) -> tensor<2x16x192xbf16>
// BF16-NEXT: tg.convert %{{.*}} : tensor<2x16x192xbf16> -> tensor<2x16x192xf32>
// BF16: tg.attention {{.*}} causal scale = 2.500000e-01 : (tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>, tensor<2x4x16x16xbf16>) -> (tensor<2x4x16x16xbf16>, tensor<2x4x16xf32>)
// BF16: tg.matmul {{.*}} transpose_b : (tensor<2x16x64xbf16>, tensor<128x64xbf16>) -> tensor<2x16x128xbf16>
// BF16: tg.cross_entropy mean {{.*}} : (tensor<2x16x128xf32>, tensor<2x16xi64>)
