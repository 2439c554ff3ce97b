#!/usr/bin/python3
"""Compares tgc's results with PyTorch's: compare_npy.py OUT_DIR REF_STEM NAME...
checks OUT_DIR/NAME.npy against REF_STEM.NAME.npy (numpy's allclose rule,
rtol 1e-4, atol 1e-5) and prints the largest absolute error per result."""
import sys

import numpy as np

out_dir, ref_stem, names = sys.argv[1], sys.argv[2], sys.argv[3:]
ok = True
for name in names:
    got = np.load(f"{out_dir}/{name}.npy")
    want = np.load(f"{ref_stem}.{name}.npy")
    error = float(np.max(np.abs(got.astype(np.float64) - want))) if want.size else 0.0
    close = got.shape == want.shape and np.allclose(got, want, rtol=1e-4, atol=1e-5)
    ok &= close
    print(f"{name}: max abs error {error:.3g} {'ok' if close else 'FAIL'}")
sys.exit(0 if ok else 1)
