#!/usr/bin/env python3
"""Compares the parameters two training runs saved.

    compare_params.py REFERENCE.safetensors RUN.safetensors TOLERANCE

For every float tensor of REFERENCE (f32/f64; the optimizer state and step
count too), the largest |run - reference| relative to the tensor's largest
|reference| value. Prints the worst tensor and exits 1 when it exceeds
TOLERANCE or a tensor is missing or misshapen. Needs numpy.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "test",
                                "Target", "CUDA"))
from compare_host_target import read_safetensors  # noqa: E402


def main():
    reference = read_safetensors(sys.argv[1])
    run = read_safetensors(sys.argv[2])
    tolerance = float(sys.argv[3])
    worst, worst_name = 0.0, None
    for name, ref in reference.items():
        if name not in run or run[name].shape != ref.shape:
            print(f"DIFFERENT: {name} missing or misshapen in {sys.argv[2]}")
            return 1
        scale = float(abs(ref).max()) or 1.0
        error = float(abs(run[name].astype("float64") - ref).max()) / scale
        if error > worst or worst_name is None:
            worst, worst_name = error, name
    verdict = "same" if worst <= tolerance else "DIFFERENT"
    print(f"{verdict}: {len(reference)} tensors, largest relative difference "
          f"{worst:.3g} ({worst_name}), tolerance {tolerance:g}")
    return 0 if worst <= tolerance else 1


if __name__ == "__main__":
    sys.exit(main())
