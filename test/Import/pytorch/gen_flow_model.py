#!/usr/bin/python3
"""A linear normalizing flow with its negative log-likelihood, exported by
torch.onnx.export, for test/Import/pytorch-flow.test; the layout and the
references are gen_models.py's (see its docstring).

  flow  two invertible linear maps (a 4 x 4 matrix with a bias, then one
        without), each adding -log|det W| to the loss: the change of
        variables of a Gaussian density, as Glow's invertible 1x1
        convolutions train. torch.det exports as ONNX Det, whose
        gradient det(W) W^-T must reach both weights; the first matrix has
        a zero where elimination would take its first pivot (a row swap).

Exported at opset 17. Run with Debian's python3-torch (PyTorch 1.13, CPU)
and onnx from this directory:

    python3 gen_flow_model.py
"""
import math

import torch
import torch.nn as nn

from gen_models import export, save_reference


class LinearFlow(nn.Module):
    FEATURES = 4

    def __init__(self):
        super().__init__()
        self.w1 = nn.Parameter(torch.randn(4, 4) + 2 * torch.eye(4))
        with torch.no_grad():
            self.w1[0, 0] = 0.0
        self.b1 = nn.Parameter(torch.randn(4) * 0.1)
        self.w2 = nn.Parameter(torch.linalg.qr(torch.randn(4, 4))[0])

    def forward(self, x):
        z = (x @ self.w1.T + self.b1) @ self.w2.T
        log_det = (torch.log(torch.abs(torch.det(self.w1))) +
                   torch.log(torch.abs(torch.det(self.w2))))
        nll = 0.5 * (z * z).sum(-1) + 0.5 * self.FEATURES * math.log(
            2 * math.pi) - log_det
        return nll.mean(), z


if __name__ == "__main__":
    torch.manual_seed(5)
    inputs = {"x": torch.randn(8, LinearFlow.FEATURES) * 3}
    torch.manual_seed(0)
    model = LinearFlow()
    save_reference("flow", model, inputs)
    export("flow", model, inputs, 17, False, training=True)
