#!/usr/bin/env python3
"""Exports whose optimizer (the dynamo exporter's default, optimize=True)
folds or drops parameters so that, imported as exported, they would train
otherwise than PyTorch, for test/Import/pytorch-dynamo-folds.test:

  folds-vit        a ViT block: a class token expanded to the batch
                   (`cls.expand(B, -1, -1)`, folded into an initializer
                   `expand`: one copy per batch row), the two LayerNorms'
                   equal default weights and biases merged into one
                   tensor, nn.MultiheadAttention's zero out_proj.bias
                   dropped from its Gemm, its in_proj_weight transposed;
  folds-tied       an LSTM language model whose head is the embedding
                   (F.linear(h, emb.weight)): the exporter folds the
                   transpose into a second tensor (`val_N`), which trained
                   apart would untie them;
  folds-zero-bias  nn.Linear, nn.Conv1d and nn.ConvTranspose1d with zero
                   biases (as Hugging Face initializes them), which the
                   optimizer drops (the Linear, applied twice, from both
                   of its Gemms);
  folds-bert       a BERT-like block as Hugging Face initializes it: zero
                   biases equal to the zero bias of a module named
                   `LayerNorm` (whose FX placeholders torch.export
                   lowercases), merged into it, a Linear on [B, T, D] (its
                   bias an Add reading the merged tensor) and GPT-2's
                   Conv1D (aten.addmm, its zero bias dropped from the Gemm);
  folds-groupnorm  two fresh GroupNorms: their weights (ones) and biases
                   (zeros) each unsqueezed to [C, 1, 1] by the exporter,
                   folded, and the two folds merged into one tensor;
  folds-constant   a table computed from constants alone (torch.eye(4)
                   expanded to the batch, read by a matmul), which the
                   optimizer folds into `expand`: no parameter of PyTorch's;
  folds-warn       what the import cannot undo, warned of: Gemma's norm
                   `x * (1 + weight)` with weights initialized alike
                   (merged, then folded into one `add`, read by both
                   norms), and a projection of an embedding table computed
                   from parameters alone (DeBERTa's pos_key_proj of its
                   relative embeddings, folded into one tensor);
  folds-tokens     two tokens expanded to the batch: one the graph also
                   reads as is (the fold is a view of that parameter), one
                   zero-initialized (all elements equal: its shape is
                   unknowable, warned of);
  folds-tiedhead   a language model whose head module shares the
                   embedding's weight (`head.weight = emb.weight`, GPT-2's
                   tie): torch.export reads both through one placeholder
                   named after the head, and the initializer is named
                   `head.weight`; the parameter takes `emb.weight`, its
                   first name (generated after folds-tokens);
  folds-relbias    Swin's relative position bias: a table gathered at an
                   index buffer (`table[index]`), which the optimizer folds
                   into one tensor per position pair (warned: the entries a
                   table row feeds train apart; generated last);
  folds-buckets    T5's relative attention bias: an embedding of buckets
                   computed in the forward from the positions
                   (`rel(bucket(j - i))`), which the optimizer folds into
                   one tensor per position pair (warned: the values repeat,
                   and the entries a bucket feeds train apart; generated
                   after folds-relbias);
  folds-batchpos   OPT's positions: an embedding gathered at positions
                   computed per batch row from a mask of ones
                   (`cumsum(mask, 1) - 1`), folded into one copy of the rows
                   per batch row; imported as one slice and its broadcast,
                   so the copies train as one (its reference gradient
                   `pos.rows` is PyTorch's of the rows read; generated
                   after folds-buckets);
  folds-bertemb    BERT's embeddings: positions and token types read at
                   buffers (`position_ids`, an arange, and `token_type_ids`,
                   zeros), folded into the rows read: the positions' rows
                   are distinct (a remark: each trains once, as in
                   PyTorch), the token types' are copies of row 0 (imported
                   as one slice and its broadcast); reference gradients
                   `pos.rows` and `types.rows` (generated after
                   folds-batchpos);
  folds-mix        RWKV's time mix and decay: `x * mix + prev * (1 - mix)`,
                   whose `1 - mix` the optimizer folds into `sub` while
                   the graph still reads `mix` (warned: the two train
                   apart), and `exp(-exp(decay))` folded into `exp_1`
                   (warned: it trains in the parameter's place, Adam's and
                   weight decay's updates on it), and Mamba's
                   `-exp(a_log)` unsqueezed (`unsqueeze`, its arithmetic in
                   its folded_from); generated after
                   folds-bertemb;
  folds-matmul-t   Falcon's FalconLinear, `x @ self.weight.T` (aten.matmul of
                   the FX node `permute` of the weight, folded into
                   `permute`): imported as the weight in its state-dict
                   layout, as aten.linear's folded transposes are
                   (generated after folds-mix);
  tied-ts          the TorchScript exporter's (do_constant_folding=True) of
                   a tied language model (F.linear(h, emb.weight)): the
                   head's transpose folded into `onnx::MatMul_N`, which no
                   FX node says is tied;
  toplevel-ts      the TorchScript exporter's, of a model with parameters
                   on the root module (`cls`, `pos`: timm's cls_token and
                   pos_embed), whose undotted names are state-dict names.

Writes NAME.onnx, NAME.inputs/*.npy, NAME.grads/*.grad.npy (PyTorch's
gradients of the loss, by state-dict name) and NAME.params.json (for
../pytorch/compare_grads.py: each parameter compared under its own name;
folds-tied's LSTM weights, which the exporter reorders into tensors of its
own, are left out; folds-groupnorm's parameters that only a fold holds
are compared under the folded tensor's name, from its folded_from) next to
this script. Node
annotations are stripped but for the FX node and the name scopes, which the
import reads. To regenerate (from this directory):

    python3 -m venv venv && venv/bin/pip install torch onnxscript onnx==1.23.2
    venv/bin/python gen_folds.py
"""
import ast
import json
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from export_helpers import strip_node_annotations  # noqa: E402

KEEP = ("pkg.torch.onnx.fx_node", "pkg.torch.onnx.name_scopes")


class Vit(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.patch = nn.Conv2d(3, d, 4, stride=4)
        self.cls = nn.Parameter(torch.randn(1, 1, d) * 0.1)
        self.pos = nn.Parameter(torch.randn(1, 5, d) * 0.1)
        self.enc = nn.TransformerEncoderLayer(
            d, 2, 16, dropout=0.0, activation="gelu", batch_first=True,
            norm_first=True)
        self.head = nn.Linear(d, 3)

    def forward(self, x, y):
        p = self.patch(x).flatten(2).transpose(1, 2)
        h = torch.cat([self.cls.expand(x.shape[0], -1, -1), p], 1) + self.pos
        return F.cross_entropy(self.head(self.enc(h)[:, 0]), y)


class TiedLstm(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 6)
        self.rnn = nn.LSTM(6, 6, batch_first=True)

    def forward(self, ids, y):
        h, _ = self.rnn(self.emb(ids))
        logits = F.linear(h, self.emb.weight)
        return F.cross_entropy(logits.reshape(-1, 10), y.reshape(-1))


class TiedHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 6)
        self.mix = nn.Linear(6, 6)
        self.head = nn.Linear(6, 10, bias=False)
        self.head.weight = self.emb.weight

    def forward(self, ids, y):
        logits = self.head(torch.tanh(self.mix(self.emb(ids))))
        return F.cross_entropy(logits.reshape(-1, 10), y.reshape(-1))


class RelativeBias(nn.Module):
    def __init__(self, window=2, heads=2):
        super().__init__()
        self.table = nn.Parameter(torch.randn((2 * window - 1) ** 2, heads))
        coords = torch.stack(torch.meshgrid(
            torch.arange(window), torch.arange(window), indexing="ij")).flatten(1)
        rel = (coords[:, :, None] - coords[:, None, :]).permute(1, 2, 0) + window - 1
        self.register_buffer("index", rel[..., 0] * (2 * window - 1) + rel[..., 1])
        self.heads, self.n = heads, window * window
        self.qk = nn.Linear(4, 2 * heads * 4)

    def forward(self, x, y):
        q, k = self.qk(x).view(x.shape[0], self.n, 2, self.heads, 4).unbind(2)
        logits = torch.einsum("bqhd,bkhd->bhqk", q, k)
        bias = self.table[self.index.view(-1)].view(self.n, self.n, -1)
        logits = logits + bias.permute(2, 0, 1).unsqueeze(0)
        return F.cross_entropy(logits.flatten(0, 2), y.flatten())


class Buckets(nn.Module):
    def __init__(self, buckets=3, heads=2):
        super().__init__()
        self.rel = nn.Embedding(buckets, heads)
        self.heads = heads
        self.qk = nn.Linear(4, 2 * heads * 4)

    def forward(self, x, y):
        n = x.shape[1]
        q, k = self.qk(x).view(x.shape[0], n, 2, self.heads, 4).unbind(2)
        logits = torch.einsum("bqhd,bkhd->bhqk", q, k)
        pos = torch.arange(n)
        bucket = (pos[None, :] - pos[:, None]).clamp(-1, 1) + 1
        logits = logits + self.rel(bucket).permute(2, 0, 1).unsqueeze(0)
        return F.cross_entropy(logits.flatten(0, 2), y.flatten())


class BatchPositions(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 6)
        self.pos = nn.Embedding(8, 6)
        self.head = nn.Linear(6, 10)

    def forward(self, ids, y):
        positions = torch.cumsum(torch.ones_like(ids), 1) - 1
        h = torch.tanh(self.emb(ids) + self.pos(positions))
        return F.cross_entropy(self.head(h).reshape(-1, 10), y.reshape(-1))


class BertEmbeddings(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 6)
        self.pos = nn.Embedding(8, 6)
        self.types = nn.Embedding(2, 6)
        self.register_buffer("position_ids", torch.arange(8).unsqueeze(0))
        self.register_buffer("token_type_ids", torch.zeros(1, 8, dtype=torch.long))
        self.head = nn.Linear(6, 10)

    def forward(self, ids, y):
        n = ids.shape[1]
        h = (self.emb(ids) + self.pos(self.position_ids[:, :n])
             + self.types(self.token_type_ids[:, :n]))
        return F.cross_entropy(self.head(torch.tanh(h)).reshape(-1, 10),
                               y.reshape(-1))


class TimeMix(nn.Module):
    def __init__(self):
        super().__init__()
        self.mix = nn.Parameter(torch.rand(4))
        self.decay = nn.Parameter(torch.randn(4))
        self.a_log = nn.Parameter(torch.randn(4))
        self.head = nn.Linear(4, 2)

    def forward(self, x, y):
        prev = F.pad(x, (0, 0, 1, -1))
        h = x * self.mix + prev * (1 - self.mix)
        h = h * torch.exp(-torch.exp(self.decay))
        h = h * (-torch.exp(self.a_log)).unsqueeze(0)
        return F.cross_entropy(self.head(h.mean(1)), y)


class FalconLinear(nn.Linear):
    def forward(self, x):
        return x @ self.weight.T


class MatmulT(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = FalconLinear(4, 6, bias=False)
        self.b = FalconLinear(6, 3, bias=False)

    def forward(self, x, y):
        return F.cross_entropy(self.b(torch.tanh(self.a(x))), y)


class ZeroBias(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 6)
        self.conv = nn.Conv1d(2, 3, 3)
        self.up = nn.ConvTranspose1d(3, 2, 3)
        self.b = nn.Linear(6, 2)
        for m in (self.a, self.conv, self.up):
            nn.init.zeros_(m.bias)

    def forward(self, x, z):
        h = torch.relu(self.a(x)) + self.a(2 * x)
        return (self.b(h).square().mean()
                + self.up(self.conv(z)).square().mean())


class Conv1D(nn.Module):
    """GPT-2's: addmm(bias, x, weight), weight [in, out]."""

    def __init__(self, nx, nf):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(nx, nf) * 0.2)
        self.bias = nn.Parameter(torch.zeros(nf))

    def forward(self, x):
        shape = x.shape[:-1] + (self.bias.shape[0],)
        return torch.addmm(self.bias, x.view(-1, x.shape[-1]),
                           self.weight).view(shape)


class Bert(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 6)
        self.LayerNorm = nn.LayerNorm(6)
        self.dense = nn.Linear(6, 6)
        self.c_fc = Conv1D(6, 4)
        nn.init.zeros_(self.dense.bias)

    def forward(self, ids, y):
        h = self.LayerNorm(self.emb(ids))
        h = torch.tanh(self.dense(h))
        return F.cross_entropy(self.c_fc(h).reshape(-1, 4), y.reshape(-1))


class GroupNorms(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 4, 3, padding=1, bias=False)
        self.n1 = nn.GroupNorm(2, 4)
        self.c2 = nn.Conv2d(4, 4, 3, padding=1, bias=False)
        self.n2 = nn.GroupNorm(2, 4)
        self.fc = nn.Linear(4, 2)

    def forward(self, x, y):
        h = F.relu(self.n1(self.c1(x)))
        h = F.relu(self.n2(self.c2(h)) + h)
        return F.cross_entropy(self.fc(h.mean((2, 3))), y)


class ConstantTable(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)

    def forward(self, x, y):
        mixed = torch.bmm(x, torch.eye(4).expand(x.shape[0], 4, 4))
        return F.cross_entropy(self.lin(mixed.sum(1)), y)


class GemmaNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(d))

    def forward(self, x):
        return x * torch.rsqrt(x.square().mean(-1, keepdim=True) + 1e-6) * (
            1 + self.weight)


class Warn(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1 = GemmaNorm(4)
        self.norm2 = GemmaNorm(4)
        self.rel = nn.Embedding(3, 4)
        self.proj = nn.Linear(4, 4)

    def forward(self, x, y):
        h = self.norm2(torch.tanh(self.norm1(x)))
        return F.cross_entropy(h @ self.proj(self.rel.weight).T, y)


class TiedLm(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 6)
        self.mix = nn.Linear(6, 6)

    def forward(self, ids, y):
        h = torch.tanh(self.mix(self.emb(ids)))
        return F.cross_entropy(F.linear(h, self.emb.weight).reshape(-1, 10),
                               y.reshape(-1))


class Tokens(nn.Module):
    def __init__(self):
        super().__init__()
        self.seen = nn.Parameter(torch.randn(1, 1, 4))
        self.zero = nn.Parameter(torch.zeros(1, 1, 4))
        self.head = nn.Linear(4, 2)

    def forward(self, x, y):
        batch = x.shape[0]
        h = (x + self.seen.expand(batch, -1, -1) + self.zero.expand(batch, -1, -1)
             + x * self.seen)
        return F.cross_entropy(self.head(h.mean(1)), y)


class TopLevel(nn.Module):
    def __init__(self):
        super().__init__()
        self.cls = nn.Parameter(torch.randn(1, 4) * 0.5)
        self.pos = nn.Parameter(torch.randn(3, 4) * 0.5)
        self.head = nn.Linear(4, 2)

    def forward(self, x, y):
        h = torch.cat([self.cls, x], 0) + self.pos
        return F.cross_entropy(self.head(torch.tanh(h)), y)


def export(name, model, inputs, dynamo=True, unnamed=(), reference=True,
           folded=False):
    model.train()
    model.zero_grad()
    model(*inputs.values()).backward()
    if reference:
        save_reference(name, model, unnamed)
    folder = os.path.join(HERE, name + ".inputs")
    os.makedirs(folder, exist_ok=True)
    for n, v in inputs.items():
        np.save(os.path.join(folder, n + ".npy"), v.numpy())
    path = os.path.join(HERE, name + ".onnx")
    kwargs = dict(dynamo=True) if dynamo else dict(
        dynamo=False, opset_version=17, do_constant_folding=True,
        training=torch.onnx.TrainingMode.TRAINING)
    torch.onnx.export(model, tuple(inputs.values()), path,
                      input_names=list(inputs), output_names=["loss"],
                      external_data=False, **kwargs)
    strip_node_annotations(path, KEEP)
    if folded:
        map_folded(name, path)


def map_folded(name, path):
    """Maps each parameter of NAME.params.json that no initializer holds to
    the initializer the optimizer folded from it alone, if any."""
    graph = onnx.load(path).graph
    initializers = {i.name for i in graph.initializer}
    folded = {}
    for info in graph.value_info:
        for prop in info.metadata_props:
            if prop.key == "pkg.onnxscript.optimizer.folded_from":
                sources = [v for v in ast.literal_eval(prop.value)
                           if "." in v]
                if len(sources) == 1 and info.name in initializers:
                    folded[sources[0]] = info.name
    json_path = os.path.join(HERE, name + ".params.json")
    with open(json_path) as f:
        mapping = json.load(f)
    for param, parts in mapping.items():
        if param and param not in initializers and param in folded:
            parts[0][0] = folded[param]
    write_mapping(json_path, mapping)


def write_mapping(path, mapping):
    with open(path, "w") as f:
        f.write("{\n" + ",\n".join(f" {json.dumps(k)}: {json.dumps(v)}"
                                    for k, v in mapping.items()) + "\n}\n")


def save_reference(name, model, unnamed):
    grads = os.path.join(HERE, name + ".grads")
    os.makedirs(grads, exist_ok=True)
    mapping = {}
    for n, p in model.named_parameters():
        np.save(os.path.join(grads, n + ".grad.npy"), p.grad.numpy())
        if not n.startswith(unnamed):
            mapping[n] = [[n, False]]
    mapping[""] = []
    write_mapping(os.path.join(HERE, name + ".params.json"), mapping)


def main():
    torch.manual_seed(0)
    export("folds-vit", Vit(),
           dict(x=torch.randn(2, 3, 8, 8), y=torch.tensor([0, 2])))
    export("folds-tied", TiedLstm(),
           dict(ids=torch.randint(0, 10, (2, 5)),
                y=torch.randint(0, 10, (2, 5))), unnamed=("rnn.",))
    export("folds-zero-bias", ZeroBias(),
           dict(x=torch.randn(3, 4), z=torch.randn(1, 2, 5)))
    export("folds-bert", Bert(),
           dict(ids=torch.randint(0, 10, (2, 3)),
                y=torch.randint(0, 4, (2, 3))))
    export("folds-groupnorm", GroupNorms(),
           dict(x=torch.randn(2, 3, 6, 6), y=torch.tensor([1, 0])), folded=True)
    export("folds-constant", ConstantTable(),
           dict(x=torch.randn(2, 3, 4), y=torch.tensor([0, 2])))
    export("folds-warn", Warn(),
           dict(x=torch.randn(2, 4), y=torch.tensor([0, 2])), reference=False)
    export("tied-ts", TiedLm(),
           dict(ids=torch.randint(0, 10, (2, 3)),
                y=torch.randint(0, 10, (2, 3))), dynamo=False, reference=False)
    export("toplevel-ts", TopLevel(),
           dict(x=torch.randn(2, 4), y=torch.tensor([0, 1, 1])), dynamo=False)


def main_tokens():
    # Last, so that the exports above keep their random values.
    export("folds-tokens", Tokens(),
           dict(x=torch.randn(2, 3, 4), y=torch.tensor([0, 1])), reference=False)
    export("folds-tiedhead", TiedHead(),
           dict(ids=torch.randint(0, 10, (2, 5)),
                y=torch.randint(0, 10, (2, 5))))
    export("folds-relbias", RelativeBias(),
           dict(x=torch.randn(2, 4, 4), y=torch.randint(0, 4, (2, 2, 4))),
           reference=False)
    export("folds-buckets", Buckets(),
           dict(x=torch.randn(2, 5, 4), y=torch.randint(0, 5, (2, 2, 5))),
           reference=False)
    positions = BatchPositions()
    export("folds-batchpos", positions,
           dict(ids=torch.randint(0, 10, (3, 5)),
                y=torch.randint(0, 10, (3, 5))), unnamed=("pos.",))
    # The rows the batch reads, compared with the fold's one slice.
    map_rows("folds-batchpos", {"pos": positions.pos.weight.grad[:5]})
    embeddings = BertEmbeddings()
    export("folds-bertemb", embeddings,
           dict(ids=torch.randint(0, 10, (3, 5)),
                y=torch.randint(0, 10, (3, 5))), unnamed=("pos.", "types."))
    map_rows("folds-bertemb", {"pos": embeddings.pos.weight.grad[:5],
                               "types": embeddings.types.weight.grad[:1]})
    export("folds-mix", TimeMix(),
           dict(x=torch.randn(2, 3, 4), y=torch.tensor([0, 1])),
           reference=False)
    export("folds-matmul-t", MatmulT(),
           dict(x=torch.randn(5, 4), y=torch.tensor([0, 1, 2, 1, 0])))


def map_rows(name, rows):
    """Saves, for each module M of `rows`, the gradient of the rows of M's
    weight the batch reads as M.rows, compared with the initializer the
    optimizer folded from M.weight alone."""
    graph = onnx.load(os.path.join(HERE, name + ".onnx")).graph
    json_path = os.path.join(HERE, name + ".params.json")
    with open(json_path) as f:
        mapping = json.load(f)
    for module, grad in rows.items():
        np.save(os.path.join(HERE, name + ".grads", module + ".rows.grad.npy"),
                grad.numpy())
        fold = next(info.name for info in graph.value_info
                    for prop in info.metadata_props
                    if prop.key == "pkg.onnxscript.optimizer.folded_from"
                    and [v for v in ast.literal_eval(prop.value) if "." in v]
                    == [module + ".weight"])
        mapping[module + ".rows"] = [[fold, False]]
    write_mapping(json_path, mapping)


if __name__ == "__main__":
    main()
    main_tokens()
