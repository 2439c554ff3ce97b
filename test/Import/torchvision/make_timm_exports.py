#!/usr/bin/env python3
"""timm's models exported with their loss, as make_exports.py does for
torchvision's (same Step, same files, same check):

    make_timm_exports.py OUT_DIR MODEL_NAME...

Eval mode, 10 classes, batch 2; 64 x 64 images (the model's img_size set to
64 where it takes one), else the model's own input size. docs/import.md
lists the 57 models of the last sweep (timm 1.0.31) and what they gave.
"""
import os
import sys

import numpy as np
import timm
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_exports as M  # noqa: E402


def build(name):
    """The model and its image size: img_size=64, or 64 without it, or the
    model's own size; None when none runs."""
    for kwargs, size in (({"img_size": 64}, 64), ({}, 64), ({}, None)):
        try:
            torch.manual_seed(0)
            model = timm.create_model(name, pretrained=False, num_classes=10,
                                      **kwargs).eval()
            size = size or model.pretrained_cfg.get("input_size", (3, 224, 224))[-1]
            with torch.no_grad():
                model(torch.randn(2, 3, size, size))
            return model, size
        except Exception:  # another way to build it, or none
            continue
    return None, None


def main():
    out = sys.argv[1]
    for name in sys.argv[2:]:
        family = name.replace(".", "_")
        model, size = build(name)
        if model is None:
            print(family, "does not build", flush=True)
            continue
        M.no_randomness(model)
        with torch.no_grad():
            for p in model.parameters():
                p.add_(torch.randn_like(p) * 0.01)
        step = M.Step(model)
        gen = torch.Generator().manual_seed(2)
        images = torch.randn(2, 3, size, size, generator=gen)
        labels = torch.randint(0, 5, (2,), generator=gen)
        fdir = os.path.join(out, family)
        os.makedirs(os.path.join(fdir, "inputs"), exist_ok=True)
        np.save(os.path.join(fdir, "inputs", "pixel_values.npy"), images.numpy())
        np.save(os.path.join(fdir, "inputs", "labels.npy"), labels.numpy())
        M.write_params(model, os.path.join(fdir, "params.txt"))
        step.zero_grad()
        loss, logits = step(images, labels)
        loss.backward()
        ref = {"loss": loss.detach().numpy().astype(np.float32),
               "logits": logits.detach().numpy().astype(np.float32)}
        for n, p in step.named_parameters():
            if p.grad is not None:
                ref["grad/" + n] = p.grad.numpy().astype(np.float32)
        np.savez_compressed(os.path.join(fdir, "ref.npz"), **ref)
        for exporter in ("ts", "dynamo"):
            path = os.path.join(fdir, f"{family}-{exporter}-loss.onnx")
            try:
                M.export(step, (images, labels), path, exporter, "eval")
                print(family, exporter, "exported at", size, flush=True)
            except Exception as e:  # an exporter's failure is PyTorch's
                print(family, exporter, "export failed:", type(e).__name__,
                      str(e)[:150].replace("\n", " "), flush=True)
                if os.path.exists(path):
                    os.remove(path)


if __name__ == "__main__":
    main()
