"""Compares the final losses of `tgc train` runs with a reference run.

Usage: compare_losses.py REFERENCE LABEL=FILE=TOLERANCE...

Each FILE holds the output of `tgc train`; its final loss (the number after
'->' on the 'trained ...' line) must be finite and within TOLERANCE (a
relative difference) of REFERENCE's. Prints one line per run and exits
non-zero if any run is off.
"""
import math
import re
import sys


def final_loss(path):
    with open(path) as f:
        for line in f:
            match = re.search(r"^trained .* -> (\S+)$", line.strip())
            if match:
                return float(match.group(1))
    sys.exit(f"{path}: no 'trained ...' line")


def main():
    reference = final_loss(sys.argv[1])
    print(f"fp32: final loss {reference:.6f}")
    ok = True
    for spec in sys.argv[2:]:
        label, path, tolerance = spec.split("=")
        loss = final_loss(path)
        relative = (loss - reference) / reference
        good = math.isfinite(loss) and abs(relative) <= float(tolerance)
        ok &= good
        print(f"{label}: final loss {loss:.6f} ({100 * relative:+.2f}% of "
              f"fp32, limit {100 * float(tolerance):.0f}%) "
              f"{'ok' if good else 'FAIL'}")
    sys.exit(0 if ok else 1)


main()
