#!/usr/bin/python3
"""Checks that gradient accumulation threads a training-mode BatchNorm's
running statistics through the micro-batches (numpy only):

  check_micro_batches.py MICRO LOG FIRST_LOG SECOND_DIR NAME...

MICRO (.safetensors) and LOG are `tgc train --micro-batches 2 --steps 1
--lr 0`'s saved values and printed losses on two micro-batches; FIRST_LOG
is `tgc train --steps 1 --lr 0` on the first alone, and SECOND_DIR `tgc
run` on the second from the values that step saved. Each NAME in MICRO
must be SECOND_DIR/NAME.npy (atol 1e-6: the second micro-batch updated
what the first wrote), and the logged loss the mean of the two (rtol
1e-5, the log's digits)."""
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "Target", "CUDA"))
from compare_host_target import read_safetensors  # noqa: E402

micro_file, log, first_log, second = sys.argv[1:5]
names = sys.argv[5:]
micro = read_safetensors(micro_file)
ok = True
for name in names:
    error = float(np.max(np.abs(micro[name] - np.load(f"{second}/{name}.npy"))))
    good = error <= 1e-6
    ok &= good
    print(f"{name}: max abs error {error:.3g} {'ok' if good else 'FAIL'}")


def step_one(path):
    with open(path) as f:
        found = re.search(r"^step 1: loss (\S+)", f.read(), re.M)
    return float(found.group(1)) if found else float("nan")


mean = (step_one(first_log) + float(np.load(f"{second}/loss.npy"))) / 2
loss = step_one(log)
good = bool(np.isclose(loss, mean, rtol=1e-5, atol=0))
ok &= good
print(f"loss: {loss:.6f}, the micro-batches' mean {mean:.6f} {'ok' if good else 'FAIL'}")
sys.exit(0 if ok else 1)
