#!/usr/bin/python3
"""Convolutional and recurrent models with their loss, exported by
torch.onnx.export, for test/Import/pytorch-cnn-rnn.test; the layout and the
references are gen_models.py's (see its docstring):

  cnn   Conv2d, GroupNorm (exported as InstanceNormalization), ReLU,
        MaxPool2d, a strided Conv2d, BatchNorm2d, AdaptiveAvgPool2d,
        Linear, cross-entropy; exported in training mode (BatchNorm on the
        batch's statistics, its running averages as extra outputs);
  rnn   Embedding, a two-layer LSTM (batch first), a bidirectional GRU,
        Linear, cross-entropy;
  unet  Conv2d, MaxPool2d, ConvTranspose2d, a skip concatenation, bilinear
        and nearest upsampling (Resize), a 1x1 Conv2d, mean squared error.

Each is exported at opsets 14 and 17 without constant folding, the CNN in
training mode (in eval mode the exporter folds BatchNorm into the
convolution before it, and no exported weight is a PyTorch parameter any
more), the others in eval mode; the references are computed in the same
mode. Run with Debian's python3-torch (PyTorch 1.13, CPU) from this
directory:

    /usr/bin/python3 gen_more_models.py

`gen_more_models.py opset13` writes only cnn-opset13.onnx (the CNN at
opset 13, whose training-mode BatchNormalization has five outputs).

`gen_more_models.py running` (with the onnx package) writes only the
running statistics one training step leaves in the CNN's BatchNorm, started
from the exported model's values (cnn.norm2.running_mean.npy and
cnn.norm2.running_var.npy): PyTorch's mean, and its variance in ONNX's
convention (the batch's variance biased, where PyTorch averages the
unbiased one in).

`gen_more_models.py eval` (with the onnx package, after `running`) writes
only cnn.eval_loss.npy: the loss of the exported CNN under model.eval() on
cnn.inputs, its BatchNorm normalizing with those running statistics, the
validation loss of one `tgc train --lr 0` step on the same batch (written
with PyTorch 2.15 from pip, CPU).
"""
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from gen_models import VOCAB, export, save_reference


class Cnn(nn.Module):
    CLASSES = 5

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.norm1 = nn.GroupNorm(2, 8)
        self.conv2 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.norm2 = nn.BatchNorm2d(16)
        self.fc = nn.Linear(16, self.CLASSES)
        # Running statistics that are not the identity.
        self.norm2.running_mean.uniform_(-0.5, 0.5)
        self.norm2.running_var.uniform_(0.5, 2.0)

    def forward(self, x, labels):
        x = F.max_pool2d(F.relu(self.norm1(self.conv1(x))), 2)
        x = F.relu(self.norm2(self.conv2(x)))
        logits = self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))
        return F.cross_entropy(logits, labels), logits


class Rnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, 16)
        self.lstm = nn.LSTM(16, 24, num_layers=2, batch_first=True)
        self.gru = nn.GRU(24, 12, batch_first=True, bidirectional=True)
        self.head = nn.Linear(24, VOCAB)

    def forward(self, ids, labels):
        x, _ = self.lstm(self.wte(ids))
        x, _ = self.gru(x)
        logits = self.head(x)
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), labels.reshape(-1))
        return loss, logits


class UNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc1 = nn.Conv2d(3, 8, 3, padding=1)
        self.enc2 = nn.Conv2d(8, 16, 3, padding=1)
        self.up = nn.ConvTranspose2d(16, 8, 2, stride=2)
        self.dec = nn.Conv2d(16, 8, 3, padding=1)
        self.out = nn.Conv2d(11, 1, 1)

    def forward(self, x, target):
        e1 = F.relu(self.enc1(x))
        e2 = F.relu(self.enc2(F.max_pool2d(e1, 2)))
        d = F.relu(self.dec(torch.cat([self.up(e2), e1], 1)))
        d = F.interpolate(d, scale_factor=2, mode="bilinear",
                          align_corners=False)
        n = F.interpolate(x, scale_factor=2, mode="nearest")
        y = self.out(torch.cat([d, n], 1))
        return ((y - target) ** 2).mean(), y


def load_exported_cnn():
    """The CNN with cnn-opset14.onnx's initializers (its state dict)."""
    import onnx
    from onnx import numpy_helper
    exported = onnx.load("cnn-opset14.onnx")
    state = {t.name: torch.from_numpy(numpy_helper.to_array(t).copy())
             for t in exported.graph.initializer}
    model = Cnn()
    model.load_state_dict(state, strict=False)
    return model


def save_running_statistics():
    """The CNN's BatchNorm statistics after one step of PyTorch from the
    exported model's values, the variance in ONNX's biased convention."""
    model = load_exported_cnn()
    before = model.norm2.running_var.clone()
    momentum = model.norm2.momentum
    seen = {}
    model.norm2.register_forward_hook(
        lambda module, args, out: seen.update(x=args[0]))
    model.train(True)
    x = torch.from_numpy(np.load("cnn.inputs/x.npy"))
    labels = torch.from_numpy(np.load("cnn.inputs/labels.npy"))
    with torch.no_grad():
        model(x, labels)
    n = seen["x"].numel() // seen["x"].shape[1]
    # PyTorch: (1 - m) * var + m * unbiased; ONNX: the batch's biased one.
    unbiased = (model.norm2.running_var - (1 - momentum) * before) / momentum
    biased = unbiased * (n - 1) / n
    np.save("cnn.norm2.running_mean.npy", model.norm2.running_mean.numpy())
    np.save("cnn.norm2.running_var.npy",
            ((1 - momentum) * before + momentum * biased).numpy())


def save_eval_loss():
    """The exported CNN's loss in evaluation mode, with the running
    statistics of save_running_statistics."""
    model = load_exported_cnn()
    model.norm2.running_mean.copy_(
        torch.from_numpy(np.load("cnn.norm2.running_mean.npy")))
    model.norm2.running_var.copy_(
        torch.from_numpy(np.load("cnn.norm2.running_var.npy")))
    model.eval()
    x = torch.from_numpy(np.load("cnn.inputs/x.npy"))
    labels = torch.from_numpy(np.load("cnn.inputs/labels.npy"))
    with torch.no_grad():
        loss, _ = model(x, labels)
    np.save("cnn.eval_loss.npy", loss.numpy())


if __name__ == "__main__" and sys.argv[1:] == ["running"]:
    save_running_statistics()
elif __name__ == "__main__" and sys.argv[1:] == ["eval"]:
    save_eval_loss()
elif __name__ == "__main__" and sys.argv[1:] == ["opset13"]:
    # The CNN at opset 13 only (its references are the ones above): the
    # exporter's BatchNormalization then also outputs the batch's mean and
    # variance (saved_mean, saved_var).
    torch.manual_seed(2)
    images = {"x": torch.randn(4, 3, 8, 8),
              "labels": torch.randint(0, Cnn.CLASSES, (4,))}
    torch.manual_seed(0)
    export("cnn", Cnn(), images, 13, False, True)
elif __name__ == "__main__":
    torch.manual_seed(2)
    images = {"x": torch.randn(4, 3, 8, 8),
              "labels": torch.randint(0, Cnn.CLASSES, (4,))}
    tokens = {"ids": torch.randint(0, VOCAB, (2, 6)),
              "labels": torch.randint(0, VOCAB, (2, 6))}
    pictures = {"x": torch.randn(2, 3, 8, 8),
                "target": torch.randn(2, 1, 16, 16)}
    for name, make, inputs in [("cnn", Cnn, images), ("rnn", Rnn, tokens),
                               ("unet", UNet, pictures)]:
        torch.manual_seed(0)
        model = make()
        training = name == "cnn"
        save_reference(name, model, inputs, train=training)
        for opset in (14, 17):
            export(name, model, inputs, opset, False, training)
