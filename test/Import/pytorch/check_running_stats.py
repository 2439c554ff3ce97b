#!/usr/bin/python3
"""Checks that a training step updates a training-mode BatchNorm's running
statistics and that training feeds them back:

  check_running_stats.py INITIAL ONE TWO REF_STEM MOMENTUM [--run DIR] NAME...

INITIAL, ONE and TWO are .safetensors files: the imported values, and the
values `tgc train --lr 0` saved after one and after two steps on the same
batch (the parameters, and so the batch's statistics, do not change). ONE
must be PyTorch's (REF_STEM.NAME.npy, rtol 1e-4, atol 1e-6); a second step
averages the same statistics in again, from ONE: TWO - ONE = MOMENTUM *
(ONE - INITIAL) (atol 1e-6). With --run, DIR/NAME.npy (`tgc run --params
ONE` on that batch) must be TWO (atol 1e-6) too. Prints the largest
absolute error of each."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "Target", "CUDA"))
from compare_host_target import read_safetensors  # noqa: E402

initial, one, two = (read_safetensors(path) for path in sys.argv[1:4])
ref_stem, momentum, names = sys.argv[4], float(sys.argv[5]), sys.argv[6:]
run_dir = None
if names[:1] == ["--run"]:
    run_dir, names = names[1], names[2:]
ok = True
for name in names:
    want = np.load(f"{ref_stem}.{name}.npy")
    error = float(np.max(np.abs(one[name] - want)))
    close = np.allclose(one[name], want, rtol=1e-4, atol=1e-6)
    fed_back = two[name] - one[name]
    again = momentum * (one[name] - initial[name].astype(np.float64))
    moved = float(np.max(np.abs(one[name] - initial[name])))
    second = float(np.max(np.abs(fed_back - again)))
    good = close and second <= 1e-6 and moved > 1e-3
    line = f"{name}: step 1 max abs error {error:.3g}, step 2 {second:.3g}"
    if run_dir:
        ran = float(np.max(np.abs(np.load(f"{run_dir}/{name}.npy") - two[name])))
        good &= ran <= 1e-6
        line += f", run from step 1 {ran:.3g}"
    ok &= good
    print(f"{line} {'ok' if good else 'FAIL'}")
sys.exit(0 if ok else 1)
