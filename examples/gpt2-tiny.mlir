// GPT-2 forward pass and mean cross-entropy loss, written by benchmarks/gen_gpt.py.
// Regenerate (from the repository root): python3 benchmarks/gen_gpt.py --layers 2 --hidden 64 --heads 4 --seq 16 --batch 2 --vocab 128 --dropout 0.1
// 2 layers, hidden 64, 4 heads of 16, seq 16, batch 2, vocab 128, dropout 0.1, f32: 109312 parameters.
// labels[b, t] is the token after input_ids[b, t] (shifted by the data pipeline).

func.func @gpt2(
    %input_ids: tensor<2x16xi64> {tg.role = "input", tg.name = "input_ids"},
    %labels: tensor<2x16xi64> {tg.role = "label", tg.name = "labels"},
    %dropout_seed: tensor<i64> {tg.role = "hyper", tg.name = "dropout_seed"},
    %wte: tensor<128x64xf32> {tg.role = "param", tg.name = "wte.weight"},
    %wpe: tensor<16x64xf32> {tg.role = "param", tg.name = "wpe.weight"},
    %h0_ln_1_w: tensor<64xf32> {tg.role = "param", tg.name = "h.0.ln_1.weight"},
    %h0_ln_1_b: tensor<64xf32> {tg.role = "param", tg.name = "h.0.ln_1.bias"},
    %h0_c_attn_w: tensor<64x192xf32> {tg.role = "param", tg.name = "h.0.attn.c_attn.weight"},
    %h0_c_attn_b: tensor<192xf32> {tg.role = "param", tg.name = "h.0.attn.c_attn.bias"},
    %h0_attn_c_proj_w: tensor<64x64xf32> {tg.role = "param", tg.name = "h.0.attn.c_proj.weight"},
    %h0_attn_c_proj_b: tensor<64xf32> {tg.role = "param", tg.name = "h.0.attn.c_proj.bias"},
    %h0_ln_2_w: tensor<64xf32> {tg.role = "param", tg.name = "h.0.ln_2.weight"},
    %h0_ln_2_b: tensor<64xf32> {tg.role = "param", tg.name = "h.0.ln_2.bias"},
    %h0_c_fc_w: tensor<64x256xf32> {tg.role = "param", tg.name = "h.0.mlp.c_fc.weight"},
    %h0_c_fc_b: tensor<256xf32> {tg.role = "param", tg.name = "h.0.mlp.c_fc.bias"},
    %h0_mlp_c_proj_w: tensor<256x64xf32> {tg.role = "param", tg.name = "h.0.mlp.c_proj.weight"},
    %h0_mlp_c_proj_b: tensor<64xf32> {tg.role = "param", tg.name = "h.0.mlp.c_proj.bias"},
    %h1_ln_1_w: tensor<64xf32> {tg.role = "param", tg.name = "h.1.ln_1.weight"},
    %h1_ln_1_b: tensor<64xf32> {tg.role = "param", tg.name = "h.1.ln_1.bias"},
    %h1_c_attn_w: tensor<64x192xf32> {tg.role = "param", tg.name = "h.1.attn.c_attn.weight"},
    %h1_c_attn_b: tensor<192xf32> {tg.role = "param", tg.name = "h.1.attn.c_attn.bias"},
    %h1_attn_c_proj_w: tensor<64x64xf32> {tg.role = "param", tg.name = "h.1.attn.c_proj.weight"},
    %h1_attn_c_proj_b: tensor<64xf32> {tg.role = "param", tg.name = "h.1.attn.c_proj.bias"},
    %h1_ln_2_w: tensor<64xf32> {tg.role = "param", tg.name = "h.1.ln_2.weight"},
    %h1_ln_2_b: tensor<64xf32> {tg.role = "param", tg.name = "h.1.ln_2.bias"},
    %h1_c_fc_w: tensor<64x256xf32> {tg.role = "param", tg.name = "h.1.mlp.c_fc.weight"},
    %h1_c_fc_b: tensor<256xf32> {tg.role = "param", tg.name = "h.1.mlp.c_fc.bias"},
    %h1_mlp_c_proj_w: tensor<256x64xf32> {tg.role = "param", tg.name = "h.1.mlp.c_proj.weight"},
    %h1_mlp_c_proj_b: tensor<64xf32> {tg.role = "param", tg.name = "h.1.mlp.c_proj.bias"},
    %ln_f_w: tensor<64xf32> {tg.role = "param", tg.name = "ln_f.weight"},
    %ln_f_b: tensor<64xf32> {tg.role = "param", tg.name = "ln_f.bias"})
    -> (tensor<f32> {tg.role = "loss", tg.name = "loss"}) {
  // Token and position embeddings.
  %tok_emb = tg.embedding %wte[%input_ids] : (tensor<128x64xf32>, tensor<2x16xi64>) -> tensor<2x16x64xf32>
  %pos_emb = tg.broadcast_in_dim %wpe dims = [1, 2] : tensor<16x64xf32> -> tensor<2x16x64xf32>
  %emb = tg.add %tok_emb, %pos_emb : tensor<2x16x64xf32>
  %emb_drop = tg.dropout %emb, %dropout_seed rate = 1.000000e-01 stream = 0 : tensor<2x16x64xf32>, tensor<i64>

  // Layer 0: attention.
  %h0_ln1, %h0_ln1_mean, %h0_ln1_rstd = tg.layer_norm %emb_drop, %h0_ln_1_w, %h0_ln_1_b epsilon = 1.000000e-05 : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<2x16x64xf32>, tensor<2x16xf32>, tensor<2x16xf32>)
  %h0_qkv_mm = tg.matmul %h0_ln1, %h0_c_attn_w : (tensor<2x16x64xf32>, tensor<64x192xf32>) -> tensor<2x16x192xf32>
  %h0_qkv_bias = tg.broadcast_in_dim %h0_c_attn_b dims = [2] : tensor<192xf32> -> tensor<2x16x192xf32>
  %h0_qkv = tg.add %h0_qkv_mm, %h0_qkv_bias : tensor<2x16x192xf32>
  %h0_q_flat = tg.slice %h0_qkv [0:2, 0:16, 0:64] : tensor<2x16x192xf32> -> tensor<2x16x64xf32>
  %h0_q_split = tg.reshape %h0_q_flat : tensor<2x16x64xf32> -> tensor<2x16x4x16xf32>
  %h0_q = tg.transpose %h0_q_split perm = [0, 2, 1, 3] : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>
  %h0_k_flat = tg.slice %h0_qkv [0:2, 0:16, 64:128] : tensor<2x16x192xf32> -> tensor<2x16x64xf32>
  %h0_k_split = tg.reshape %h0_k_flat : tensor<2x16x64xf32> -> tensor<2x16x4x16xf32>
  %h0_k = tg.transpose %h0_k_split perm = [0, 2, 1, 3] : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>
  %h0_v_flat = tg.slice %h0_qkv [0:2, 0:16, 128:192] : tensor<2x16x192xf32> -> tensor<2x16x64xf32>
  %h0_v_split = tg.reshape %h0_v_flat : tensor<2x16x64xf32> -> tensor<2x16x4x16xf32>
  %h0_v = tg.transpose %h0_v_split perm = [0, 2, 1, 3] : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>
  %h0_attn, %h0_attn_lse = tg.attention %h0_q, %h0_k, %h0_v causal scale = 2.500000e-01 dropout = 1.000000e-01 seed %dropout_seed stream = 1 : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>, tensor<i64>) -> (tensor<2x4x16x16xf32>, tensor<2x4x16xf32>)
  %h0_attn_merge = tg.transpose %h0_attn perm = [0, 2, 1, 3] : tensor<2x4x16x16xf32> -> tensor<2x16x4x16xf32>
  %h0_attn_merged = tg.reshape %h0_attn_merge : tensor<2x16x4x16xf32> -> tensor<2x16x64xf32>
  %h0_attn_proj_mm = tg.matmul %h0_attn_merged, %h0_attn_c_proj_w : (tensor<2x16x64xf32>, tensor<64x64xf32>) -> tensor<2x16x64xf32>
  %h0_attn_proj_bias = tg.broadcast_in_dim %h0_attn_c_proj_b dims = [2] : tensor<64xf32> -> tensor<2x16x64xf32>
  %h0_attn_proj = tg.add %h0_attn_proj_mm, %h0_attn_proj_bias : tensor<2x16x64xf32>
  %h0_attn_drop = tg.dropout %h0_attn_proj, %dropout_seed rate = 1.000000e-01 stream = 2 : tensor<2x16x64xf32>, tensor<i64>
  %h0_res1 = tg.add %emb_drop, %h0_attn_drop : tensor<2x16x64xf32>
  // Layer 0: MLP.
  %h0_ln2, %h0_ln2_mean, %h0_ln2_rstd = tg.layer_norm %h0_res1, %h0_ln_2_w, %h0_ln_2_b epsilon = 1.000000e-05 : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<2x16x64xf32>, tensor<2x16xf32>, tensor<2x16xf32>)
  %h0_fc_mm = tg.matmul %h0_ln2, %h0_c_fc_w : (tensor<2x16x64xf32>, tensor<64x256xf32>) -> tensor<2x16x256xf32>
  %h0_fc_bias = tg.broadcast_in_dim %h0_c_fc_b dims = [2] : tensor<256xf32> -> tensor<2x16x256xf32>
  %h0_fc = tg.add %h0_fc_mm, %h0_fc_bias : tensor<2x16x256xf32>
  %h0_gelu = tg.gelu tanh %h0_fc : tensor<2x16x256xf32>
  %h0_mlp_proj_mm = tg.matmul %h0_gelu, %h0_mlp_c_proj_w : (tensor<2x16x256xf32>, tensor<256x64xf32>) -> tensor<2x16x64xf32>
  %h0_mlp_proj_bias = tg.broadcast_in_dim %h0_mlp_c_proj_b dims = [2] : tensor<64xf32> -> tensor<2x16x64xf32>
  %h0_mlp_proj = tg.add %h0_mlp_proj_mm, %h0_mlp_proj_bias : tensor<2x16x64xf32>
  %h0_mlp_drop = tg.dropout %h0_mlp_proj, %dropout_seed rate = 1.000000e-01 stream = 3 : tensor<2x16x64xf32>, tensor<i64>
  %h0_res2 = tg.add %h0_res1, %h0_mlp_drop : tensor<2x16x64xf32>

  // Layer 1: attention.
  %h1_ln1, %h1_ln1_mean, %h1_ln1_rstd = tg.layer_norm %h0_res2, %h1_ln_1_w, %h1_ln_1_b epsilon = 1.000000e-05 : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<2x16x64xf32>, tensor<2x16xf32>, tensor<2x16xf32>)
  %h1_qkv_mm = tg.matmul %h1_ln1, %h1_c_attn_w : (tensor<2x16x64xf32>, tensor<64x192xf32>) -> tensor<2x16x192xf32>
  %h1_qkv_bias = tg.broadcast_in_dim %h1_c_attn_b dims = [2] : tensor<192xf32> -> tensor<2x16x192xf32>
  %h1_qkv = tg.add %h1_qkv_mm, %h1_qkv_bias : tensor<2x16x192xf32>
  %h1_q_flat = tg.slice %h1_qkv [0:2, 0:16, 0:64] : tensor<2x16x192xf32> -> tensor<2x16x64xf32>
  %h1_q_split = tg.reshape %h1_q_flat : tensor<2x16x64xf32> -> tensor<2x16x4x16xf32>
  %h1_q = tg.transpose %h1_q_split perm = [0, 2, 1, 3] : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>
  %h1_k_flat = tg.slice %h1_qkv [0:2, 0:16, 64:128] : tensor<2x16x192xf32> -> tensor<2x16x64xf32>
  %h1_k_split = tg.reshape %h1_k_flat : tensor<2x16x64xf32> -> tensor<2x16x4x16xf32>
  %h1_k = tg.transpose %h1_k_split perm = [0, 2, 1, 3] : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>
  %h1_v_flat = tg.slice %h1_qkv [0:2, 0:16, 128:192] : tensor<2x16x192xf32> -> tensor<2x16x64xf32>
  %h1_v_split = tg.reshape %h1_v_flat : tensor<2x16x64xf32> -> tensor<2x16x4x16xf32>
  %h1_v = tg.transpose %h1_v_split perm = [0, 2, 1, 3] : tensor<2x16x4x16xf32> -> tensor<2x4x16x16xf32>
  %h1_attn, %h1_attn_lse = tg.attention %h1_q, %h1_k, %h1_v causal scale = 2.500000e-01 dropout = 1.000000e-01 seed %dropout_seed stream = 4 : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>, tensor<i64>) -> (tensor<2x4x16x16xf32>, tensor<2x4x16xf32>)
  %h1_attn_merge = tg.transpose %h1_attn perm = [0, 2, 1, 3] : tensor<2x4x16x16xf32> -> tensor<2x16x4x16xf32>
  %h1_attn_merged = tg.reshape %h1_attn_merge : tensor<2x16x4x16xf32> -> tensor<2x16x64xf32>
  %h1_attn_proj_mm = tg.matmul %h1_attn_merged, %h1_attn_c_proj_w : (tensor<2x16x64xf32>, tensor<64x64xf32>) -> tensor<2x16x64xf32>
  %h1_attn_proj_bias = tg.broadcast_in_dim %h1_attn_c_proj_b dims = [2] : tensor<64xf32> -> tensor<2x16x64xf32>
  %h1_attn_proj = tg.add %h1_attn_proj_mm, %h1_attn_proj_bias : tensor<2x16x64xf32>
  %h1_attn_drop = tg.dropout %h1_attn_proj, %dropout_seed rate = 1.000000e-01 stream = 5 : tensor<2x16x64xf32>, tensor<i64>
  %h1_res1 = tg.add %h0_res2, %h1_attn_drop : tensor<2x16x64xf32>
  // Layer 1: MLP.
  %h1_ln2, %h1_ln2_mean, %h1_ln2_rstd = tg.layer_norm %h1_res1, %h1_ln_2_w, %h1_ln_2_b epsilon = 1.000000e-05 : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<2x16x64xf32>, tensor<2x16xf32>, tensor<2x16xf32>)
  %h1_fc_mm = tg.matmul %h1_ln2, %h1_c_fc_w : (tensor<2x16x64xf32>, tensor<64x256xf32>) -> tensor<2x16x256xf32>
  %h1_fc_bias = tg.broadcast_in_dim %h1_c_fc_b dims = [2] : tensor<256xf32> -> tensor<2x16x256xf32>
  %h1_fc = tg.add %h1_fc_mm, %h1_fc_bias : tensor<2x16x256xf32>
  %h1_gelu = tg.gelu tanh %h1_fc : tensor<2x16x256xf32>
  %h1_mlp_proj_mm = tg.matmul %h1_gelu, %h1_mlp_c_proj_w : (tensor<2x16x256xf32>, tensor<256x64xf32>) -> tensor<2x16x64xf32>
  %h1_mlp_proj_bias = tg.broadcast_in_dim %h1_mlp_c_proj_b dims = [2] : tensor<64xf32> -> tensor<2x16x64xf32>
  %h1_mlp_proj = tg.add %h1_mlp_proj_mm, %h1_mlp_proj_bias : tensor<2x16x64xf32>
  %h1_mlp_drop = tg.dropout %h1_mlp_proj, %dropout_seed rate = 1.000000e-01 stream = 6 : tensor<2x16x64xf32>, tensor<i64>
  %h1_res2 = tg.add %h1_res1, %h1_mlp_drop : tensor<2x16x64xf32>

  // Final layer norm, LM head tied to wte, mean cross-entropy.
  %ln_f, %ln_f_mean, %ln_f_rstd = tg.layer_norm %h1_res2, %ln_f_w, %ln_f_b epsilon = 1.000000e-05 : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<2x16x64xf32>, tensor<2x16xf32>, tensor<2x16xf32>)
  %logits = tg.matmul %ln_f, %wte transpose_b : (tensor<2x16x64xf32>, tensor<128x64xf32>) -> tensor<2x16x128xf32>
  %loss, %logsumexp = tg.cross_entropy mean %logits, %labels : (tensor<2x16x128xf32>, tensor<2x16xi64>) -> (tensor<f32>, tensor<2x16xf32>)
  return %loss : tensor<f32>
}
