#!/usr/bin/env python3
"""The slowest ops of a generated step, measured against the cost model.

    kernel_profile.py STEP_DIR/step.json PROFILE.json [--top N]

PROFILE.json is what `train --profile PROFILE.json` wrote (the measured
seconds per step of every kernel and library call); step.json holds the cost
model's time of every op that launches something, with the kernels and calls
it launches (tgc compile --emit cuda; plan for the GPU you run on with
--device). Prints a markdown table of the N ops (default 10) that took the
most measured time: measured, estimated, and measured / estimated.
"""

import argparse
import json
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step_json")
    parser.add_argument("profile_json")
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args()
    with open(args.step_json) as f:
        step = json.load(f)
    with open(args.profile_json) as f:
        profile = json.load(f)
    estimates = step.get("estimates", {})
    measured = {k["name"]: k["seconds_per_step"] for k in profile["kernels"]}
    rows = []
    seen = set()
    for op in estimates.get("ops", []):
        # A gemm region whose cuBLASLt call declined ran its GEMM and
        # epilogue kernels instead (fallback_kernels): they count for it.
        launched = op["kernels"] + op.get("fallback_kernels", [])
        seconds = sum(measured.get(k, 0.0) for k in launched)
        seen.update(launched)
        rows.append((seconds, op["seconds"], op["name"], len(op["kernels"])))
    # Kernels with no estimate (none expected): listed, never dropped.
    for name, seconds in measured.items():
        if name not in seen:
            rows.append((seconds, None, name, 1))
    rows.sort(key=lambda r: -r[0])
    total_measured = profile["kernel_seconds_per_step"]
    total_estimated = sum(op["seconds"] for op in estimates.get("ops", []))
    print(f"measured on {profile['device']} ({profile['steps']} steps); "
          f"estimated for {estimates.get('device', '?')}")
    print()
    print("| op | kernels | measured ms | estimated ms | measured / estimated | share of measured |")
    print("|---|---|---|---|---|---|")
    for seconds, estimate, name, count in rows[:args.top]:
        ratio = f"{seconds / estimate:.2f}" if estimate else "-"
        est = f"{estimate * 1e3:.3f}" if estimate is not None else "-"
        share = 100 * seconds / total_measured if total_measured else 0
        print(f"| {name} | {count} | {seconds * 1e3:.3f} | {est} | {ratio} | {share:.1f}% |")
    ratio = total_measured / total_estimated if total_estimated else float("nan")
    print(f"| all {len(rows)} | | {total_measured * 1e3:.3f} | "
          f"{total_estimated * 1e3:.3f} | {ratio:.2f} | 100% |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
