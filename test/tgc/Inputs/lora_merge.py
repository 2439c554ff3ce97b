#!/usr/bin/python3
"""The oracle of a LoRA adapter: the adapted graph with adapters A, B must
compute what the base graph computes with the merged weight.

  lora_merge.py make PARAMS.safetensors WEIGHT RANK SCALING TRANSPOSED OUT_DIR
    writes OUT_DIR/A.npy [in, RANK] and OUT_DIR/B.npy [RANK, out] (random,
    B non-zero) and OUT_DIR/merged.safetensors: PARAMS with WEIGHT replaced
    by W + SCALING * A @ B (its transpose when TRANSPOSED is 1: W is
    [out, in], as nn.Linear stores it).
  lora_merge.py compare DIR_A DIR_B NAME...
    checks DIR_A/NAME.npy against DIR_B/NAME.npy (rtol 1e-5, atol 1e-6)."""
import json
import struct
import sys

import numpy as np

import make_examples  # its safetensors writer


def read_safetensors(path):
    data = open(path, "rb").read()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        assert entry["dtype"] == "F32", entry
        begin, end = entry["data_offsets"]
        raw = data[8 + length + begin:8 + length + end]
        tensors[name] = np.frombuffer(raw, dtype="<f4").reshape(entry["shape"])
    return tensors


def make(params_path, weight, rank, scaling, transposed, out_dir):
    params = read_safetensors(params_path)
    w = params[weight].astype(np.float64)
    out_features, in_features = w.shape if transposed else w.shape[::-1]
    rng = np.random.default_rng(0)
    a = rng.normal(0, 0.1, (in_features, rank)).astype(np.float32)
    b = rng.normal(0, 0.1, (rank, out_features)).astype(np.float32)
    delta = scaling * (a.astype(np.float64) @ b.astype(np.float64))
    merged = dict(params)
    merged[weight] = (w + (delta.T if transposed else delta)).astype(np.float32)
    np.save(f"{out_dir}/A.npy", a)
    np.save(f"{out_dir}/B.npy", b)
    make_examples.save(f"{out_dir}/merged.safetensors",
                       [(name, value, "F32") for name, value in merged.items()])


def compare(dir_a, dir_b, names):
    ok = True
    for name in names:
        got, want = np.load(f"{dir_a}/{name}.npy"), np.load(f"{dir_b}/{name}.npy")
        close = got.shape == want.shape and np.allclose(got, want, rtol=1e-5, atol=1e-6)
        error = float(np.max(np.abs(got.astype(np.float64) - want)))
        print(f"{name}: max abs error {error:.3g} {'ok' if close else 'FAIL'}")
        ok &= close
    return ok


if sys.argv[1] == "make":
    make(sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5]),
         sys.argv[6] == "1", sys.argv[7])
else:
    sys.exit(0 if compare(sys.argv[2], sys.argv[3], sys.argv[4:]) else 1)
