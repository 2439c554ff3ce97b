#!/usr/bin/env python3
"""Mutation fuzzing of tgc's MLIR front end: parser, verifiers, type inference.

Takes seed .mlir files, applies random token-level mutations (drop, duplicate,
swap, replace a number with an extreme one, replace a type, truncate) and runs
`tgc-opt --canonicalize`, `tgc report`, `tgc run --random-inputs 0` (the
interpreter), `tgc compile --train --mesh ...` (pipeline stages, tp=3's
padding, ZeRO-3's buckets, tp with sequence parallelism) and the
training passes (mixed precision under a random policy,
autodiff, micro-batching, optimizer, scaling update)
on each mutant. Any exit status other
than 0 (accepted) or 1 (diagnosed) is a failure: a crash, an abort or a hang.
Deterministic for a given --seed. Failing inputs are written to --crash-dir.
"""
import argparse
import os
import random
import re
import subprocess
import sys

TOKEN = re.compile(r"%[\w.#]+|-?\d+(?:\.\d+)?(?:e[-+]?\d+)?|[\w.]+|\S")
EXTREME_NUMBERS = ["0", "-1", "1", "-9223372036854775808", "9223372036854775807",
                   "4294967296", "2147483648", "1.0e308", "-0.0", "nan", "7"]
TYPES = ["f32", "bf16", "f16", "f64", "i1", "i32", "i64", "f8E4M3FN", "f8E5M2",
         "index", "tensor<?xf32>", "tensor<0xf32>", "tensor<f32>", "memref<4xf32>"]


def mutate(text, rng):
    tokens = [(m.start(), m.end()) for m in TOKEN.finditer(text)]
    if not tokens:
        return text
    kind = rng.randrange(6)
    start, end = tokens[rng.randrange(len(tokens))]
    token = text[start:end]
    if kind == 0:  # drop a token
        return text[:start] + text[end:]
    if kind == 1:  # duplicate a token
        return text[:end] + " " + token + text[end:]
    if kind == 2:  # replace a number with an extreme one
        numbers = [t for t in tokens if re.fullmatch(r"-?\d.*", text[t[0]:t[1]])]
        if numbers:
            start, end = numbers[rng.randrange(len(numbers))]
        return text[:start] + rng.choice(EXTREME_NUMBERS) + text[end:]
    if kind == 3:  # replace a type
        types = [m.span() for m in re.finditer(r"\b(f32|bf16|f16|i64|i1)\b", text)]
        if types:
            start, end = types[rng.randrange(len(types))]
        return text[:start] + rng.choice(TYPES) + text[end:]
    if kind == 4:  # swap two tokens
        s2, e2 = tokens[rng.randrange(len(tokens))]
        if s2 < start:
            start, end, s2, e2 = s2, e2, start, end
        if e2 <= start or s2 >= end:
            return (text[:start] + text[s2:e2] + text[end:s2] + text[start:end]
                    + text[e2:])
        return text
    return text[: rng.randrange(len(text))]  # truncate


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tools-dir", required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--iterations", type=int, default=300)
    parser.add_argument("--crash-dir", default="fuzz-failures")
    parser.add_argument("inputs", nargs="+")
    args = parser.parse_args()

    rng = random.Random(args.seed)
    # Inputs split at `// -----` like tgc-opt --split-input-file does.
    seeds = [case for path in args.inputs
             for case in open(path).read().split("// -----") if "func.func" in case]
    commands = [[os.path.join(args.tools_dir, "tgc-opt"), "--canonicalize", "-"],
                [os.path.join(args.tools_dir, "tgc"), "report", "-"],
                [os.path.join(args.tools_dir, "tgc"), "run", "-", "--random-inputs", "0"],
                None,  # the whole pipeline, under a mesh drawn per mutant
                None]  # the training passes, under a policy drawn per mutant
    policies = ["fp32", "bf16", "fp16", "fp8"]
    # Pipeline stages (docs/pipeline.md), tp=3's padded heads, widths and
    # classes, ZeRO-3's buckets, tp with sequence parallelism and ZeRO, and
    # expert parallelism.
    meshes = [["--mesh", "pp=2", "--micro-batches", "2"],
              ["--mesh", "tp=3"],
              ["--mesh", "dp=2", "--zero", "3", "--gather-buckets", "always",
               "--scatter-buckets", "always"],
              ["--mesh", "dp=2,tp=2", "--zero", "1", "--sequence-parallel"],
              ["--mesh", "dp=2,tp=2", "--expert-parallel", "--zero", "1"]]
    failures = 0
    for i in range(args.iterations):
        text = rng.choice(seeds)
        for _ in range(rng.randint(1, 3)):
            text = mutate(text, rng)
        commands[-2] = [os.path.join(args.tools_dir, "tgc"), "compile", "-",
                        "--train", *rng.choice(meshes), "-o", "-"]
        commands[-1] = [os.path.join(args.tools_dir, "tgc-opt"),
                        f"--tg-mixed-precision=policy={rng.choice(policies)}",
                        "--tg-autodiff", "--tg-microbatch=micro-batches=2",
                        "--tg-optimizer", "--tg-scaling-update",
                        "--canonicalize", "-"]
        for command in commands:
            try:
                result = subprocess.run(command, input=text.encode(),
                                        capture_output=True, timeout=20)
                status = result.returncode
                detail = result.stderr.decode(errors="replace")[-2000:]
            except subprocess.TimeoutExpired:
                status, detail = "timeout", ""
            if status not in (0, 1):
                failures += 1
                os.makedirs(args.crash_dir, exist_ok=True)
                path = os.path.join(args.crash_dir, f"failure-{i}.mlir")
                with open(path, "w") as out:
                    out.write(text)
                print(f"FAIL: {' '.join(command)} exited with {status} on "
                      f"{path}\n{detail}", file=sys.stderr)
    print(f"fuzz: {args.iterations} mutants x {len(commands)} tools, "
          f"{failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
