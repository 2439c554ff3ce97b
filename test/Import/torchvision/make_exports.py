#!/usr/bin/env python3
"""Torchvision's classifiers, segmentation and video models exported with
their loss by torch.onnx.export, for hf/check_export.py (tgc's loss, logits
and gradients against PyTorch's).

    make_exports.py OUT_DIR eval|train [FAMILY...]

Each family gets OUT_DIR/FAMILY/ with FAMILY-ts-loss.onnx (TorchScript
exporter, opset 17) and FAMILY-dynamo-loss.onnx (dynamo exporter, opset
18), params.txt (named_parameters() of the Step below), inputs/{pixel_values,
labels}.npy, ref.npz (PyTorch's loss, logits and autograd's gradients
as grad/NAME) and ref64.npz (the same in f64). Then, for each export:

    check_export.py build/bin/tgc OUT_DIR/FAMILY FAMILY-ts-loss WORK_DIR

`eval` runs and exports the model in eval mode (BatchNorm with its running
statistics), `train` in training mode (batch statistics; the dynamo
exporter writes eval-mode BatchNorm then, so only the TorchScript export is
comparable). Dropout and stochastic depth are set to 0 (their masks are
PyTorch's RNG's). Every parameter gets a seeded perturbation (norm weights
are all ones otherwise). BATCH and SIZE (environment) override the batch
and the image size.

The tiny families (swin_v2_tiny: torchvision's Swin V2 blocks at width 16,
two stages, 24 x 24 images, so that both stages pad their windows with
zero tokens whose keys have a zero norm) are checked in
(test/Import/torchvision.test); the others are the sweep of the models
torchvision ships (docs/import.md has the figures).
"""
import copy
import os
import sys
import warnings

import numpy as np
import torch
import torchvision

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from export_helpers import strip_node_annotations, write_params  # noqa: E402

CLASSES = 10
BATCH = int(os.environ.get("BATCH", "2"))


def tiny_swin_v2():
    from torchvision.models import swin_transformer as st
    return st.SwinTransformer(
        patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[2, 2],
        window_size=[4, 4], stochastic_depth_prob=0.0, num_classes=5,
        block=st.SwinTransformerBlockV2, downsample_layer=st.PatchMergingV2)


def models():
    """(family, constructor, input size): the image's side, or (frames,
    side) for a video model."""
    tv = torchvision.models
    seg, video = tv.segmentation, tv.video
    yield "swin_v2_tiny", tiny_swin_v2, 24
    yield "resnet18", lambda: tv.resnet18(num_classes=CLASSES), 32
    yield "resnet50", lambda: tv.resnet50(num_classes=CLASSES), 32
    yield "resnext50", lambda: tv.resnext50_32x4d(num_classes=CLASSES), 32
    yield "wide_resnet50", lambda: tv.wide_resnet50_2(num_classes=CLASSES), 32
    yield "mobilenet_v2", lambda: tv.mobilenet_v2(num_classes=CLASSES), 32
    yield "mobilenet_v3_small", lambda: tv.mobilenet_v3_small(num_classes=CLASSES), 32
    yield "mobilenet_v3_large", lambda: tv.mobilenet_v3_large(num_classes=CLASSES), 32
    yield "efficientnet_b0", lambda: tv.efficientnet_b0(num_classes=CLASSES), 32
    yield "efficientnet_v2_s", lambda: tv.efficientnet_v2_s(num_classes=CLASSES), 32
    yield "densenet121", lambda: tv.densenet121(num_classes=CLASSES), 32
    yield "squeezenet1_1", lambda: tv.squeezenet1_1(num_classes=CLASSES), 48
    yield "shufflenet_v2", lambda: tv.shufflenet_v2_x0_5(num_classes=CLASSES), 32
    yield "mnasnet0_5", lambda: tv.mnasnet0_5(num_classes=CLASSES), 32
    yield "regnet_y_400mf", lambda: tv.regnet_y_400mf(num_classes=CLASSES), 32
    yield "regnet_x_400mf", lambda: tv.regnet_x_400mf(num_classes=CLASSES), 32
    yield "googlenet", lambda: tv.googlenet(num_classes=CLASSES, aux_logits=False,
                                            init_weights=True), 32
    yield "inception_v3", lambda: tv.inception_v3(num_classes=CLASSES, aux_logits=False,
                                                  init_weights=True), 80
    yield "alexnet", lambda: tv.alexnet(num_classes=CLASSES), 64
    yield "convnext_tiny", lambda: tv.convnext_tiny(num_classes=CLASSES), 32
    yield "vit_b_16", lambda: tv.vit_b_16(num_classes=CLASSES, image_size=32), 32
    yield "swin_t", lambda: tv.swin_t(num_classes=CLASSES), 32
    yield "swin_v2_t", lambda: tv.swin_v2_t(num_classes=CLASSES), 32
    yield "maxvit_t", lambda: tv.maxvit_t(num_classes=CLASSES), 224
    # Segmentation: per-pixel logits (the model's "out"), per-pixel labels.
    yield "fcn_resnet50", lambda: seg.fcn_resnet50(
        num_classes=CLASSES, weights_backbone=None), 64
    yield "deeplabv3_resnet50", lambda: seg.deeplabv3_resnet50(
        num_classes=CLASSES, weights_backbone=None), 64
    yield "deeplabv3_mobilenet_v3", lambda: seg.deeplabv3_mobilenet_v3_large(
        num_classes=CLASSES, weights_backbone=None), 64
    yield "lraspp_mobilenet_v3", lambda: seg.lraspp_mobilenet_v3_large(
        num_classes=CLASSES, weights_backbone=None), 64
    # Video classifiers: [N, 3, frames, side, side].
    yield "r3d_18", lambda: video.r3d_18(num_classes=CLASSES), (4, 32)
    yield "mc3_18", lambda: video.mc3_18(num_classes=CLASSES), (4, 32)
    yield "r2plus1d_18", lambda: video.r2plus1d_18(num_classes=CLASSES), (4, 32)
    yield "s3d", lambda: video.s3d(num_classes=CLASSES), (16, 224)
    yield "swin3d_t", lambda: video.swin3d_t(num_classes=CLASSES), (4, 64)


class Step(torch.nn.Module):
    """(loss, logits): the mean cross-entropy of the model's logits (per
    pixel for a segmentation model's "out")."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, pixel_values, labels):
        logits = self.model(pixel_values)
        if isinstance(logits, dict):
            logits = logits["out"]
        return torch.nn.functional.cross_entropy(logits, labels), logits


def make_batch(model, size):
    """The seeded images ([N, 3, side, side], or [N, 3, frames, side,
    side] for a (frames, side) size) and labels: one per image, or one per
    pixel where the logits are an image (found on a copy of the model in
    eval mode, so that neither running statistics nor caches move)."""
    gen = torch.Generator().manual_seed(2)
    frames, side = size if isinstance(size, tuple) else (None, size)
    shape = (BATCH, 3) + ((frames,) if frames else ()) + (side, side)
    images = torch.randn(*shape, generator=gen)
    with torch.no_grad():
        logits = copy.deepcopy(model).eval()(images)
    if isinstance(logits, dict):
        logits = logits["out"]
    labels = torch.randint(0, 5, (BATCH,) + tuple(logits.shape[2:]), generator=gen)
    return images, labels


def no_randomness(model):
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout) or type(module).__name__ == "StochasticDepth":
            module.p = 0.0
    return model


def drop_cached_biases(model):
    """Empties the eval-mode caches of timm's attention biases (LeViT,
    EfficientFormer and V2, EfficientViT (MSRA), TinyViT: a dict filled on
    the first eval call). A cache filled before the perturbation keeps the
    old biases: the reference would run with them while the exports read
    the parameters; one filled by the reference would reach the exports as
    a tensor."""
    for module in model.modules():
        if isinstance(getattr(module, "attention_bias_cache", None), dict):
            module.attention_bias_cache = {}


def export(step, args, path, exporter, mode):
    training = (torch.onnx.TrainingMode.TRAINING if mode == "train"
                else torch.onnx.TrainingMode.EVAL)
    names = dict(input_names=["pixel_values", "labels"], output_names=["loss", "logits"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if exporter == "ts":
            torch.onnx.export(step, args, path, dynamo=False, opset_version=17,
                              do_constant_folding=False, training=training, **names)
        else:
            torch.onnx.export(step, args, path, dynamo=True, opset_version=18,
                              external_data=False, optimize=False, training=training,
                              **names)
    strip_node_annotations(path)


def reference(step, images, labels):
    """The step's loss, logits and autograd's gradients (grad/NAME), in
    the step's precision."""
    step.zero_grad(set_to_none=True)
    loss, logits = step(images, labels)
    loss.backward()
    ref = {"loss": loss.detach().numpy(), "logits": logits.detach().numpy()}
    for name, p in step.named_parameters():
        if p.grad is not None:
            ref["grad/" + name] = p.grad.numpy()
    return ref


def write_f64_reference(fdir, model, state, images, labels):
    """ref64.npz: the reference in f64 (a copy of the model from `state`,
    the batch widened), which check_export.py consults where tgc and
    PyTorch's f32 reference differ: the exact answer says which of the two
    is off."""
    model64 = copy.deepcopy(model)
    model64.load_state_dict(state)
    model64 = model64.double()
    drop_cached_biases(model64)
    try:
        ref = reference(Step(model64), images.double(), labels)
    except Exception as e:  # an op without a double kernel
        print("no f64 reference:", type(e).__name__, str(e)[:200], flush=True)
        return
    np.savez_compressed(os.path.join(fdir, "ref64.npz"), **ref)


def write_family(out, family, model, size, mode):
    """OUT/FAMILY/ for `model` (built, in `mode`): the parameters perturbed,
    the batch, params.txt, PyTorch's reference and both exports."""
    no_randomness(model)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.01)
    drop_cached_biases(model)
    step = Step(model)
    images, labels = make_batch(model, size)
    fdir = os.path.join(out, family)
    os.makedirs(os.path.join(fdir, "inputs"), exist_ok=True)
    np.save(os.path.join(fdir, "inputs", "pixel_values.npy"), images.numpy())
    np.save(os.path.join(fdir, "inputs", "labels.npy"), labels.numpy())
    write_params(model, os.path.join(fdir, "params.txt"))
    # The reference runs first: a training-mode export runs the model,
    # which moves BatchNorm's running statistics.
    state = copy.deepcopy(model.state_dict())
    np.savez_compressed(os.path.join(fdir, "ref.npz"), **reference(step, images, labels))
    write_f64_reference(fdir, model, state, images, labels)
    for exporter in ("ts", "dynamo"):
        model.load_state_dict(state)
        drop_cached_biases(model)
        path = os.path.join(fdir, f"{family}-{exporter}-loss.onnx")
        try:
            export(step, (images, labels), path, exporter, mode)
            print(family, exporter, "exported at", size, flush=True)
        except Exception as e:  # an exporter's failure is PyTorch's
            print(family, exporter, "export failed:", type(e).__name__,
                  str(e)[:200].replace("\n", " "), flush=True)
            if os.path.exists(path):
                os.remove(path)


def main():
    out, mode, only = sys.argv[1], sys.argv[2], sys.argv[3:]
    assert mode in ("eval", "train"), "mode: eval or train"
    for family, make, size in models():
        if only and family not in only:
            continue
        torch.manual_seed(0)
        model = make()
        model.train(mode == "train")
        if "SIZE" in os.environ:
            side = int(os.environ["SIZE"])
            size = (size[0], side) if isinstance(size, tuple) else side
        write_family(out, family, model, size, mode)


if __name__ == "__main__":
    main()
