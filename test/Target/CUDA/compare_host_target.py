#!/usr/bin/env python3
"""The generated project against the interpreter, in CI.

Writes a model with tgc-zoo, emits its training step with
`tgc compile --emit cuda`, builds the project for the host target
(-DTGC_TARGET=host: the generated kernels on the CPU, one thread per block),
runs `train --seed 0`, and compares its per-step losses with those of
`tgc train` on the same model and options (the interpreter). Exits 1 when a
loss differs by more than --rtol relative.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys

LOSS = re.compile(r"^step (\d+): loss (\S+)", re.M)


def run(command, **kwargs):
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        sys.stderr.write("$ " + " ".join(command) + "\n" + result.stdout +
                         result.stderr)
        sys.exit(1)
    return result.stdout


def losses(text):
    return {int(step): float(loss) for step, loss in LOSS.findall(text)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True, help="tgc's bin directory")
    parser.add_argument("--runtime-dir", required=True,
                        help="TGCRuntime_DIR (the runtime's build directory)")
    parser.add_argument("--work-dir", required=True)
    parser.add_argument("--zoo", required=True,
                        help="tgc-zoo arguments, space-separated")
    parser.add_argument("--options", default="",
                        help="pipeline options for both tgc compile and train")
    parser.add_argument("--compile-options", default="",
                        help="options of tgc compile alone (planning: "
                        "--memory-budget, --no-fuse), which tgc train does "
                        "not take and which must not change the numbers")
    parser.add_argument("--data", default="synthetic-copy")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--rtol", type=float, default=1e-5)
    args = parser.parse_args()

    work = args.work_dir
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    model = os.path.join(work, "model.mlir")
    project = os.path.join(work, "project")
    options = args.options.split()
    run([os.path.join(args.bin, "tgc-zoo")] + args.zoo.split() + ["-o", model])
    run([os.path.join(args.bin, "tgc"), "compile", model, "--train"] + options +
        args.compile_options.split() + ["--emit", "cuda", "-o", project])
    build = os.path.join(project, "build")
    run(["cmake", "-S", project, "-B", build, "-G", "Ninja",
         "-DTGC_TARGET=host", "-DTGCRuntime_DIR=" + args.runtime_dir])
    run(["cmake", "--build", build])
    common = ["--steps", str(args.steps), "--seed", "0", "--data", args.data,
              "--log-every", "1"]
    generated = losses(run([os.path.join(build, "train")] + common))
    reference = losses(run([os.path.join(args.bin, "tgc"), "train", model] +
                           options + common))
    if len(reference) != args.steps or generated.keys() != reference.keys():
        sys.exit("expected %d steps from both, got %d (train) and %d (tgc "
                 "train)" % (args.steps, len(generated), len(reference)))
    worst = 0.0
    for step in sorted(reference):
        a, b = generated[step], reference[step]
        error = abs(a - b) / max(abs(b), 1e-30)
        worst = max(worst, error)
        if error > args.rtol:
            sys.exit("step %d: the generated step's loss %.9g differs from "
                     "the interpreter's %.9g by %.3g relative (> %g)" %
                     (step, a, b, error, args.rtol))
    print("%d steps: losses equal within %.3g relative (worst %.3g); %s -> %s"
          % (args.steps, args.rtol, worst, reference[1], reference[args.steps]))


if __name__ == "__main__":
    main()
