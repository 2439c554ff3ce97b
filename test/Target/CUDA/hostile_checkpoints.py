#!/usr/bin/env python3
"""Mutation fuzzing of what a generated `train` reads back: a sharded
checkpoint (its manifest.json mutated as JSON, or a rank file as bytes or as
a safetensors header), a --save checkpoint (--resume FILE) and --params.

Uses projects the codegen tests built: --whole (a step of one device) and
--sharded (a partitioned step of the same model, run with --nproc), which
writes the sharded checkpoint the mutants start from. Each mutant is read by
the one-device trainer, and every --sharded-every-th also by the ranks.
Exit status 0 (accepted) or 1 (diagnosed, with an `error:` line) is
expected; a crash, an abort or a hang (--timeout) is a failure.
Deterministic for a given --seed; failing inputs are copied to --crash-dir.
"""
import argparse
import copy
import json
import os
import random
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "fuzz"))
from hostile_files import EXTREME, mutate_bytes, mutate_safetensors  # noqa

ODD_VALUES = EXTREME + [-1, -2**63, 0.5, "", "pp", "F32", None, True, [],
                        {}, [0], [2**40], ["dp"], {"name": "x"}]


def mutate_json(value, rng):
    """`value` with one node replaced, removed or added somewhere in it."""
    value = copy.deepcopy(value)
    # The containers on a random path from the root.
    path = [value]
    while isinstance(path[-1], (dict, list)) and path[-1] and \
            rng.randrange(4):
        node = path[-1]
        key = rng.choice(list(node)) if isinstance(node, dict) else \
            rng.randrange(len(node))
        if not isinstance(node[key], (dict, list)):
            break
        path.append(node[key])
    node = path[-1]
    if isinstance(node, (dict, list)) and node:
        key = rng.choice(list(node) if isinstance(node, dict) else
                         range(len(node)))
        how = rng.randrange(3)
        if how == 0:
            del node[key]
        elif how == 1:
            node[key] = rng.choice(ODD_VALUES)
        elif isinstance(node, dict):
            node[key + "_"] = node[key]
        else:
            node.append(copy.deepcopy(node[key]))
    return value


def run(command, timeout, env):
    try:
        result = subprocess.run(command, capture_output=True, text=True,
                                timeout=timeout, env=env)
        return result.returncode, result.stderr[-2000:]
    except subprocess.TimeoutExpired:
        return "timeout", ""


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--whole", required=True)
    parser.add_argument("--sharded", required=True)
    parser.add_argument("--nproc", type=int, required=True)
    parser.add_argument("--work-dir", required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--iterations", type=int, default=120)
    parser.add_argument("--sharded-every", type=int, default=10)
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--crash-dir", default="fuzz-failures")
    args = parser.parse_args()

    rng = random.Random(args.seed)
    work = args.work_dir
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    env = dict(os.environ, TGC_COMM_TIMEOUT="10")
    seed_dir = os.path.join(work, "seed")
    whole_file = os.path.join(work, "whole.safetensors")
    for command in ([args.sharded, "--nproc", str(args.nproc), "--steps", "1",
                     "--save-shards", seed_dir],
                    [args.whole, "--steps", "1", "--save", whole_file]):
        status, detail = run(command, args.timeout, env)
        if status != 0:
            sys.exit("$ %s\n%s" % (" ".join(command), detail))
    manifest = json.load(open(os.path.join(seed_dir, "manifest.json")))
    ranks = sorted(f for f in os.listdir(seed_dir) if f.startswith("rank-"))
    whole = open(whole_file, "rb").read()

    failures = 0
    for i in range(args.iterations):
        case = os.path.join(work, "case%d" % (i % 4))
        shutil.rmtree(case, ignore_errors=True)
        kind = ["manifest", "rank", "resume", "params"][i % 4]
        if kind in ("manifest", "rank"):
            shutil.copytree(seed_dir, case)
            if kind == "manifest":
                mutated = mutate_json(manifest, rng)
                open(os.path.join(case, "manifest.json"), "w").write(
                    json.dumps(mutated))
            else:
                name = os.path.join(case, rng.choice(ranks))
                data = open(name, "rb").read()
                open(name, "wb").write(mutate_safetensors(data, rng))
            flags = ["--resume", case]
        else:
            os.makedirs(case)
            path = os.path.join(case, "c.safetensors")
            open(path, "wb").write(mutate_safetensors(whole, rng))
            flags = ["--resume" if kind == "resume" else "--params", path]
        commands = [[args.whole, "--steps", "1"] + flags]
        if i % args.sharded_every == 0:
            commands.append([args.sharded, "--nproc", str(args.nproc),
                             "--steps", "1"] + flags)
        for command in commands:
            status, detail = run(command, args.timeout, env)
            if status == 0 or (status == 1 and "error:" in detail):
                continue
            failures += 1
            os.makedirs(args.crash_dir, exist_ok=True)
            kept = os.path.join(args.crash_dir, "checkpoint-%d" % i)
            shutil.rmtree(kept, ignore_errors=True)
            shutil.copytree(case, kept)
            print("FAIL: %s exited with %s; kept in %s\n%s" %
                  (" ".join(command), status, kept, detail), file=sys.stderr)
    print("hostile checkpoints: %d mutants, %d failures" %
          (args.iterations, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
