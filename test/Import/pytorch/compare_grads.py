#!/usr/bin/python3
"""Compares tgc's parameter gradients with PyTorch autograd's:
compare_grads.py OUT_DIR REF_DIR PARAMS_JSON

For every PyTorch parameter P in PARAMS_JSON (see parameter_map in
gen_models.py), sums OUT_DIR/NAME.grad.npy over the imported parameters NAME
that make up P (transposing back those the exporter pre-transposed) and
checks the sum against REF_DIR/P.grad.npy (an imported gradient of P's size
but another shape, a folded layout, reshaped; numpy's allclose rule, rtol 1e-4,
atol 1e-5). Prints one line per parameter made of several imported ones, and
the largest absolute error and the largest relative error over all
parameters; a parameter's relative error is its largest absolute error over
the largest magnitude of its reference gradient."""
import json
import sys

import numpy as np

out_dir, ref_dir, params_json = sys.argv[1:4]
with open(params_json) as f:
    mapping = json.load(f)
mapping.pop("")  # imported parameters that are PyTorch buffers: no reference
ok, max_abs, max_rel, worst = True, 0.0, 0.0, ""
for param, parts in mapping.items():
    want = np.load(f"{ref_dir}/{param}.grad.npy").astype(np.float64)
    got = np.zeros_like(want)
    for name, transposed in parts:
        grad = np.load(f"{out_dir}/{name}.grad.npy").astype(np.float64)
        grad = grad.T if transposed else grad
        # A parameter the exporter folded into another layout of its
        # elements (GroupNorm's [C] weight as [C, 1, 1]).
        if grad.shape != want.shape and grad.size == want.size:
            grad = grad.reshape(want.shape)
        got += grad
    if len(parts) > 1:
        print(f"{param}: sum of " + " + ".join(
            f"{n}.grad" + (".T" if t else "") for n, t in parts))
    error = np.abs(got - want)
    close = np.allclose(got, want, rtol=1e-4, atol=1e-5)
    if not close:
        print(f"{param}: FAIL, max abs error {error.max():.3g}")
    ok &= close
    if error.max() > max_abs:
        max_abs, worst = float(error.max()), param
    max_rel = max(max_rel, float(error.max() / max(np.abs(want).max(), 1e-30)))
print(f"{len(mapping)} gradients: max abs error {max_abs:.3g} ({worst}), "
      f"max rel error {max_rel:.3g} {'ok' if ok else 'FAIL'}")
sys.exit(0 if ok else 1)
