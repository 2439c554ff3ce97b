#!/usr/bin/python3
"""A residual MLP whose blocks torch.onnx.export writes as ONNX local
functions (`export_modules_as_functions`, PyTorch 1.13, opset 15): each
Block call is a node of domain `__main__` whose FunctionProto holds its
LayerNorm, Linear and ReLU, its weights passed in as inputs. For
test/Import/pytorch-functions.test. Run with Debian's python3-torch from
this directory:

    /usr/bin/python3 gen_function_models.py

Writes blocks-functions.onnx (the blocks as functions), blocks-plain.onnx
(the same model and weights exported without functions), x.npy, labels.npy
and PyTorch's loss and logits for them (blocks.loss.npy, blocks.logits.npy).
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(8)
        self.linear = nn.Linear(8, 8)

    def forward(self, x):
        return x + torch.relu(self.linear(self.norm(x)))


class Blocks(nn.Module):
    def __init__(self):
        super().__init__()
        self.b1, self.b2 = Block(), Block()
        self.head = nn.Linear(8, 3)

    def forward(self, x, labels):
        logits = self.head(self.b2(self.b1(x)))
        return F.cross_entropy(logits, labels), logits


torch.manual_seed(0)
model = Blocks()
# LayerNorm weights that differ from block to block (the exporter would
# otherwise share the equal ones).
with torch.no_grad():
    for block in (model.b1, model.b2):
        block.norm.weight.uniform_(0.5, 1.5)
        block.norm.bias.uniform_(-0.5, 0.5)
x = torch.randn(4, 8)
labels = torch.tensor([0, 1, 2, 0])
for stem, functions in [("functions", {Block}), ("plain", False)]:
    torch.onnx.export(model, (x, labels), f"blocks-{stem}.onnx",
                      opset_version=15, do_constant_folding=False,
                      input_names=["x", "labels"],
                      output_names=["loss", "logits"],
                      export_modules_as_functions=functions)
np.save("x.npy", x.numpy())
np.save("labels.npy", labels.numpy())
loss, logits = model(x, labels)
np.save("blocks.loss.npy", loss.detach().numpy())
np.save("blocks.logits.npy", logits.detach().numpy())
