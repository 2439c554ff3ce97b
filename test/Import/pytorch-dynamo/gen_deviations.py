#!/usr/bin/env python3
"""Dynamo exports (torch.onnx.export(..., dynamo=True), PyTorch 2.15 with
onnxscript 0.7) whose graph computes otherwise than the PyTorch model, for
test/Import/pytorch-dynamo-deviations.test: a small classifier (Conv2d,
BatchNorm2d with running statistics away from 0 and 1, ReLU, mean pooling,
Linear, cross-entropy), exported

  bn-train        in training mode, optimize=False: the exporter's
                  BatchNormalization is in inference mode all the same
                  (the import trains it as its FX node says: PyTorch's
                  gradients in bn-train.grads/, the running statistics one
                  step leaves in bn-train.bn.running_*.npy);
  bn-train-fused  in training mode, the exporter's default optimization,
                  which also folds that BatchNormalization into the Conv
                  (FuseBatchNormIntoConv);
  bn-eval         in eval mode, the exporter's default optimization: the
                  loss is the model's, but the BatchNormalization is
                  folded into the Conv, which then trains otherwise;
  bn-eval-plain   in eval mode, optimize=False: the graph is the model's;
  smoothing       in eval mode with label_smoothing=0.1, which the
                  exporter drops;

  sdpa-dropout    scaled_dot_product_attention with dropout_p=0.1 in
                  training mode, which the exporter drops;
  embedding-freq  nn.Embedding(scale_grad_by_freq=True), which a Gather
                  cannot say;

two-bn (two Conv2d and BatchNorm2d blocks, eval mode, the default
optimization: both folded, warned once); two-bn-ts and two-bn-ts-plain, the
same model exported by the TorchScript exporter (dynamo=False) with its
default constant folding, whose eval-mode peephole folds each BatchNorm into
its Conv (weights named `onnx::Conv_N`), and with do_constant_folding=False,
which deduplicates the fresh norms' equal tensors behind Identity nodes
(weights with running variances, biases with running means;
two-bn-ts-plain.grads/ holds PyTorch's eval-mode gradients, .params.json
their names);

two-bn-train-dedup, built by hand as the TorchScript exporter deduplicates
(its training mode does not): two training-mode BatchNormalizations whose
fresh weights, biases and running statistics are one initializer of ones
and one of zeros behind Identity nodes (each statistic must be state the
step updates, each weight and bias a parameter);

bn-twice (optimize=False, input bn-twice.x.npy): one BatchNorm1d with
momentum 0.3 run twice in training mode, its gradients and the running
statistics one step leaves (both calls' updates) saved as bn-train's
(bn-one-value.onnx: its input cut to one value per channel);

conv3d (optimize=False, input conv3d.x.npy): a Conv3d without bias, for
which the exporter writes zeros of shape [M, 2] as the bias (ONNX wants
[M]), its gradients saved as bn-train's (conv3d-bogus.onnx: its FX node
edited to pass a bias);

sdpa-mask (optimize=False, inputs sdpa-mask.x.npy and .mask.npy):
scaled_dot_product_attention with a boolean mask given at run time that
hides every key of two queries, which the exporter fills with the lowest
float (PyTorch gives those queries zeros), its gradients saved as
bn-train's;

and an embedding with nn.Embedding(padding_idx=1) (padding: Embedding,
tanh, Linear, cross-entropy over a batch that reads row 1 three times),
whose Gather cannot say that row 1 gets no gradient, but whose FX node
does: padding.e.weight.grad.npy is PyTorch's gradient of the table
(padding-bogus.onnx: its FX node edited to a padding_idx past the table).

Node annotations are stripped but for the FX node, the name scopes and the
rewrite rule, which the import reads. Writes NAME.onnx, inputs.x.npy,
inputs.labels.npy and NAME.torch-loss.txt (PyTorch's loss, in the mode of
the export), padding.NAME.npy next to this script. To regenerate (from this directory):

    python3 -m venv venv && venv/bin/pip install torch onnxscript onnx==1.23.2
    venv/bin/python gen_deviations.py
"""
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

KEEP = ("pkg.torch.onnx.fx_node", "pkg.torch.onnx.name_scopes",
        "pkg.onnxscript.rewriter.rule_name")


class Classifier(nn.Module):
    def __init__(self, smoothing=0.0):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.head = nn.Linear(4, 3)
        self.smoothing = smoothing
        with torch.no_grad():
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 2.0)
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-0.5, 0.5)

    def forward(self, x, labels):
        h = F.relu(self.bn(self.conv(x))).mean((2, 3))
        return F.cross_entropy(self.head(h), labels,
                               label_smoothing=self.smoothing)


class TwoBlocks(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = nn.Sequential(nn.Conv2d(2, 4, 3), nn.BatchNorm2d(4))
        self.second = nn.Sequential(nn.Conv2d(4, 4, 1), nn.BatchNorm2d(4))

    def forward(self, x, labels):
        h = self.second(F.relu(self.first(x))).mean((2, 3))
        return F.cross_entropy(h, labels)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(8, 24)

    def forward(self, x):
        q, k, v = self.qkv(x).view(2, 3, 3, 2, 4).permute(2, 0, 3, 1, 4)
        return F.scaled_dot_product_attention(q, k, v, dropout_p=0.1,
                                              is_causal=True).sum()


class Twice(nn.Module):
    """One BatchNorm1d run twice: its second call averages the batch's
    statistics into the first call's update."""
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(4, momentum=0.3)
        with torch.no_grad():
            self.bn.running_mean.uniform_(-1.0, 1.0)
            self.bn.running_var.uniform_(0.5, 2.0)
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        h = self.bn(torch.tanh(self.bn(x)) * 2)
        return (h * torch.arange(5.0)).square().mean()


class Video(nn.Module):
    """A Conv3d without bias, for which the exporter writes zeros of shape
    [M, 2] as the bias."""
    def __init__(self):
        super().__init__()
        self.c = nn.Conv3d(2, 3, 2, bias=False)

    def forward(self, x):
        return torch.tanh(self.c(x)).square().mean()


class MaskedAttention(nn.Module):
    """scaled_dot_product_attention with a boolean mask given at run time,
    which may hide every key of a query (a left-padded batch's first
    positions under a causal mask)."""
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(8, 24)

    def forward(self, x, mask):
        q, k, v = self.qkv(x).unflatten(-1, (3, 2, 4)).permute(2, 0, 3, 1, 4)
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return o.square().sum()


def edit_fx_nodes(name, op, old, new):
    """NAME-bogus.onnx: NAME.onnx with `old` replaced by `new` in the FX
    nodes that mention `op` (metadata that disagrees with the graph)."""
    bogus = onnx.load(f"{name}.onnx")
    for node in bogus.graph.node:
        for prop in node.metadata_props:
            if prop.key == "pkg.torch.onnx.fx_node" and op in prop.value:
                prop.value = prop.value.replace(old, new)
    onnx.save(bogus, f"{name}-bogus.onnx")


def save_training_step(name, model, inputs):
    """PyTorch's training step of `model` from its current state: the
    gradients (NAME.grads/, their names in NAME.params.json) and the
    running statistics one forward leaves (NAME.MODULE.running_mean.npy,
    NAME.MODULE.running_var.npy); the state is restored after."""
    state = {k: v.clone() for k, v in model.state_dict().items()}
    model.train()
    model.zero_grad()
    model(*inputs).backward()
    os.makedirs(f"{name}.grads", exist_ok=True)
    for n, p in model.named_parameters():
        np.save(f"{name}.grads/{n}.grad.npy", p.grad.numpy())
    with open(f"{name}.params.json", "w") as f:
        f.write("{\n" + ",\n".join(f' "{n}": [["{n}", false]]'
                                    for n, _ in model.named_parameters())
                + ',\n "": []\n}\n')
    for n, b in model.named_buffers():
        if n.endswith(("running_mean", "running_var")):
            np.save(f"{name}.{n}.npy", b.numpy())
    model.load_state_dict(state)


class Frequencies(nn.Module):
    def __init__(self):
        super().__init__()
        self.e = nn.Embedding(7, 4, scale_grad_by_freq=True)

    def forward(self, ids):
        return self.e(ids).sum()


def export_plain(name, model, inputs, names):
    torch.onnx.export(model, inputs, f"{name}.onnx", dynamo=True,
                      opset_version=18, input_names=names,
                      output_names=["loss"], optimize=False)
    onnx.save(onnx.load(f"{name}.onnx"), f"{name}.onnx",
              save_as_external_data=False)
    if os.path.exists(f"{name}.onnx.data"):
        os.remove(f"{name}.onnx.data")
    strip_node_annotations(f"{name}.onnx", keep=KEEP)


class Padded(nn.Module):
    def __init__(self):
        super().__init__()
        self.e = nn.Embedding(7, 4, padding_idx=1)
        self.head = nn.Linear(4, 7)

    def forward(self, ids, labels):
        logits = self.head(torch.tanh(self.e(ids)))
        return F.cross_entropy(logits.transpose(1, 2), labels)


def export(name, model, inputs, training, **options):
    model.train(training)
    state = {k: v.clone() for k, v in model.state_dict().items()}
    with torch.no_grad():
        loss = float(model(*inputs))
    model.load_state_dict(state)  # the forward moved the running statistics
    torch.onnx.export(model, inputs, f"{name}.onnx", dynamo=True,
                      opset_version=18, input_names=["x", "labels"],
                      output_names=["loss"], **options)
    m = onnx.load(f"{name}.onnx")
    onnx.save(m, f"{name}.onnx", save_as_external_data=False)
    if os.path.exists(f"{name}.onnx.data"):
        os.remove(f"{name}.onnx.data")
    strip_node_annotations(f"{name}.onnx", keep=KEEP)
    model.load_state_dict(state)  # and so may the export's tracing
    with open(f"{name}.torch-loss.txt", "w") as f:
        f.write(f"{loss:.7g}\n")


def dedup_training_norms():
    from onnx import TensorProto, helper, numpy_helper
    aliases = {"first.1.weight": ["first.1.running_var", "second.1.weight",
                                  "second.1.running_var"],
               "first.1.bias": ["first.1.running_mean", "second.1.bias",
                                "second.1.running_mean"]}
    nodes = [helper.make_node("Identity", [shared], [alias])
             for shared, names in aliases.items() for alias in names]
    for norm, x, y in (("first.1", "x", "h"), ("second.1", "h", "y")):
        nodes.append(helper.make_node(
            "BatchNormalization",
            [x] + [f"{norm}.{n}" for n in
                   ("weight", "bias", "running_mean", "running_var")],
            [y, f"{norm}.mean_out", f"{norm}.var_out"], training_mode=1))
    nodes.append(helper.make_node("ReduceSum", ["y"], ["loss"], keepdims=0))
    graph = helper.make_graph(
        nodes, "two_bn_train_dedup",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 2, 3])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
        [numpy_helper.from_array(np.ones(2, np.float32), "first.1.weight"),
         numpy_helper.from_array(np.zeros(2, np.float32), "first.1.bias")])
    onnx.save(helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17)]), "two-bn-train-dedup.onnx")


if __name__ == "__main__":
    os.chdir(HERE)
    torch.manual_seed(0)
    x, labels = torch.randn(4, 2, 5, 5), torch.tensor([0, 2, 1, 2])
    np.save("inputs.x.npy", x.numpy())
    np.save("inputs.labels.npy", labels.numpy())
    model = Classifier()
    export("bn-train", model, (x, labels), True, optimize=False)
    export("bn-train-fused", model, (x, labels), True)
    export("bn-eval", model, (x, labels), False)
    export("bn-eval-plain", model, (x, labels), False, optimize=False)
    export("smoothing", Classifier(0.1), (x, labels), False)
    two = TwoBlocks()
    export("two-bn", two, (x, labels), False)
    for name, folding in (("two-bn-ts", True), ("two-bn-ts-plain", False)):
        torch.onnx.export(two, (x, labels), f"{name}.onnx", dynamo=False,
                          opset_version=17, input_names=["x", "labels"],
                          output_names=["loss"],
                          do_constant_folding=folding)
    two.eval()
    two.zero_grad()
    two(x, labels).backward()
    os.makedirs("two-bn-ts-plain.grads", exist_ok=True)
    for n, p in two.named_parameters():
        np.save(f"two-bn-ts-plain.grads/{n}.grad.npy", p.grad.numpy())
    with open("two-bn-ts-plain.params.json", "w") as f:
        f.write("{\n" + ",\n".join(f' "{n}": [["{n}", false]]'
                                    for n, _ in two.named_parameters())
                + ',\n "": []\n}\n')

    torch.manual_seed(0)
    padded = Padded()
    ids = torch.tensor([[1, 2, 1, 3], [0, 1, 5, 6]])
    targets = torch.randint(0, 7, (2, 4))
    padded(ids, targets).backward()
    np.save("padding.ids.npy", ids.numpy())
    np.save("padding.labels.npy", targets.numpy())
    np.save("padding.e.weight.grad.npy", padded.e.weight.grad.numpy())
    export_plain("padding", padded, (ids, targets), ["ids", "labels"])
    # Metadata that disagrees with the graph: a padding_idx past the table.
    edit_fx_nodes("padding", "embedding", "%ids, 1)", "%ids, 9)")
    export_plain("sdpa-dropout", Attention().train(), (torch.randn(2, 3, 8),),
                 ["x"])
    export_plain("embedding-freq", Frequencies(), (ids,), ["ids"])
    dedup_training_norms()

    # The training-mode batch norms the import recovers from their FX nodes.
    save_training_step("bn-train", model, (x, labels))
    torch.manual_seed(0)
    twice = Twice()
    tx = torch.randn(3, 4, 5)
    np.save("bn-twice.x.npy", tx.numpy())
    save_training_step("bn-twice", twice, (tx,))
    export_plain("bn-twice", twice.train(), (tx,), ["x"])
    # bn-one-value: its input cut to one value per channel, which PyTorch's
    # training-mode batch norm refuses (export cannot write it).
    one = onnx.load("bn-twice.onnx")
    dims = one.graph.input[0].type.tensor_type.shape.dim
    dims[0].dim_value, dims[2].dim_value = 1, 1
    del one.graph.value_info[:]
    onnx.save(one, "bn-one-value.onnx")

    # A Conv3d's zero bias of the wrong shape, PyTorch adding none;
    # conv3d-bogus: its FX node edited to pass a bias, so not followed.
    video = Video()
    vx = torch.randn(2, 2, 3, 4, 4)
    np.save("conv3d.x.npy", vx.numpy())
    save_training_step("conv3d", video, (vx,))
    export_plain("conv3d", video, (vx,), ["x"])
    edit_fx_nodes("conv3d", "conv3d", "%p_c_weight)", "%p_c_weight, %x)")

    # A boolean attention mask hiding every key of some queries (a causal
    # mask over a left-padded batch): PyTorch gives those queries zeros.
    torch.manual_seed(0)
    attention = MaskedAttention()
    ax = torch.randn(2, 4, 8)
    causal = torch.ones(4, 4, dtype=torch.bool).tril()
    keep = torch.tensor([[True] * 4, [False, False, True, True]])
    amask = (causal & keep[:, None, :])[:, None]
    np.save("sdpa-mask.x.npy", ax.numpy())
    np.save("sdpa-mask.mask.npy", amask.numpy())
    save_training_step("sdpa-mask", attention, (ax, amask))
    export_plain("sdpa-mask", attention, (ax, amask), ["x", "mask"])
