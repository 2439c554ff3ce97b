#!/usr/bin/env python3
"""Models exported by PyTorch's dynamo exporter (torch.onnx.export(...,
dynamo=True), PyTorch 2.15 with onnxscript 0.7), for
test/Import/pytorch-dynamo.test. Each returns (loss, logits):

  llama    LLaMA-like LM: nn.RMSNorm, rotary embeddings, grouped-query causal
           F.scaled_dot_product_attention (4 query heads on 2 key/value heads,
           enable_gqa), SwiGLU MLP, final RMSNorm, untied head,
           cross-entropy;
  encoder  a BERT-like classifier: a padding mask (bool [batch, sequence])
           given to scaled_dot_product_attention as attn_mask, LayerNorm,
           GELU, mean pooling over the visible tokens, cross-entropy; the
           last sample hides its last two tokens.

Each is exported at opset 20 (the exporter's default: attention and RMS
norm decomposed into MatMul, Softmax, ReduceMean...) and at opset 23
(ONNX's Attention and RMSNormalization ops). Written next to this script,
so that the tests need no PyTorch:
  STEM.onnx                  the export (STEM = MODEL-opsetN)
  STEM.params.json           which imported parameters make up each PyTorch
                             parameter (../pytorch/gen_models.py's
                             parameter_map)
  MODEL.inputs/NAME.npy      the inputs
  MODEL.loss.npy, MODEL.logits.npy, MODEL.grads/PARAM.grad.npy
                             PyTorch's outputs and autograd's gradients

To regenerate (from this directory):

    python3 -m venv venv && venv/bin/pip install torch onnxscript onnx==1.23.2
    venv/bin/python gen_models.py
"""
import json
import os
import sys

import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "pytorch"))
sys.path.insert(0, os.path.join(HERE, "..", "pytorch-raise"))
import gen_models  # noqa: E402
from gen_models import parameter_map, rotate_half, save_reference  # noqa: E402

VOCAB, HIDDEN, SEQ, BATCH = 32, 16, 6, 2


class LlamaLayer(nn.Module):
    def __init__(self, heads=4, kv_heads=2):
        super().__init__()
        self.heads, self.kv_heads, self.dim = heads, kv_heads, HIDDEN // heads
        self.norm1 = nn.RMSNorm(HIDDEN, eps=1e-5)
        self.q = nn.Linear(HIDDEN, heads * self.dim, bias=False)
        self.k = nn.Linear(HIDDEN, kv_heads * self.dim, bias=False)
        self.v = nn.Linear(HIDDEN, kv_heads * self.dim, bias=False)
        self.o = nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.norm2 = nn.RMSNorm(HIDDEN, eps=1e-5)
        self.gate = nn.Linear(HIDDEN, 32, bias=False)
        self.up = nn.Linear(HIDDEN, 32, bias=False)
        self.down = nn.Linear(32, HIDDEN, bias=False)

    def forward(self, x, cos, sin):
        h = self.norm1(x)
        b, t, _ = h.shape
        q = self.q(h).view(b, t, self.heads, self.dim).transpose(1, 2)
        k = self.k(h).view(b, t, self.kv_heads, self.dim).transpose(1, 2)
        v = self.v(h).view(b, t, self.kv_heads, self.dim).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                           enable_gqa=True)
        x = x + self.o(y.transpose(1, 2).reshape(b, t, HIDDEN))
        h = self.norm2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class LlamaLM(gen_models.LlamaLM):
    """../pytorch/gen_models.py's LM (rotary tables from inv_freq, untied
    head), with these blocks and nn.RMSNorm."""

    def __init__(self, layers=2):
        super().__init__(layers)
        self.blocks = nn.ModuleList(LlamaLayer() for _ in range(layers))
        self.norm = nn.RMSNorm(HIDDEN, eps=1e-5)


class EncoderLayer(nn.Module):
    def __init__(self, heads=2):
        super().__init__()
        self.heads, self.dim = heads, HIDDEN // heads
        self.qkv = nn.Linear(HIDDEN, 3 * HIDDEN)
        self.proj = nn.Linear(HIDDEN, HIDDEN)
        self.ln1 = nn.LayerNorm(HIDDEN)
        self.fc = nn.Linear(HIDDEN, 2 * HIDDEN)
        self.out = nn.Linear(2 * HIDDEN, HIDDEN)
        self.ln2 = nn.LayerNorm(HIDDEN)

    def forward(self, x, mask):
        b, t, _ = x.shape
        q, k, v = (p.view(b, t, self.heads, self.dim).transpose(1, 2)
                   for p in self.qkv(x).split(HIDDEN, dim=2))
        y = F.scaled_dot_product_attention(q, k, v,
                                           attn_mask=mask[:, None, None, :])
        x = self.ln1(x + self.proj(y.transpose(1, 2).reshape(b, t, HIDDEN)))
        return self.ln2(x + self.out(F.gelu(self.fc(x))))


class Encoder(nn.Module):
    CLASSES = 3

    def __init__(self, layers=2):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, HIDDEN)
        self.wpe = nn.Embedding(SEQ, HIDDEN)
        self.blocks = nn.ModuleList(EncoderLayer() for _ in range(layers))
        self.head = nn.Linear(HIDDEN, self.CLASSES)

    def forward(self, ids, mask, labels):
        x = self.wte(ids) + self.wpe(torch.arange(ids.shape[1]))
        for block in self.blocks:
            x = block(x, mask)
        visible = mask.unsqueeze(-1).to(x.dtype)
        pooled = (x * visible).sum(1) / visible.sum(1)
        logits = self.head(pooled)
        return F.cross_entropy(logits, labels), logits


def export(name, model, inputs, opset):
    stem = f"{name}-opset{opset}"
    model.eval()
    torch.onnx.export(model, tuple(inputs.values()), f"{stem}.onnx",
                      dynamo=True, opset_version=opset,
                      input_names=list(inputs),
                      output_names=["loss", "logits"])
    # One file: the exporter may write the weights next to the model.
    m = onnx.load(f"{stem}.onnx")
    onnx.save(m, f"{stem}.onnx", save_as_external_data=False)
    if os.path.exists(f"{stem}.onnx.data"):
        os.remove(f"{stem}.onnx.data")
    with open(f"{stem}.params.json", "w") as f:
        mapping = parameter_map(f"{stem}.onnx", model)
        f.write("{\n" + ",\n".join(
            f" {json.dumps('' if k is None else k)}: {json.dumps(v)}"
            for k, v in mapping.items()) + "\n}\n")


if __name__ == "__main__":
    os.chdir(HERE)
    torch.manual_seed(1)
    tokens = {"ids": torch.randint(0, VOCAB, (BATCH, SEQ)),
              "labels": torch.randint(0, VOCAB, (BATCH, SEQ))}
    mask = torch.ones(BATCH, SEQ, dtype=torch.bool)
    mask[-1, -2:] = False
    encoded = {"ids": torch.randint(0, VOCAB, (BATCH, SEQ)), "mask": mask,
               "labels": torch.randint(0, Encoder.CLASSES, (BATCH,))}
    for name, make, inputs in [("llama", LlamaLM, tokens),
                               ("encoder", Encoder, encoded)]:
        torch.manual_seed(0)
        model = make()
        # Distinct weights (norm scales are ones, biases zeros, at
        # construction): an exporter may merge equal initializers.
        with torch.no_grad():
            for param in model.parameters():
                if param.dim() == 1:
                    param.uniform_(0.5, 1.5)
        save_reference(name, model, inputs)
        for opset in (20, 23):
            export(name, model, inputs, opset)
