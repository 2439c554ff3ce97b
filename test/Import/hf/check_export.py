#!/usr/bin/python3
"""Checks one export of hf/make_exports.py (or of torchvision/'s
generators) against PyTorch's references, with tgc and numpy only (no
PyTorch):

    check_export.py TGC FAMILY_DIR STEM WORK_DIR [--train]

1. `tgc import STEM.onnx --parameters params.txt`: the imported parameters
   (tg.role = "param") are exactly the names of named_parameters(), no buffer
   among them and none missing;
2. `tgc run STEM.onnx` on the batch: loss and logits match PyTorch's
   (allclose, rtol 1e-4, atol 1e-5);
3. for an export with its loss: `tgc compile --autodiff`, then `tgc run` of
   the step: every parameter's gradient matches autograd's (rtol 1e-3, atol
   1e-4 of the gradient's largest magnitude, at least 1e-7 of the model's
   largest gradient).
Where FAMILY_DIR has ref64.npz (the same references computed in f64), a
loss, logits or gradient off PyTorch's f32 one still passes if it matches
the f64 one within the same tolerances, or is no farther from it than
PyTorch's f32 one is (the reference's own rounding, not tgc's); the line
says how many passed so.
With --train, only: `tgc train STEM.onnx --steps 1 --data fixed` on the
batch logs PyTorch's loss as step 1's (rtol 1e-4): it starts from the
exported weights.
Prints one line per check ("... ok" or "... FAIL") and exits 1 on a failure.
"""
import os
import re
import subprocess
import sys

import numpy as np

tgc, family_dir, stem, work = sys.argv[1:5]
train_only = sys.argv[5:] == ["--train"]
variant = stem.rsplit("-", 1)[1]
onnx_file = os.path.join(family_dir, stem + ".onnx")
params_file = os.path.join(family_dir, "params.txt")
inputs = {"logits": ["input_ids"], "mask": ["input_ids", "attention_mask", "labels"]}.get(
    variant, ["input_ids", "labels"])
# Image and audio models take pixel_values or input_features first.
for first in ("pixel_values", "input_features"):
    if os.path.exists(os.path.join(family_dir, "inputs", first + ".npy")):
        inputs[0] = first
input_args = [f"--input={n}={family_dir}/inputs/{n}.npy" for n in inputs]
ref = np.load(os.path.join(family_dir, {"mask": "ref-mask.npz", "defaults": "ref-defaults.npz"}.get(
    variant, "ref.npz")))
# The f64 reference, where the generator wrote one: a value off PyTorch's
# f32 one passes if it matches the f64 answer within the same tolerances,
# or is no farther from it than PyTorch's.
ref64_file = os.path.join(family_dir, "ref64.npz")
ref64 = np.load(ref64_file) if variant == "loss" and os.path.exists(ref64_file) else None


def as_accurate(key, value, rtol, atol):
    """Whether `value` matches the f64 reference of `key` within the
    tolerances, or is at least as close to it as PyTorch's f32 one is, with
    both errors (0 without ref64)."""
    if ref64 is None or key not in ref64.files or value.shape != ref64[key].shape:
        return False, 0.0, 0.0
    exact = ref64[key]
    ours = float(np.abs(value - exact).max())
    theirs = float(np.abs(ref[key].astype(np.float64) - exact).max())
    return ours <= theirs or np.allclose(value, exact, rtol=rtol, atol=atol), ours, theirs


os.makedirs(work, exist_ok=True)
ok = True


def tgc_run(*args):
    result = subprocess.run([tgc, *args], capture_output=True, text=True)
    if result.returncode != 0:
        print(f"tgc {args[0]} failed:\n{result.stderr[-3000:]}")
        sys.exit(1)
    return result


def report(what, good, detail):
    global ok
    ok &= good
    print(f"{what}: {detail} {'ok' if good else 'FAIL'}")


# --train: `tgc train` starts from the exported weights, so its first
# logged loss is PyTorch's loss on the same batch.
if train_only:
    # --data fixed: the batch's token ids, not the copy task's.
    log = tgc_run("train", onnx_file, f"--parameters={params_file}", "--steps=1",
                  "--log-every=1", "--data=fixed", *input_args).stdout
    first = re.search(r"step 1: loss ([-0-9.e+naif]+)", log)
    loss = float(first.group(1)) if first else float("nan")
    report("train step 1 loss", bool(np.isclose(loss, float(ref["loss"]), rtol=1e-4, atol=0)),
           f"{loss:.6f}, PyTorch {float(ref['loss']):.6f}")
    sys.exit(0 if ok else 1)

# 1. The trainable set: one name of each tensor of named_parameters() (a
# tied tensor has several, grouped by a '# tied:' line of params.txt).
with open(params_file) as f:
    lines = [line.split() for line in f if line.strip()]
groups = {}
for words in lines:
    if words[:2] == ["#", "tied:"]:
        for name in words[2:]:
            groups[name] = frozenset(words[2:])
for words in lines:
    if words[0] != "#":
        groups.setdefault(words[0], frozenset(words))
tensors = set(groups.values())
mlir = os.path.join(work, stem + ".mlir")
tgc_run("import", onnx_file, f"--parameters={params_file}", "-o", mlir)
with open(mlir) as f:
    header = next(line for line in f if "func.func @main" in line)
got = re.findall(r'tg\.name = "([^"]+)", tg\.role = "param"', header)
imported = {}  # tensor -> its imported names
for name in got:
    imported.setdefault(groups.get(name, frozenset([name])), []).append(name)
extra = sorted(n for t, names in imported.items() if t not in tensors for n in names)
missing = sorted(min(t) for t in tensors if t not in imported)
twice = sorted(n for t, names in imported.items() if len(names) > 1 for n in names)
good = not extra and not missing and not twice
detail = f"{len(got)} trainable = named_parameters()"
if not good:
    detail = (f"{len(got)} trainable, {len(tensors)} named_parameters(); extra {extra}, "
              f"missing {missing}, twice {twice}")
report("parameters", good, detail)
imported_name = {t: names[0] for t, names in imported.items()}

# 2. The forward pass.
fwd = os.path.join(work, stem + ".fwd")
tgc_run("run", onnx_file, f"--parameters={params_file}", *input_args, f"--output-dir={fwd}")
for name in (["logits"] if variant == "logits" else ["loss", "logits"]):
    value = np.load(os.path.join(fwd, name + ".npy")).astype(np.float64)
    expected = ref[name].astype(np.float64)
    error = float(np.abs(value - expected).max()) if value.shape == expected.shape else float("inf")
    good = value.shape == expected.shape and np.allclose(value, expected, rtol=1e-4, atol=1e-5)
    detail = f"max abs error {error:.3g}"
    if not good:
        good, ours, theirs = as_accurate(name, value, 1e-4, 1e-5)
        if good:
            detail += f" (against f64: tgc {ours:.3g}, PyTorch's f32 {theirs:.3g})"
    report(name, good, detail)

# 3. The gradients.
if variant != "logits":
    step = os.path.join(work, stem + ".step.mlir")
    tgc_run("compile", onnx_file, f"--parameters={params_file}", "--autodiff", "-o", step)
    grads = os.path.join(work, stem + ".step")
    tgc_run("run", step, f"--params={step[:-len('.mlir')]}.safetensors", *input_args,
            f"--output-dir={grads}")
    names = sorted(k[len("grad/"):] for k in ref.files if k.startswith("grad/"))
    # A gradient that is zero in exact arithmetic (an attention's key bias:
    # the softmax does not see it) is rounding noise on both sides, so the
    # absolute tolerance has a floor at 1e-7 of the model's largest gradient.
    floor = 1e-7 * max(float(np.abs(ref["grad/" + n]).max()) for n in names)
    max_rel, worst, bad, arbitrated = 0.0, "", [], []
    for name in names:
        expected = ref["grad/" + name].astype(np.float64)
        path = os.path.join(grads, imported_name.get(groups.get(name), name) + ".grad.npy")
        if not os.path.exists(path):
            bad.append(f"{name} (no gradient)")
            continue
        value = np.load(path).astype(np.float64)
        scale = max(float(np.abs(expected).max()), 1e-30)
        rel = float(np.abs(value - expected).max()) / scale
        if rel > max_rel:
            max_rel, worst = rel, name
        atol = max(1e-4 * scale, floor)
        if not np.allclose(value, expected, rtol=1e-3, atol=atol):
            good, ours, theirs = as_accurate("grad/" + name, value, 1e-3, atol)
            if good:
                arbitrated.append((theirs / scale, ours / scale, name))
            else:
                bad.append(f"{name} (rel error {rel:.3g})")
    detail = f"{len(names)} gradients, max rel error {max_rel:.3g} ({worst})"
    if arbitrated:
        theirs, ours, name = max(arbitrated)
        detail += (f"; {len(arbitrated)} off PyTorch's f32 but right against f64 (worst"
                   f" {name}: tgc {ours:.3g}, PyTorch's f32 {theirs:.3g} of its largest)")
    if bad:
        detail += "; wrong: " + ", ".join(bad[:6]) + (" ..." if len(bad) > 6 else "")
    report("gradients", not bad, detail)

sys.exit(0 if ok else 1)
