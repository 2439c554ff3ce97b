#!/usr/bin/python3
"""Moves arrays of a reference file (ref.npz, ref64.npz) in place, to test
check_export.py's judgement (numpy only):

    perturb_reference.py FILE FRACTION KEY...

Each KEY's array (loss, logits, grad/NAME) gains FRACTION of its largest
magnitude (1 where it is all zeros) at its first element.
"""
import sys

import numpy as np

path, fraction, keys = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
with np.load(path) as stored:
    arrays = {key: stored[key] for key in stored.files}
for key in keys:
    if key not in arrays:
        sys.exit(f"{path} has no array {key}")
    array = arrays[key].copy()
    flat = array.reshape(-1)
    flat[0] += fraction * (float(np.abs(flat).max()) or 1.0)
    arrays[key] = array
np.savez_compressed(path, **arrays)
