#!/usr/bin/python3
"""A TorchScript module with data-dependent control flow, exported by
torch.onnx.export (PyTorch 1.13, CPU, f32) for
test/Import/pytorch-script.test: a loop over the batch dimension
(`range(x.size(0))`, an ONNX Loop whose trip count comes from a Shape) and
an `if` on the sign of a sum (an If whose condition is known only at run
time), with a cross-entropy loss. Run with Debian's python3-torch from
this directory:

    /usr/bin/python3 gen_script_models.py

Writes script-loop-if.onnx, labels.npy and an input for each branch
(x-then.npy, x-else.npy) with PyTorch's loss and logits for it
(script-loop-if.then.loss.npy, ...).
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class LoopIf(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.Linear(8, 8)
        self.head = nn.Linear(8, 5)

    def forward(self, x, labels):
        h = x
        for _ in range(x.size(0)):
            h = torch.tanh(self.cell(h))
        if bool(h.sum() > 0):
            logits = self.head(F.relu(h))
        else:
            logits = self.head(h) * 2
        return F.cross_entropy(logits, labels), logits


torch.manual_seed(0)
model = torch.jit.script(LoopIf())
x = torch.randn(4, 8)
labels = torch.randint(0, 5, (4,))
torch.onnx.export(model, (x, labels), "script-loop-if.onnx", opset_version=14,
                  input_names=["x", "labels"], output_names=["loss", "logits"])
np.save("labels.npy", labels.numpy())


def takes_then(value):
    h = value
    for _ in range(value.size(0)):
        h = torch.tanh(model.cell(h))
    return bool(h.sum() > 0)


# An input for each branch: x, and the first shift of it that flips the
# condition.
other = next(x + shift for shift in torch.linspace(-3, 3, 61)
             if takes_then(x + shift) != takes_then(x))
then_input, else_input = (x, other) if takes_then(x) else (other, x)
for stem, value in [("then", then_input), ("else", else_input)]:
    np.save(f"x-{stem}.npy", value.numpy())
    loss, logits = model(value, labels)
    np.save(f"script-loop-if.{stem}.loss.npy", loss.detach().numpy())
    np.save(f"script-loop-if.{stem}.logits.npy", logits.detach().numpy())
