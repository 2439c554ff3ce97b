#!/usr/bin/python3
"""Small PyTorch blocks exported with torch.onnx.export, for tg-raise on real
exporter output (test/Import/pytorch-raise.test).

Each model returns (loss, logits); the inputs and PyTorch's outputs are written
as .npy next to the .onnx files, so the tests need no PyTorch. Run with
Debian's python3-torch (PyTorch 1.13, CPU) from this directory:

    /usr/bin/python3 gen_raise_models.py
"""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB, HIDDEN, SEQ, BATCH = 32, 16, 6, 2


class CausalSelfAttention(nn.Module):
    """GPT-2's hand-written attention: masked_fill(-inf) with a tril buffer."""

    def __init__(self, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(HIDDEN, 3 * HIDDEN)
        self.proj = nn.Linear(HIDDEN, HIDDEN)
        self.register_buffer("bias", torch.tril(torch.ones(SEQ, SEQ)).view(1, 1, SEQ, SEQ))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(HIDDEN, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :t, :t] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
        return self.proj(y)


class GptBlock(nn.Module):
    def __init__(self, approximate):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, HIDDEN)
        self.ln1 = nn.LayerNorm(HIDDEN)
        self.attn = CausalSelfAttention(heads=2)
        self.ln2 = nn.LayerNorm(HIDDEN)
        self.fc = nn.Linear(HIDDEN, 4 * HIDDEN)
        self.gelu = nn.GELU(approximate=approximate)
        self.out = nn.Linear(4 * HIDDEN, HIDDEN)
        self.head = nn.Linear(HIDDEN, VOCAB, bias=False)

    def forward(self, ids, labels):
        x = self.wte(ids)
        x = x + self.attn(self.ln1(x))
        x = x + self.out(self.gelu(self.fc(self.ln2(x))))
        logits = self.head(x)
        loss = F.cross_entropy(logits.view(-1, VOCAB), labels.view(-1))
        return loss, logits


class RMSNorm(nn.Module):
    """Hugging Face LLaMA's RMSNorm."""

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(HIDDEN) + 0.1 * torch.randn(HIDDEN))

    def forward(self, x):
        variance = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + 1e-6))


class LlamaBlock(nn.Module):
    """RMSNorm, grouped-query causal attention (repeat_kv, additive -inf
    mask), SwiGLU."""

    def __init__(self):
        super().__init__()
        self.heads, self.kv_heads, self.dim = 4, 2, HIDDEN // 4
        self.wte = nn.Embedding(VOCAB, HIDDEN)
        self.norm1 = RMSNorm()
        self.q = nn.Linear(HIDDEN, self.heads * self.dim, bias=False)
        self.k = nn.Linear(HIDDEN, self.kv_heads * self.dim, bias=False)
        self.v = nn.Linear(HIDDEN, self.kv_heads * self.dim, bias=False)
        self.o = nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.norm2 = RMSNorm()
        self.gate = nn.Linear(HIDDEN, 32, bias=False)
        self.up = nn.Linear(HIDDEN, 32, bias=False)
        self.down = nn.Linear(32, HIDDEN, bias=False)
        self.head = nn.Linear(HIDDEN, VOCAB, bias=False)

    def repeat_kv(self, x):
        b, h, s, d = x.shape
        rep = self.heads // self.kv_heads
        return x[:, :, None, :, :].expand(b, h, rep, s, d).reshape(b, h * rep, s, d)

    def forward(self, ids, labels):
        x = self.wte(ids)
        h = self.norm1(x)
        b, t, _ = h.shape
        q = self.q(h).view(b, t, self.heads, self.dim).transpose(1, 2)
        k = self.k(h).view(b, t, self.kv_heads, self.dim).transpose(1, 2)
        v = self.v(h).view(b, t, self.kv_heads, self.dim).transpose(1, 2)
        k, v = self.repeat_kv(k), self.repeat_kv(v)
        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.dim)
        # Built in forward, as Hugging Face does: a constant sub-graph
        # (ConstantOfShape, Trilu) without constant folding, an initializer
        # with it.
        scores = scores + torch.full((t, t), float("-inf")).triu(1)
        att = F.softmax(scores, dim=-1)
        y = torch.matmul(att, v).transpose(1, 2).reshape(b, t, HIDDEN)
        x = x + self.o(y)
        h = self.norm2(x)
        x = x + self.down(F.silu(self.gate(h)) * self.up(h))
        logits = self.head(x)
        loss = F.cross_entropy(logits.view(-1, VOCAB), labels.view(-1))
        return loss, logits


def export(stem, model, opset, fold, ids, labels):
    model.eval()
    with torch.no_grad():
        loss, logits = model(ids, labels)
    torch.onnx.export(model, (ids, labels), f"{stem}.onnx", opset_version=opset,
                      do_constant_folding=fold,
                      input_names=["ids", "labels"], output_names=["loss", "logits"])
    np.save(f"{stem}.loss.npy", loss.numpy())
    np.save(f"{stem}.logits.npy", logits.numpy())


if __name__ == "__main__":
    torch.manual_seed(1)
    ids = torch.randint(0, VOCAB, (BATCH, SEQ))
    labels = torch.randint(0, VOCAB, (BATCH, SEQ))
    np.save("ids.npy", ids.numpy())
    np.save("labels.npy", labels.numpy())
    for stem, make, opset, fold in [
            ("gpt-gelu-tanh-opset14", lambda: GptBlock("tanh"), 14, True),
            ("gpt-gelu-erf-opset17", lambda: GptBlock("none"), 17, True),
            ("llama-opset14-folded", LlamaBlock, 14, True),
            ("llama-opset17", LlamaBlock, 17, False)]:
        torch.manual_seed(0)
        export(stem, make(), opset, fold, ids, labels)
