#!/usr/bin/python3
"""A quantization-aware-training MLP with its loss, exported by
torch.onnx.export, for test/Import/pytorch-qat.test; the layout and the
references are gen_models.py's (see its docstring).

  qat   the input fake-quantized to uint8 (per tensor), the first Linear's
        weight to int8 per output channel (its scales a buffer), ReLU, the
        hidden activations to uint8 with PyTorch's reduced range (0 to 127:
        the exporter writes QuantizeLinear, Clip, DequantizeLinear), the
        second Linear's weight to int8 per tensor, cross-entropy.

Each fake quantization exports as a QuantizeLinear/DequantizeLinear pair,
which tgc imports as one tg.quantize_dequantize: its gradient is PyTorch's
straight-through estimator (passed where the rounded value is inside the
grid, 0 where it was clamped). The weights are scaled so that some of
their values are clamped. Exported at opset 13 in training mode. Run with
Debian's python3-torch (PyTorch 1.13, CPU) from this directory:

    /usr/bin/python3 gen_qat_model.py
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from gen_models import export, save_reference


class QatMlp(nn.Module):
    FEATURES, HIDDEN, CLASSES = 12, 16, 5

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(self.FEATURES, self.HIDDEN)
        self.fc2 = nn.Linear(self.HIDDEN, self.CLASSES)
        # Per-channel scales small enough that the largest weights clamp.
        self.register_buffer(
            "w1_scale", torch.linspace(0.0008, 0.002, self.HIDDEN))
        self.register_buffer(
            "w1_zero", torch.zeros(self.HIDDEN, dtype=torch.int32))

    def forward(self, x, labels):
        x = torch.fake_quantize_per_tensor_affine(x, 0.02, 128, 0, 255)
        w1 = torch.fake_quantize_per_channel_affine(
            self.fc1.weight, self.w1_scale, self.w1_zero, 0, -128, 127)
        h = F.relu(F.linear(x, w1, self.fc1.bias))
        h = torch.fake_quantize_per_tensor_affine(h, 0.01, 0, 0, 127)
        w2 = torch.fake_quantize_per_tensor_affine(self.fc2.weight, 0.002, 0,
                                                   -128, 127)
        logits = F.linear(h, w2, self.fc2.bias)
        return F.cross_entropy(logits, labels), logits


if __name__ == "__main__":
    torch.manual_seed(3)
    inputs = {"x": torch.randn(8, QatMlp.FEATURES),
              "labels": torch.randint(0, QatMlp.CLASSES, (8,))}
    torch.manual_seed(0)
    model = QatMlp()
    save_reference("qat", model, inputs)
    export("qat", model, inputs, 13, False, training=True)
