"""Compares every logged loss of `tgc train` runs with a reference run.

Usage: same_step_losses.py REFERENCE RTOL FILE...

Each file holds the output of `tgc train --log-every 1`; every
`step N: loss X` line must exist in the reference too, with a loss within
RTOL (relative) of it. Prints one line per run with its largest relative
difference and exits non-zero if any run is off or logs other steps.
"""
import math
import re
import sys


def losses(path):
    found = {}
    with open(path) as f:
        for line in f:
            match = re.match(r"^step (\d+): loss (\S+)", line.strip())
            if match:
                found[int(match.group(1))] = float(match.group(2))
    if not found:
        sys.exit(f"{path}: no 'step N: loss X' line")
    return found


def main():
    reference = losses(sys.argv[1])
    rtol = float(sys.argv[2])
    ok = True
    for path in sys.argv[3:]:
        run = losses(path)
        if sorted(run) != sorted(reference):
            print(f"{path}: logs steps {sorted(run)}, the reference {sorted(reference)}")
            ok = False
            continue
        worst = 0.0
        for step, loss in reference.items():
            if not math.isfinite(run[step]):
                worst = math.inf
                break
            worst = max(worst, abs(run[step] - loss) / max(abs(loss), 1e-30))
        status = "same" if worst <= rtol else "DIFFERENT"
        print(f"{status}: {len(run)} steps, largest relative difference {worst:.2e}")
        ok = ok and worst <= rtol
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
