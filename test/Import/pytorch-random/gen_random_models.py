#!/usr/bin/python3
"""A variational autoencoder with random draws in its forward, exported by
torch.onnx.export (PyTorch 1.13, CPU, f32, opset 15) for
test/Import/pytorch-random.test:

  torch.bernoulli(p)   Bernoulli           a per-sample keep mask (stochastic
                                           depth of the encoder's residual)
  torch.randn_like(s)  RandomNormalLike    the reparameterization noise
  torch.rand_like(x)   RandomUniformLike   jitter on the reconstruction target
  torch.randn(shape)   RandomNormal        noise on the decoder's input,
                                           scaled and shifted

PyTorch's own generator cannot be matched, so the references replace each
draw by tgc's: the Philox4x32-10 numbers tg.random defines (TGOps.td), for
the seed in seed.npy and the streams the importer gives the random nodes in
graph order (0, 1, 2, 3). The model then computes in PyTorch as exported.
Run with Debian's python3-torch from this directory:

    /usr/bin/python3 gen_random_models.py

Writes vae-b4.onnx (batch 4: the loss and the reconstruction),
vae-loss-b8.onnx (batch 8, the loss alone; the same weights), x.npy (batch 4), seed.npy, and PyTorch's loss and
reconstruction for them (vae.loss.npy, vae.recon.npy).
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from tgc_philox import tgc_random

class Vae(nn.Module):
    FEATURES, HIDDEN, LATENT = 8, 16, 4

    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(self.FEATURES, self.HIDDEN)
        self.mu = nn.Linear(self.HIDDEN, self.LATENT)
        self.logvar = nn.Linear(self.HIDDEN, self.LATENT)
        self.dec = nn.Linear(self.LATENT, self.FEATURES)
        self.seed = None  # None: PyTorch's generator (export); else tgc's

    def draw(self, stream, shape, normal, torch_draw):
        if self.seed is None:
            return torch_draw()
        return torch.from_numpy(tgc_random(shape, self.seed, stream, normal))

    def forward(self, x):
        batch = x.shape[0]
        h = F.relu(self.enc(x))
        p = torch.full((batch, 1), 0.75)
        keep = (self.draw(0, (batch, 1), False, lambda: torch.bernoulli(p)))
        if self.seed is not None:
            keep = (keep < p).float()
        h = h + h * keep / 0.75
        mu, logvar = self.mu(h), self.logvar(h)
        std = torch.exp(0.5 * logvar)
        eps = self.draw(1, tuple(std.shape), True, lambda: torch.randn_like(std))
        z = mu + eps * std
        jitter = self.draw(2, tuple(x.shape), False, lambda: torch.rand_like(x))
        noise = self.draw(3, (batch, self.LATENT), True,
                          lambda: torch.randn(batch, self.LATENT))
        recon = self.dec(z + (noise * 0.5 + 0.25) * 0.1)
        kl = -0.5 * torch.mean(1 + logvar - mu * mu - logvar.exp())
        err = recon - (x + 0.05 * jitter)
        return torch.mean(err * err) + kl, recon


class LossOnly(nn.Module):
    """The loss alone (another graph, as a user's second export would be)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)[0]


def export(model, batch, path, outputs):
    x = torch.randn(batch, Vae.FEATURES)
    torch.onnx.export(model, (x,), path, opset_version=15,
                      do_constant_folding=False, input_names=["x"],
                      output_names=outputs,
                      training=torch.onnx.TrainingMode.TRAINING)


if __name__ == "__main__":
    torch.manual_seed(0)
    model = Vae()
    export(model, 4, "vae-b4.onnx", ["loss", "recon"])
    export(LossOnly(model), 8, "vae-loss-b8.onnx", ["loss"])
    torch.manual_seed(1)
    x = torch.randn(4, Vae.FEATURES)
    seed = 1234567890123
    np.save("x.npy", x.numpy())
    np.save("seed.npy", np.array(seed, dtype=np.int64))
    model.seed = seed
    loss, recon = model(x)
    np.save("vae.loss.npy", loss.detach().numpy())
    np.save("vae.recon.npy", recon.detach().numpy())
