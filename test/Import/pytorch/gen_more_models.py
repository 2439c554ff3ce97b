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
"""
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


if __name__ == "__main__":
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
