#!/usr/bin/env python3
"""Small Hugging Face models built from their configs, exported with both of
torch.onnx.export's exporters, with PyTorch's references, for
test/Import/hf-*.test (checked by check_export.py, which needs no PyTorch).

Families (tiny configs: hidden 32, 2 layers, vocab 100, sequence 8, batch 2):
  gpt2     GPT2LMHeadModel (learned positions, LM head tied to wte)
  llama    LlamaForCausalLM, grouped-query attention (4 heads on 2)
  mistral  MistralForCausalLM, sliding window 4 (shorter than the sequence)
  qwen2    Qwen2ForCausalLM, tie_word_embeddings (the head is embed_tokens)
  phi      PhiForCausalLM (partial rotary, parallel attention and MLP)
  opt      OPTForCausalLM (positions from a CumSum of the mask)
  bert     BertForMaskedLM (labels -100 except at 5 positions)
  gemma2   Gemma2ForCausalLM: attention logits soft-capped before the mask
           (attn_logit_softcapping 0.02, a cap the tiny model's scores of
           about 0.03 reach, so that it bends them; Gemma 2's own is 50),
           a sliding window of 4 on the first layer and a global one on the
           second, final logits capped at 30
  t5       T5ForConditionalGeneration (decoder inputs from the labels):
           a trained relative position bias (8 buckets) added to the
           unscaled scores, shared by the encoder's layers, the decoder's
           summed with its causal mask of finfo.min; cross-attention
           without a bias (dynamo export only, for size)
  deberta  DebertaV2ForMaskedLM: disentangled relative attention
           (position buckets, c2p and p2c gathers; the dynamo exporter reads
           the shared relative embeddings through Identity aliases)
  mamba    MambaForCausalLM: the selective scan, sequential (no CUDA
           kernels on the CPU)
  vit, swin, convnext, resnet  their ...ForImageClassification on 16 x 16
           images (pixel_values), 5 classes: patches and attention; Swin's
           shifted windows (rolls, window partitions); depthwise 7 x 7
           convolutions and LayerNorm over channels; convolutions and
           BatchNorm (eval). The dynamo exporter fails on Swin (its
           shifted-window mask does not decompose).
  whisper  WhisperForConditionalGeneration on 8 log-mel bins x 16 frames
           (input_features): a convolutional front end, encoder-decoder
           cross-attention, decoder inputs from the labels
Not checked in (--families or --all builds them):
  gemma3   Gemma3ForCausalLM (text): q/k norms, sliding window 4
  qwen3    Qwen3ForCausalLM: q/k norms
  olmo2    Olmo2ForCausalLM: norms after attention and MLP, q/k norms
  starcoder2  Starcoder2ForCausalLM: biases, LayerNorm, GELU MLP
  gptneox  GPTNeoXForCausalLM: fused QKV, parallel residual, partial rotary
  falcon   FalconForCausalLM (new decoder architecture, 2 KV heads)
  granite  GraniteForCausalLM: embedding, residual and logit multipliers
  bart     BartForConditionalGeneration (learned positions, cross-attention)
  distilbert, roberta, electra, albert  their ...ForMaskedLM
  gptj     GPTJForCausalLM (interleaved partial rotary)
  bloom    BloomForCausalLM (ALiBi through baddbmm on merged batch x heads,
           raised through the views of q, k and v)
  mixtral  MixtralForCausalLM: 4 experts, 2 per token (router top-k), the
           experts as transformers' batched_mm implementation: each
           (token, expert) pair's weights gathered by the routing, products
           batched, the k outputs weighted and summed: static shapes. (Its
           "eager" loop over the experts selects each expert's tokens by a
           NonZero of the routing, a shape that depends on the data: tgc
           imports its TorchScript export with the NonZeros dense, the
           dynamo exporter fails on it; TGC_EXPERTS=eager exports that
           form, mixtral-eager/ holds it.)
  qwen2moe Qwen2MoeForCausalLM: 4 experts and a gated shared expert (as
           mixtral)
  qwen3moe, olmoe, granitemoe  their ...ForCausalLM (MoE as mixtral: q/k
           norms, OLMoE's and Granite's routing and multipliers)
  gptoss   GptOssForCausalLM: attention sinks (a learned logit per head
           joining each softmax, its column dropped after), sliding and
           full attention layers, experts with biases and a clamped SwiGLU
           (eager attention only: no SDPA path in transformers)
  deepseekv3  DeepseekV3ForCausalLM: multi-head latent attention (low-rank
           q and kv projections, a decoupled rotary part), a dense first
           layer, then experts routed by sigmoid scores within the top
           group, and a shared expert
  phi3     Phi3ForCausalLM: fused qkv and gate/up projections
  smollm3  SmolLM3ForCausalLM: a layer without rotary positions (NoPE)
  glm4     Glm4ForCausalLM: partial rotary, norms after attention and MLP
           (the TorchScript exporter fails in PyTorch)
  qwen3next  Qwen3NextForCausalLM: a gated DeltaNet linear-attention layer
           (the chunked delta rule: causal convolution, triangular
           solves, a recurrence over chunks), a gated full-attention
           layer, experts and a shared expert (the TorchScript exporter
           fails in PyTorch: linalg_solve_triangular)
  llama4   Llama4ForCausalLM (text): chunked attention, NoPE layers,
           experts (both exporters fail in PyTorch: complex rotary)
  modernbert  ModernBertForMaskedLM: alternating local (window 4) and
           global attention, rotary positions, GeGLU
  phimoe, glm4moe, ernie45moe, hunyuanmoe, dots1, flexolmo, lfm2moe
           their ...ForCausalLM, experts as mixtral (Phi-MoE's sparsemixer
           routing; GLM-4-MoE's and dots1's sigmoid routing with a
           correction bias and shared expert; LFM2-MoE's short
           convolutions). ERNIE-4.5-MoE's TorchScript export fails in
           PyTorch (a shape-inference assertion); Phi-MoE's dynamo export
           failed once in torch.export's decomposition and passed when
           run again.
  jetmoe, dbrx  their own expert loops, whose token counts depend on the
           routing: JetMoE's split by the counts tgc refuses at import,
           naming the node; DBRX's NonZero it imports densely (as
           mixtral's eager loop)
  deepseekv2  DeepseekV2ForCausalLM (both exporters fail in PyTorch:
           complex rotary)
  cohere, cohere2, stablelm, persimmon, nemotron, exaone4, seedoss,
  apertus, arcee, olmo3, ministral, helium, hunyuandense, ernie45,
  difflama, glm, vaultgemma, doge, bitnet
           their ...ForCausalLM from Llama's configuration fields
           (LLAMA_LIKE): parallel blocks, partial rotary, q/k norms, sliding
           windows, xIELU, ReLU^2, differential and dynamic-mask attention,
           BitNet's quantized linears. Their TorchScript exports fail in
           PyTorch for Cohere, Cohere 2, Helium, ERNIE 4.5 and GLM
           (shape-inference assertions), Apertus (aten::expm1) and
           DiffLlama (aten::rms_norm).

Variants of each (STEM = FAMILY-EXPORTER-VARIANT):
  EXPORTER  ts      TorchScript exporter (dynamo=False), opset 17,
                    do_constant_folding=False so that the weights keep their
                    state-dict names (folding pre-transposes them into
                    onnx::MatMul_N initializers that no --parameters list names)
            dynamo  the dynamo exporter (dynamo=True), opset 18
  VARIANT   loss    attn_implementation="eager", inputs (input_ids, labels),
                    outputs (loss, logits), the model's own loss
            logits  eager, input_ids only, logits only
            sdpa    attn_implementation="sdpa", (loss, logits)
            mask    eager, (input_ids, attention_mask, labels), a left-padded
                    mask (the second row's first 3 positions are padding,
                    their labels -100), (loss, logits)
            train   eager, (loss, logits), in training mode with dropout
                    0.1 (every nn.Dropout's p and an attention's
                    `attention_dropout`), exported with
                    training=TrainingMode.TRAINING: the Dropouts carry
                    training_mode = true (no reference: PyTorch's masks are
                    its RNG's, tgc's its Philox stream's; see
                    test/Import/hf-gpt2-train.test)
            defaults  eager, (loss, logits), as a user exports: the model
                    as initialized (no perturbation: the norm weights are
                    all ones) and each exporter with its defaults
                    (do_constant_folding=True, optimize=True), so that the
                    dynamo exporter merges the equal norm weights and both
                    fold the Linear weights' transposes into new tensors;
                    the node metadata the importer reads is kept

Written to OUT_DIR/FAMILY/ (default: next to this script):
  STEM.onnx         the export
  params.txt        the names of model.named_parameters(), one a line, for
                    `tgc import --parameters`
  inputs/NAME.npy   the batch (input_ids, labels, attention_mask)
  ref.npz           PyTorch's loss and logits and, as grad/NAME, autograd's
                    gradient of the loss with respect to every parameter,
                    on the batch without a mask (loss, logits, sdpa)
  ref-mask.npz      the same with the left-padded mask (mask)
  ref-defaults.npz  the same for the model without the perturbation
                    (defaults)
The sdpa model's loss and logits are asserted to agree with the eager one's
(1e-5), so the sdpa exports are checked against ref.npz.

Every parameter gets a small seeded perturbation after the model's own
initialization: with default init the norm weights are all ones and the
biases all zeros, and the dynamo exporter merges initializers of equal values
into one tensor, which would no longer be the model's parameters.

Built with (CPU, Python 3.11):
  torch 2.15.0, transformers 5.24.0, onnx 1.23.2, onnxscript 0.7.2,
  numpy 2.4.6
in a virtual environment outside the repository:
  python3 -m venv /work/venv-hf
  /work/venv-hf/bin/pip install torch transformers onnx onnxscript numpy
Run:
  /work/venv-hf/bin/python make_exports.py [--out DIR] [--families a,b]
      [--exports STEM,...]   (default: the checked-in selection, CHECKED_IN)
      [--all]                (every family x exporter x variant)
"""
import argparse
import copy
import os
import sys
import warnings

import numpy as np
import onnx
import torch
import transformers

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from export_helpers import strip_node_annotations, write_params  # noqa: E402

BATCH, SEQ, VOCAB, HIDDEN = 2, 8, 100, 32
PAD = 3  # left padding of the second row in the mask variant

EXPORTERS = ("ts", "dynamo")
VARIANTS = ("loss", "logits", "sdpa", "mask", "defaults", "train")
TRAIN_DROPOUT = 0.1


def config(family, attn):
    common = dict(vocab_size=VOCAB, num_hidden_layers=2, num_attention_heads=4,
                  max_position_embeddings=16, attn_implementation=attn)
    if family == "gpt2":
        return transformers.GPT2Config(
            vocab_size=VOCAB, n_positions=16, n_embd=HIDDEN, n_layer=2, n_head=4,
            resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
            attn_implementation=attn), transformers.GPT2LMHeadModel
    if family == "llama":
        return transformers.LlamaConfig(
            hidden_size=HIDDEN, intermediate_size=64, num_key_value_heads=2,
            **common), transformers.LlamaForCausalLM
    if family == "mistral":
        return transformers.MistralConfig(
            hidden_size=HIDDEN, intermediate_size=64, num_key_value_heads=2,
            sliding_window=4, **common), transformers.MistralForCausalLM
    if family == "qwen2":
        return transformers.Qwen2Config(
            hidden_size=HIDDEN, intermediate_size=64, num_key_value_heads=2,
            tie_word_embeddings=True, **common), transformers.Qwen2ForCausalLM
    if family == "phi":
        return transformers.PhiConfig(
            hidden_size=HIDDEN, intermediate_size=64, partial_rotary_factor=0.5,
            resid_pdrop=0.0, embd_pdrop=0.0, attention_dropout=0.0,
            **common), transformers.PhiForCausalLM
    if family == "opt":
        return transformers.OPTConfig(
            vocab_size=VOCAB, hidden_size=HIDDEN, ffn_dim=64, num_hidden_layers=2,
            num_attention_heads=4, max_position_embeddings=16,
            word_embed_proj_dim=HIDDEN, dropout=0.0, attention_dropout=0.0,
            activation_dropout=0.0, attn_implementation=attn), transformers.OPTForCausalLM
    if family == "bert":
        return transformers.BertConfig(
            hidden_size=HIDDEN, intermediate_size=64, type_vocab_size=2,
            hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
            **common), transformers.BertForMaskedLM
    if family == "gemma2":
        return transformers.Gemma2Config(
            hidden_size=HIDDEN, intermediate_size=64, num_key_value_heads=2,
            head_dim=8, query_pre_attn_scalar=8, attn_logit_softcapping=0.02,
            final_logit_softcapping=30.0, sliding_window=4,
            **common), transformers.Gemma2ForCausalLM
    if family == "t5":
        return transformers.T5Config(
            vocab_size=VOCAB, d_model=HIDDEN, d_kv=8, d_ff=64, num_layers=2,
            num_decoder_layers=2, num_heads=4, dropout_rate=0.0,
            relative_attention_num_buckets=8,
            relative_attention_max_distance=16, decoder_start_token_id=0,
            pad_token_id=0,
            attn_implementation=attn), transformers.T5ForConditionalGeneration
    if family == "gemma3":
        return transformers.Gemma3TextConfig(
            hidden_size=HIDDEN, intermediate_size=64, num_key_value_heads=2,
            head_dim=8, query_pre_attn_scalar=8, sliding_window=4,
            **common), transformers.Gemma3ForCausalLM
    if family == "qwen3":
        return transformers.Qwen3Config(
            hidden_size=HIDDEN, intermediate_size=64, num_key_value_heads=2,
            head_dim=8, **common), transformers.Qwen3ForCausalLM
    if family == "olmo2":
        return transformers.Olmo2Config(
            hidden_size=HIDDEN, intermediate_size=64, num_key_value_heads=2,
            **common), transformers.Olmo2ForCausalLM
    if family == "starcoder2":
        return transformers.Starcoder2Config(
            hidden_size=HIDDEN, intermediate_size=64, num_key_value_heads=2,
            residual_dropout=0.0, embedding_dropout=0.0, attention_dropout=0.0,
            **common), transformers.Starcoder2ForCausalLM
    if family == "gptneox":
        return transformers.GPTNeoXConfig(
            hidden_size=HIDDEN, intermediate_size=64, hidden_dropout=0.0,
            attention_dropout=0.0, **common), transformers.GPTNeoXForCausalLM
    if family == "falcon":
        return transformers.FalconConfig(
            vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=2,
            num_attention_heads=4, num_kv_heads=2, new_decoder_architecture=True,
            hidden_dropout=0.0, attention_dropout=0.0,
            attn_implementation=attn), transformers.FalconForCausalLM
    if family == "granite":
        return transformers.GraniteConfig(
            hidden_size=HIDDEN, intermediate_size=64, num_key_value_heads=2,
            **common), transformers.GraniteForCausalLM
    encoder = dict(vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=2,
                   num_attention_heads=4, intermediate_size=64,
                   hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                   attn_implementation=attn)
    if family == "bart":
        return transformers.BartConfig(
            vocab_size=VOCAB, d_model=HIDDEN, encoder_layers=2, decoder_layers=2,
            encoder_attention_heads=4, decoder_attention_heads=4,
            encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=16,
            dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
            attn_implementation=attn), transformers.BartForConditionalGeneration
    if family == "distilbert":
        return transformers.DistilBertConfig(
            vocab_size=VOCAB, dim=HIDDEN, n_layers=2, n_heads=4, hidden_dim=64,
            max_position_embeddings=16, dropout=0.0, attention_dropout=0.0,
            attn_implementation=attn), transformers.DistilBertForMaskedLM
    if family == "roberta":
        return transformers.RobertaConfig(
            max_position_embeddings=20, **encoder), transformers.RobertaForMaskedLM
    if family == "electra":
        return transformers.ElectraConfig(
            embedding_size=16, max_position_embeddings=16,
            **encoder), transformers.ElectraForMaskedLM
    if family == "albert":
        return transformers.AlbertConfig(
            embedding_size=16, max_position_embeddings=16,
            **encoder), transformers.AlbertForMaskedLM
    if family == "gptj":
        return transformers.GPTJConfig(
            vocab_size=VOCAB, n_embd=HIDDEN, n_layer=2, n_head=4, rotary_dim=4,
            n_positions=16, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
            attn_implementation=attn), transformers.GPTJForCausalLM
    image = dict(image_size=16, num_channels=3, num_labels=CLASSES)
    if family == "vit":
        return transformers.ViTConfig(
            hidden_size=HIDDEN, num_hidden_layers=2, num_attention_heads=4,
            intermediate_size=64, patch_size=4, hidden_dropout_prob=0.0,
            attention_probs_dropout_prob=0.0, attn_implementation=attn,
            **image), transformers.ViTForImageClassification
    if family == "swin":
        return transformers.SwinConfig(
            embed_dim=16, depths=[2, 2], num_heads=[2, 4], window_size=2,
            patch_size=2, drop_path_rate=0.0, hidden_dropout_prob=0.0,
            attention_probs_dropout_prob=0.0,
            **image), transformers.SwinForImageClassification
    if family == "convnext":
        return transformers.ConvNextConfig(
            num_stages=2, hidden_sizes=[8, 16], depths=[1, 1], patch_size=2,
            drop_path_rate=0.0, **image), transformers.ConvNextForImageClassification
    if family == "resnet":
        return transformers.ResNetConfig(
            embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1],
            layer_type="basic", **image), transformers.ResNetForImageClassification
    if family == "whisper":
        return transformers.WhisperConfig(
            vocab_size=VOCAB, num_mel_bins=MELS, encoder_layers=2,
            decoder_layers=2, encoder_attention_heads=4,
            decoder_attention_heads=4, d_model=HIDDEN, encoder_ffn_dim=64,
            decoder_ffn_dim=64, max_source_positions=FRAMES // 2,
            max_target_positions=16, decoder_start_token_id=1, pad_token_id=0,
            dropout=0.0, attn_implementation=attn), \
            transformers.WhisperForConditionalGeneration
    if family == "mixtral":
        return transformers.MixtralConfig(
            hidden_size=HIDDEN, intermediate_size=48, num_key_value_heads=2,
            num_local_experts=4, num_experts_per_tok=2,
            router_aux_loss_coef=0.0, **common), transformers.MixtralForCausalLM
    if family == "qwen2moe":
        return transformers.Qwen2MoeConfig(
            hidden_size=HIDDEN, intermediate_size=48, num_key_value_heads=2,
            num_experts=4, num_experts_per_tok=2, moe_intermediate_size=24,
            shared_expert_intermediate_size=32, router_aux_loss_coef=0.0,
            **common), transformers.Qwen2MoeForCausalLM
    moe = dict(hidden_size=HIDDEN, intermediate_size=48,
               num_key_value_heads=2, num_experts_per_tok=2,
               router_aux_loss_coef=0.0, **common)
    if family == "qwen3moe":
        return transformers.Qwen3MoeConfig(
            num_experts=4, moe_intermediate_size=24, head_dim=8,
            **moe), transformers.Qwen3MoeForCausalLM
    if family == "olmoe":
        return transformers.OlmoeConfig(
            num_experts=4, **moe), transformers.OlmoeForCausalLM
    if family == "granitemoe":
        return transformers.GraniteMoeConfig(
            num_local_experts=4, **moe), transformers.GraniteMoeForCausalLM
    if family == "gptoss":
        return transformers.GptOssConfig(
            num_local_experts=4, head_dim=8, sliding_window=4,
            layer_types=["sliding_attention", "full_attention"],
            **moe), transformers.GptOssForCausalLM
    if family == "phimoe":
        return transformers.PhimoeConfig(
            num_local_experts=4, **moe), transformers.PhimoeForCausalLM
    if family == "jetmoe":
        return transformers.JetMoeConfig(
            vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=2,
            num_key_value_heads=4, kv_channels=8, intermediate_size=24,
            num_local_experts=4, num_experts_per_tok=2,
            max_position_embeddings=16, aux_loss_coef=0.0,
            attn_implementation=attn), transformers.JetMoeForCausalLM
    if family == "dbrx":
        return transformers.DbrxConfig(
            d_model=HIDDEN, n_heads=4, n_layers=2, max_seq_len=16,
            vocab_size=VOCAB,
            attn_config=dict(kv_n_heads=2, clip_qkv=8.0, rope_theta=10000.0),
            ffn_config=dict(ffn_hidden_size=24, moe_num_experts=4,
                            moe_top_k=2, moe_loss_weight=0.0),
            attn_implementation=attn), transformers.DbrxForCausalLM
    if family in ("glm4moe", "dots1"):
        # DeepSeek-V3's routing (a correction bias, groups) and shared expert.
        prefix = {"glm4moe": "Glm4Moe", "dots1": "Dots1"}[family]
        return getattr(transformers, prefix + "Config")(
            n_routed_experts=4, n_shared_experts=1, moe_intermediate_size=24,
            first_k_dense_replace=1, n_group=1, topk_group=1, head_dim=8,
            **moe), getattr(transformers, prefix + "ForCausalLM")
    if family == "ernie45moe":
        return transformers.Ernie4_5_MoeConfig(
            moe_num_experts=4, moe_k=2, moe_intermediate_size=24,
            moe_num_shared_experts=1, moe_layer_start_index=1,
            **moe), transformers.Ernie4_5_MoeForCausalLM
    if family == "hunyuanmoe":
        return transformers.HunYuanMoEV1Config(
            num_experts=4, moe_topk=2, head_dim=8,
            **moe), transformers.HunYuanMoEV1ForCausalLM
    if family == "flexolmo":
        return transformers.FlexOlmoConfig(
            num_experts=4, pad_token_id=0, **moe), \
            transformers.FlexOlmoForCausalLM
    if family == "deepseekv2":
        return transformers.DeepseekV2Config(
            n_routed_experts=4, n_shared_experts=1, moe_intermediate_size=24,
            first_k_dense_replace=1, kv_lora_rank=16, q_lora_rank=None,
            qk_rope_head_dim=4, qk_nope_head_dim=8, v_head_dim=8,
            **dict(moe, num_key_value_heads=4)), \
            transformers.DeepseekV2ForCausalLM
    if family == "lfm2moe":
        return transformers.Lfm2MoeConfig(
            num_experts=4, moe_intermediate_size=24, num_dense_layers=1,
            layer_types=["full_attention", "conv"],
            **moe), transformers.Lfm2MoeForCausalLM
    if family == "deepseekv3":
        return transformers.DeepseekV3Config(
            hidden_size=HIDDEN, intermediate_size=48, moe_intermediate_size=24,
            num_key_value_heads=4, n_routed_experts=4, n_shared_experts=1,
            num_experts_per_tok=2, n_group=2, topk_group=1,
            first_k_dense_replace=1, kv_lora_rank=16, q_lora_rank=16,
            qk_rope_head_dim=4, qk_nope_head_dim=8, v_head_dim=8,
            **common), transformers.DeepseekV3ForCausalLM
    if family == "llama4":
        return transformers.Llama4TextConfig(
            hidden_size=HIDDEN, intermediate_size=24, intermediate_size_mlp=48,
            num_key_value_heads=2, head_dim=8, num_local_experts=4,
            num_experts_per_tok=1, interleave_moe_layer_step=1,
            attention_chunk_size=4, no_rope_layers=[1, 0],
            router_aux_loss_coef=0.0, **common), transformers.Llama4ForCausalLM
    if family == "smollm3":
        return transformers.SmolLM3Config(
            hidden_size=HIDDEN, intermediate_size=64, num_key_value_heads=2,
            no_rope_layers=[1, 0], pad_token_id=0,
            **common), transformers.SmolLM3ForCausalLM
    if family == "glm4":
        return transformers.Glm4Config(
            hidden_size=HIDDEN, intermediate_size=64, num_key_value_heads=2,
            head_dim=8, pad_token_id=0, **common), transformers.Glm4ForCausalLM
    if family == "qwen3next":
        return transformers.Qwen3NextConfig(
            hidden_size=HIDDEN, intermediate_size=48, num_key_value_heads=2,
            head_dim=8, num_experts=4, num_experts_per_tok=2,
            moe_intermediate_size=24, shared_expert_intermediate_size=24,
            linear_num_key_heads=2, linear_num_value_heads=4,
            linear_key_head_dim=8, linear_value_head_dim=8,
            layer_types=["linear_attention", "full_attention"],
            router_aux_loss_coef=0.0, **common), transformers.Qwen3NextForCausalLM
    if family == "phi3":
        return transformers.Phi3Config(
            hidden_size=HIDDEN, intermediate_size=64, num_key_value_heads=2,
            resid_pdrop=0.0, embd_pdrop=0.0, attention_dropout=0.0,
            pad_token_id=0, **common), transformers.Phi3ForCausalLM
    if family == "modernbert":
        return transformers.ModernBertConfig(
            vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=2,
            num_attention_heads=4, intermediate_size=64,
            max_position_embeddings=16, local_attention=4,
            global_attn_every_n_layers=2, pad_token_id=0,
            attn_implementation=attn), transformers.ModernBertForMaskedLM
    if family == "deberta":
        return transformers.DebertaV2Config(
            vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=2,
            num_attention_heads=4, intermediate_size=64,
            max_position_embeddings=16, relative_attention=True,
            position_buckets=8, max_relative_positions=16,
            pos_att_type=["p2c", "c2p"], hidden_dropout_prob=0.0,
            attention_probs_dropout_prob=0.0,
            attn_implementation=attn), transformers.DebertaV2ForMaskedLM
    if family == "mamba":
        return transformers.MambaConfig(
            vocab_size=VOCAB, hidden_size=HIDDEN, state_size=4,
            num_hidden_layers=2, expand=2, conv_kernel=4,
            use_mambapy=False), transformers.MambaForCausalLM
    if family == "bloom":
        return transformers.BloomConfig(
            vocab_size=VOCAB, hidden_size=HIDDEN, n_layer=2, n_head=4,
            hidden_dropout=0.0, attention_dropout=0.0,
            attn_implementation=attn), transformers.BloomForCausalLM
    if family in LLAMA_LIKE:
        # Decoders that take Llama's configuration fields.
        names, extra = LLAMA_LIKE[family]
        kwargs = dict(hidden_size=HIDDEN, intermediate_size=64,
                      num_key_value_heads=2, **common)
        kwargs.update(extra)
        return (getattr(transformers, names + "Config")(**kwargs),
                getattr(transformers, names + "ForCausalLM"))
    raise ValueError(family)


# family: (the transformers class prefix, configuration fields beyond
# Llama's).
LLAMA_LIKE = {
    "cohere": ("Cohere", {}),
    "cohere2": ("Cohere2", dict(sliding_window=4,
                                layer_types=["sliding_attention",
                                             "full_attention"])),
    "stablelm": ("StableLm", {}),
    "persimmon": ("Persimmon", dict(num_key_value_heads=4)),
    "nemotron": ("Nemotron", {}),
    "exaone4": ("Exaone4", dict(sliding_window=4,
                                layer_types=["sliding_attention",
                                             "full_attention"])),
    "seedoss": ("SeedOss", dict(head_dim=8, attention_dropout=0.0,
                                residual_dropout=0.0)),
    "apertus": ("Apertus", {}),
    "arcee": ("Arcee", {}),
    "olmo3": ("Olmo3", dict(sliding_window=4,
                            layer_types=["sliding_attention",
                                         "full_attention"])),
    "ministral": ("Ministral", dict(sliding_window=4, head_dim=8)),
    "helium": ("Helium", dict(head_dim=8)),
    "hunyuandense": ("HunYuanDenseV1", dict(head_dim=8)),
    "ernie45": ("Ernie4_5", dict(head_dim=8)),
    "difflama": ("DiffLlama", {}),
    "glm": ("Glm", dict(head_dim=8, pad_token_id=0)),
    "vaultgemma": ("VaultGemma", dict(head_dim=8)),
    "doge": ("Doge", {}),
    "bitnet": ("BitNet", {}),
}


FAMILIES = ("gpt2", "llama", "mistral", "qwen2", "phi", "opt", "bert",
            "gemma2", "t5", "gemma3", "qwen3", "olmo2", "starcoder2", "gptneox",
            "falcon", "granite", "bart", "distilbert", "roberta", "electra",
            "albert", "gptj", "bloom", "mixtral", "qwen2moe", "deberta",
            "mamba", "vit", "swin", "convnext", "resnet", "whisper",
            "qwen3moe", "olmoe", "granitemoe", "gptoss", "deepseekv3", "phi3",
            "modernbert", "llama4", "smollm3", "glm4", "qwen3next",
            "phimoe", "jetmoe", "dbrx", "glm4moe", "ernie45moe", "hunyuanmoe",
            "dots1", "flexolmo", "deepseekv2", "lfm2moe") + tuple(LLAMA_LIKE)
NO_SDPA = ("gemma2", "t5", "bloom", "deberta", "mamba", "swin", "convnext", "gptoss",
           "resnet", "whisper", "vaultgemma")
# The model's first input, when not token ids: images, or (Whisper) log-mel
# features. Its batch is saved under this name and exported so.
FIRST_INPUT = {"vit": "pixel_values", "swin": "pixel_values",
               "convnext": "pixel_values", "resnet": "pixel_values",
               "whisper": "input_features"}
CLASSES, MELS, FRAMES = 5, 8, 16
MOE = ("mixtral", "qwen2moe", "qwen3moe", "olmoe", "granitemoe", "gptoss",
       "deepseekv3", "llama4", "qwen3next", "phimoe", "jetmoe", "dbrx",
       "glm4moe", "ernie45moe", "hunyuanmoe", "dots1", "flexolmo",
       "deepseekv2", "lfm2moe")
EXPERTS = os.environ.get("TGC_EXPERTS", "batched_mm")


def first_input(family):
    return FIRST_INPUT.get(family, "input_ids")


def build(family, attn, perturb=True):
    torch.manual_seed(0)
    cfg, cls = config(family, attn)
    if family in MOE:
        # batched_mm (static shapes) unless TGC_EXPERTS says otherwise;
        # transformers' grouped_mm is a custom op that neither exporter
        # converts.
        cfg._experts_implementation = EXPERTS
    model = cls(cfg).eval()
    if not perturb:
        return model
    gen = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for _, p in model.named_parameters():
            p.add_(0.02 * torch.randn(p.shape, generator=gen))
    return model


def training_copy(model):
    """The model with dropout TRAIN_DROPOUT everywhere, in training mode."""
    model = copy.deepcopy(model)
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = TRAIN_DROPOUT
        if isinstance(getattr(module, "attention_dropout", None), float):
            module.attention_dropout = TRAIN_DROPOUT
    return model.train()


def batch(family, pad_token_id):
    gen = torch.Generator().manual_seed(2)
    if first_input(family) == "pixel_values":
        images = torch.randn(BATCH, 3, 16, 16, generator=gen)
        return images, torch.randint(0, CLASSES, (BATCH,), generator=gen), None
    if first_input(family) == "input_features":
        features = torch.randn(BATCH, MELS, FRAMES, generator=gen)
        return features, torch.randint(2, VOCAB, (BATCH, SEQ), generator=gen), None
    ids = torch.randint(0, VOCAB, (BATCH, SEQ), generator=gen)
    # The padding token's embedding gets no gradient from PyTorch
    # (nn.Embedding's padding_idx), a rule that an ONNX Gather does not carry:
    # the batch avoids it.
    if pad_token_id is not None:
        ids = torch.where(ids == pad_token_id, (ids + 1) % VOCAB, ids)
    labels = torch.randint(0, VOCAB, (BATCH, SEQ), generator=gen)
    if family == "bert":
        keep = torch.zeros(BATCH, SEQ, dtype=torch.bool)
        keep.view(-1)[torch.randperm(BATCH * SEQ, generator=gen)[:5]] = True
        labels = torch.where(keep, labels, torch.full_like(labels, -100))
    mask = torch.ones(BATCH, SEQ, dtype=torch.long)
    mask[1, :PAD] = 0
    return ids, labels, mask


class Step(torch.nn.Module):
    """What is exported: the model's (loss, logits), or its logits. A
    subclass of nothing but Module, so the exported parameter names carry a
    'model.' prefix that params.txt carries too."""

    def __init__(self, model, variant, first="input_ids"):
        super().__init__()
        self.model, self.variant, self.first = model, variant, first

    def forward(self, input_ids, *rest):
        first = {self.first: input_ids}
        if self.variant == "logits":
            return self.model(**first).logits
        if self.variant == "mask":
            attention_mask, labels = rest
            out = self.model(**first, attention_mask=attention_mask,
                             labels=labels)
        else:
            (labels,) = rest
            out = self.model(**first, labels=labels)
        return out.loss, out.logits


def reference(model, ids, labels, mask=None, first="input_ids"):
    model.zero_grad()
    kwargs = {first: ids, "labels": labels}
    if mask is not None:
        kwargs["attention_mask"] = mask
    out = model(**kwargs)
    out.loss.backward()
    ref = {"loss": out.loss.detach().numpy().astype(np.float32),
           "logits": out.logits.detach().numpy().astype(np.float32)}
    for name, p in model.named_parameters():
        # None: a parameter the loss does not read (Whisper's decoder
        # positions past the labels' length are still read; its encoder's
        # are a buffer-like table that autograd leaves out).
        if p.grad is not None:
            ref["grad/model." + name] = p.grad.numpy().astype(np.float32)
    return ref


def export(step, args, path, exporter, variant):
    names = [step.first] + {"logits": [], "mask": ["attention_mask", "labels"]}.get(
        variant, ["labels"])
    outputs = ["logits"] if variant == "logits" else ["loss", "logits"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # The defaults variant exports as a user would; the others keep the
        # state-dict names (no folding) and the parameters apart.
        defaults = variant == "defaults"
        mode = (torch.onnx.TrainingMode.TRAINING if variant == "train"
                else torch.onnx.TrainingMode.EVAL)
        if exporter == "ts":
            torch.onnx.export(step, args, path, dynamo=False, opset_version=17,
                              do_constant_folding=defaults, input_names=names,
                              output_names=outputs, training=mode)
        else:
            torch.onnx.export(step, args, path, dynamo=True, opset_version=18,
                              input_names=names, output_names=outputs,
                              external_data=False, optimize=defaults,
                              training=mode)
    strip_node_annotations(path, keep=SCOPE_METADATA if variant == "defaults" else ())


# The node metadata that tells which module a node belongs to and which
# parameter it reads (the importer's evidence for splitting merged tensors
# and naming folded transposes): kept in the defaults variant.
SCOPE_METADATA = ("pkg.torch.onnx.name_scopes", "pkg.torch.onnx.fx_node")


# The checked-in selection (the repository stays small); --all builds the rest.
# Each variant with each exporter at least once, every family with its loss.
# bert-mask/ holds bert-{ts,dynamo}-mask from a later run (--out DIR
# --families bert --exports ...; transformers 5.24, PyTorch 2.15), with that
# run's weights and batch, so it is a directory of its own.
CHECKED_IN = (
    "gpt2-ts-loss", "gpt2-dynamo-loss",
    "llama-ts-loss", "llama-dynamo-mask",
    "llama-ts-defaults", "llama-dynamo-defaults",
    "mistral-ts-sdpa",
    "qwen2-ts-loss", "qwen2-dynamo-logits",
    "phi-ts-loss", "phi-dynamo-sdpa",
    "opt-ts-loss", "opt-ts-mask",
    "bert-ts-loss", "bert-dynamo-loss",
    "gemma2-ts-loss", "gemma2-dynamo-loss",
    "t5-dynamo-loss",
    "gpt2-ts-train", "llama-dynamo-train",
    "deberta-dynamo-loss", "mamba-dynamo-loss",
    "vit-dynamo-loss", "swin-ts-loss", "convnext-dynamo-loss",
    "resnet-ts-loss", "whisper-dynamo-loss",
    "mixtral-dynamo-loss", "qwen2moe-ts-loss",
    "gptoss-dynamo-loss", "deepseekv3-ts-loss", "modernbert-dynamo-loss",
    "qwen3next-dynamo-loss", "phimoe-ts-loss", "glm4moe-dynamo-loss",
    "lfm2moe-ts-loss", "bloom-ts-loss", "bloom-dynamo-mask",
)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("--exports", default=None)
    parser.add_argument("--all", action="store_true")
    opts = parser.parse_args()
    wanted = None
    if opts.exports:
        wanted = set(opts.exports.split(","))
    elif not opts.all and CHECKED_IN is not None:
        wanted = set(CHECKED_IN)
    for family in opts.families.split(","):
        stems = [f"{family}-{e}-{v}" for e in EXPORTERS for v in VARIANTS]
        if wanted is not None:
            stems = [s for s in stems if s in wanted]
        if not stems:
            continue
        fdir = os.path.join(opts.out, family)
        os.makedirs(os.path.join(fdir, "inputs"), exist_ok=True)
        eager = build(family, "eager")
        # Gemma 2's soft cap and T5's position bias have no SDPA path in
        # transformers: eager only.
        sdpa = build(family, "sdpa") if family not in NO_SDPA else None
        initial = build(family, "eager", perturb=False)
        first = first_input(family)
        ids, labels, mask = batch(family, getattr(eager.config, "pad_token_id", None))
        for name, value in ((first, ids), ("labels", labels), ("attention_mask", mask)):
            if value is not None:
                np.save(os.path.join(fdir, "inputs", name + ".npy"), value.numpy())
        write_params(eager, os.path.join(fdir, "params.txt"))
        ref = reference(eager, ids, labels, first=first)
        if sdpa is not None:
            ref_sdpa = reference(sdpa, ids, labels, first=first)
            for key in ("loss", "logits"):
                np.testing.assert_allclose(ref_sdpa[key], ref[key], rtol=1e-5,
                                           atol=1e-6)
        else:
            stems = [s for s in stems if not s.endswith("-sdpa")]
        np.savez_compressed(os.path.join(fdir, "ref.npz"), **ref)
        if any(s.endswith("-defaults") for s in stems):
            np.savez_compressed(os.path.join(fdir, "ref-defaults.npz"),
                                **reference(initial, ids, labels, first=first))
        if any(s.endswith("-mask") for s in stems):
            np.savez_compressed(os.path.join(fdir, "ref-mask.npz"),
                                **reference(eager, ids, labels, mask))
        for stem in stems:
            _, exporter, variant = stem.split("-")
            model = {"sdpa": sdpa, "defaults": initial}.get(variant, eager)
            if variant == "train":
                model = training_copy(eager)
            args = {"logits": (ids,), "mask": (ids, mask, labels)}.get(variant, (ids, labels))
            path = os.path.join(fdir, stem + ".onnx")
            try:
                export(Step(model, variant, first), args, path, exporter, variant)
                print(f"{stem}: {os.path.getsize(path)} bytes", flush=True)
            except Exception as e:  # noqa: BLE001 - a cell of the matrix fails
                print(f"{stem}: EXPORT FAILED: {type(e).__name__}: {str(e)[:300]}", flush=True)
                if os.path.exists(path):
                    os.remove(path)


if __name__ == "__main__":
    sys.exit(main())
