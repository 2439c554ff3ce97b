#!/usr/bin/python3
"""Complete tiny language models and a classifier, with their loss, exported by
torch.onnx.export, for test/Import/pytorch.test.

Three models, each returning (loss, logits):
  gpt    GPT-2-like LM: token + learned position embeddings, two pre-LN blocks
         (causal attention, GELU tanh MLP), final LayerNorm, LM head tied to
         the token embedding, cross-entropy;
  llama  LLaMA-like LM: RMSNorm, rotary embeddings, grouped-query causal
         attention (4 query heads on 2 key/value heads), SwiGLU, final
         RMSNorm, untied head, cross-entropy;
  mlp    MLP classifier: Linear, GELU, Linear, GELU, Linear, cross-entropy.
Each is exported four times (TorchScript exporter; opsets 14 and 17; with and
without do_constant_folding). Written next to this script, so that the tests
need no PyTorch:
  STEM.onnx                  the exported model (STEM = MODEL-opsetN[-folded])
  STEM.params.json           which imported parameters make up each PyTorch
                             parameter (see parameter_map)
  MODEL.inputs/NAME.npy      the inputs
  MODEL.loss.npy, MODEL.logits.npy
                             PyTorch's outputs (the same for every export)
  MODEL.grads/PARAM.grad.npy PyTorch autograd's gradient of the loss with
                             respect to every parameter

Run with Debian's python3-torch (PyTorch 1.13, CPU) from this directory:

    /usr/bin/python3 gen_models.py
"""
import json
import math
import os
import shutil
import sys

import numpy as np
import onnx
import onnx.numpy_helper
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pytorch-raise"))
from gen_raise_models import BATCH, HIDDEN, SEQ, VOCAB, CausalSelfAttention, RMSNorm  # noqa: E402


class GptLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(HIDDEN)
        self.attn = CausalSelfAttention(heads=2)
        self.ln2 = nn.LayerNorm(HIDDEN)
        self.fc = nn.Linear(HIDDEN, 4 * HIDDEN)
        self.out = nn.Linear(4 * HIDDEN, HIDDEN)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class GptLM(nn.Module):
    def __init__(self, layers=2):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, HIDDEN)
        self.wpe = nn.Embedding(SEQ, HIDDEN)
        self.blocks = nn.ModuleList(GptLayer() for _ in range(layers))
        self.ln_f = nn.LayerNorm(HIDDEN)
        self.head = nn.Linear(HIDDEN, VOCAB, bias=False)
        self.head.weight = self.wte.weight  # tied, as in GPT-2
        # nn.Embedding's N(0, 1) would make the tied head's logits so large
        # that the softmax saturates; GPT-2 scales its embeddings down too.
        nn.init.normal_(self.wte.weight, std=0.2)
        nn.init.normal_(self.wpe.weight, std=0.2)

    def forward(self, ids, labels):
        pos = torch.arange(ids.shape[1], dtype=torch.long).unsqueeze(0)
        x = self.wte(ids) + self.wpe(pos)
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln_f(x))
        loss = F.cross_entropy(logits.view(-1, VOCAB), labels.view(-1))
        return loss, logits


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class LlamaLayer(nn.Module):
    """Hugging Face LLaMA's decoder layer: rotary embeddings computed in
    forward from an inv_freq buffer, repeat_kv, an additive -inf mask."""

    def __init__(self, heads=4, kv_heads=2):
        super().__init__()
        self.heads, self.kv_heads, self.dim = heads, kv_heads, HIDDEN // heads
        self.norm1 = RMSNorm()
        self.q = nn.Linear(HIDDEN, heads * self.dim, bias=False)
        self.k = nn.Linear(HIDDEN, kv_heads * self.dim, bias=False)
        self.v = nn.Linear(HIDDEN, kv_heads * self.dim, bias=False)
        self.o = nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.norm2 = RMSNorm()
        self.gate = nn.Linear(HIDDEN, 32, bias=False)
        self.up = nn.Linear(HIDDEN, 32, bias=False)
        self.down = nn.Linear(32, HIDDEN, bias=False)

    def repeat_kv(self, x):
        b, h, s, d = x.shape
        rep = self.heads // self.kv_heads
        return x[:, :, None, :, :].expand(b, h, rep, s, d).reshape(b, h * rep, s, d)

    def forward(self, x, cos, sin):
        h = self.norm1(x)
        b, t, _ = h.shape
        q = self.q(h).view(b, t, self.heads, self.dim).transpose(1, 2)
        k = self.k(h).view(b, t, self.kv_heads, self.dim).transpose(1, 2)
        v = self.v(h).view(b, t, self.kv_heads, self.dim).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k, v = self.repeat_kv(k), self.repeat_kv(v)
        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.dim)
        scores = scores + torch.full((t, t), float("-inf")).triu(1)
        att = F.softmax(scores, dim=-1)
        y = torch.matmul(att, v).transpose(1, 2).reshape(b, t, HIDDEN)
        x = x + self.o(y)
        h = self.norm2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class LlamaLM(nn.Module):
    def __init__(self, layers=2):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, HIDDEN)
        self.blocks = nn.ModuleList(LlamaLayer() for _ in range(layers))
        self.norm = RMSNorm()
        self.head = nn.Linear(HIDDEN, VOCAB, bias=False)
        dim = self.blocks[0].dim
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim)),
                             persistent=False)

    def forward(self, ids, labels):
        t = ids.shape[1]
        freqs = torch.outer(torch.arange(t, dtype=torch.float32), self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos()[None, None], emb.sin()[None, None]
        x = self.wte(ids)
        for block in self.blocks:
            x = block(x, cos, sin)
        logits = self.head(self.norm(x))
        loss = F.cross_entropy(logits.view(-1, VOCAB), labels.view(-1))
        return loss, logits


class MlpClassifier(nn.Module):
    FEATURES, CLASSES = 12, 5

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(self.FEATURES, 32)
        self.fc2 = nn.Linear(32, 32)
        self.fc3 = nn.Linear(32, self.CLASSES)

    def forward(self, x, labels):
        logits = self.fc3(F.gelu(self.fc2(F.gelu(self.fc1(x)))))
        return F.cross_entropy(logits, labels), logits


def parameter_map(onnx_path, model):
    """Which parameters of the imported module make up each PyTorch parameter.

    tgc imports every float initializer of rank >= 1 as a parameter named
    after it, and the output of an Identity in front of one (the exporter's
    deduplication of equal initializers) as a parameter of its own. The
    exporter keeps state-dict names, except where constant folding replaced
    a weight by its transpose (onnx::MatMul_N). A tied weight (GPT's token
    embedding and LM head) used both as is and transposed then becomes two
    imported parameters: PyTorch's gradient is the sum of their gradients,
    the transposed one transposed back.

    Returns {pytorch name: [[imported name, transposed], ...]}; imported
    parameters that are no PyTorch parameter (buffers) are listed under
    null and not compared."""
    graph = onnx.load(onnx_path).graph
    values = {i.name: onnx.numpy_helper.to_array(i) for i in graph.initializer}
    imported = {n: v for n, v in values.items()
                if v.dtype.kind == "f" and v.ndim > 0}
    for node in graph.node:
        if node.op_type == "Identity" and node.input[0] in imported:
            imported[node.output[0]] = imported[node.input[0]]
    params = {n: p.detach().numpy() for n, p in model.named_parameters()}
    aliases = {n: n for n in model.state_dict()}  # head.weight -> wte.weight
    for alias, tensor in model.state_dict().items():
        for n, p in model.named_parameters():
            if tensor.data_ptr() == p.data_ptr():
                aliases[alias] = n
    mapping = {n: [] for n in params}
    buffers = []
    for name, value in sorted(imported.items()):
        if name in aliases and aliases[name] in params:
            assert np.array_equal(value, params[aliases[name]]), name
            mapping[aliases[name]].append([name, False])
            continue
        found = [(n, t) for n, p in params.items() for t in (False, True)
                 if (p.T if t else p).shape == value.shape
                 and np.array_equal((p.T if t else p), value)]
        assert len(found) <= 1, f"{onnx_path}: {name} matches {found}"
        if found:
            mapping[found[0][0]].append([name, found[0][1]])
        else:
            buffers.append(name)
    for n, parts in mapping.items():
        assert parts, f"{onnx_path}: no imported parameter for {n}"
    mapping[None] = buffers
    return mapping


def save_reference(name, model, inputs, train=True):
    """PyTorch's loss, logits and parameter gradients, once per model (in
    train mode: these models have no dropout or batch norm, the same numbers
    as eval; `train=False` for those that have: the export's eval mode)."""
    model.train(train)
    model.zero_grad()
    loss, logits = model(*inputs.values())
    loss.backward()
    os.makedirs(f"{name}.inputs", exist_ok=True)
    for input_name, value in inputs.items():
        np.save(f"{name}.inputs/{input_name}.npy", value.numpy())
    np.save(f"{name}.loss.npy", loss.detach().numpy())
    np.save(f"{name}.logits.npy", logits.detach().numpy())
    shutil.rmtree(f"{name}.grads", ignore_errors=True)
    os.makedirs(f"{name}.grads")
    for param_name, p in model.named_parameters():
        np.save(f"{name}.grads/{param_name}.grad.npy", p.grad.numpy())


def export(name, model, inputs, opset, fold, training=False):
    """Exports in eval mode, or in training mode (`training`: batch norm's
    batch statistics, as the exporter writes them then)."""
    stem = f"{name}-opset{opset}" + ("-folded" if fold else "")
    model.train(training)
    mode = torch.onnx.TrainingMode.TRAINING if training else torch.onnx.TrainingMode.EVAL
    torch.onnx.export(model, tuple(inputs.values()), f"{stem}.onnx", opset_version=opset,
                      do_constant_folding=fold, input_names=list(inputs),
                      output_names=["loss", "logits"], training=mode)
    with open(f"{stem}.params.json", "w") as f:
        mapping = parameter_map(f"{stem}.onnx", model)
        f.write("{\n" + ",\n".join(f" {json.dumps('' if k is None else k)}: {json.dumps(v)}"
                                   for k, v in mapping.items()) + "\n}\n")


if __name__ == "__main__":
    torch.manual_seed(1)
    tokens = {"ids": torch.randint(0, VOCAB, (BATCH, SEQ)),
              "labels": torch.randint(0, VOCAB, (BATCH, SEQ))}
    features = {"x": torch.randn(4, MlpClassifier.FEATURES),
                "labels": torch.randint(0, MlpClassifier.CLASSES, (4,))}
    for name, make, inputs in [("gpt", GptLM, tokens), ("llama", LlamaLM, tokens),
                               ("mlp", MlpClassifier, features)]:
        torch.manual_seed(0)
        model = make()
        save_reference(name, model, inputs)
        for opset in (14, 17):
            for fold in (False, True):
                export(name, model, inputs, opset, fold)
