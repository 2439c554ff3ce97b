#!/usr/bin/env python3
"""timm's models exported with their loss, as make_exports.py does for
torchvision's (same Step, same files, same check):

    make_timm_exports.py [--train] OUT_DIR MODEL_NAME...

Eval mode (--train: training mode, batch statistics), 10 classes, batch 2
(BATCH overrides it); 64 x 64 images (the model's img_size set to 64 where
it takes one), else the model's own input size. docs/import.md lists the
models of the last sweeps (timm 1.0.31) and what they gave.
"""
import os
import sys

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
    args = sys.argv[1:]
    mode = "train" if args[:1] == ["--train"] else "eval"
    if mode == "train":
        args = args[1:]
    out = args[0]
    for name in args[1:]:
        family = name.replace(".", "_")
        model, size = build(name)
        if model is None:
            print(family, "does not build", flush=True)
            continue
        model.train(mode == "train")
        M.write_family(out, family, model, size, mode)


if __name__ == "__main__":
    main()
