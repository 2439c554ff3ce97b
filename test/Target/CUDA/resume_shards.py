#!/usr/bin/env python3
"""Sharded checkpoints: `train --save-shards DIR` on a partitioned step, then
`--resume DIR` on the same mesh (each rank reading its own file), on one
device (reading them all) and on another mesh, continue the run exactly as an uninterrupted
one; a damaged checkpoint is a clear error, on one device and on the mesh.

Uses the projects the codegen tests built: --sharded (a partitioned tiny
GPT-2 step, run with --nproc: dp=2,tp=2 ZeRO-1, dp=3 ZeRO-3 whose blocks
end in padding, or pp=2 whose rank files hold their stages' values),
--whole (the same model's unsharded step) and optionally --other (the same
step on another mesh, whose rank 0 reads --other-files of the rank files:
those its blocks overlap).
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys

LOSS = re.compile(r"^step (\d+): loss (\S+)", re.M)


def train(program, args, expect_ok=True):
    result = subprocess.run([program] + args, capture_output=True, text=True,
                            env=dict(os.environ, TGC_COMM_TIMEOUT="60"))
    if expect_ok and result.returncode != 0:
        sys.exit("$ %s %s\n%s%s" % (program, " ".join(args), result.stdout,
                                    result.stderr))
    return result


def losses(text):
    return {int(step): float(loss) for step, loss in LOSS.findall(text)}


def same(name, got, want):
    for step in want:
        if step not in got or abs(got[step] - want[step]) > 1e-5 * abs(
                want[step]):
            sys.exit("%s: step %d gives %s, the uninterrupted run %s" %
                     (name, step, got.get(step), want[step]))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sharded", required=True, help="train of the mesh")
    parser.add_argument("--nproc", type=int, required=True)
    parser.add_argument("--whole", required=True, help="train of one device")
    parser.add_argument("--other", help="train of another mesh of the same "
                        "step, resumed from the checkpoint too")
    parser.add_argument("--other-nproc", type=int, default=2)
    parser.add_argument("--other-files", type=int, default=0,
                        help="the rank files rank 0 of --other reads")
    parser.add_argument("--work-dir", required=True)
    args = parser.parse_args()
    shutil.rmtree(args.work_dir, ignore_errors=True)
    os.makedirs(args.work_dir)
    checkpoint = os.path.join(args.work_dir, "ckpt")
    launch = ["--nproc", str(args.nproc), "--log-every", "1"]

    reference = losses(train(args.whole, ["--steps", "5", "--log-every",
                                          "1"]).stdout)
    later = {step: reference[step] for step in (4, 5)}
    train(args.sharded, launch + ["--steps", "3", "--save-shards", checkpoint])
    files = sorted(os.listdir(checkpoint))
    expected = ["manifest.json"] + ["rank-%d.safetensors" % r
                                    for r in range(args.nproc)]
    if files != sorted(expected):
        sys.exit("the checkpoint holds %s, not %s" % (files, expected))
    # On the saved mesh each rank reads its own file; on one device, all.
    resumed = train(args.sharded, launch + ["--steps", "2", "--resume",
                                            checkpoint]).stdout
    same("resumed on the mesh", losses(resumed), later)
    if "at step 3: each rank read its own file" not in resumed:
        sys.exit("resumed on the mesh without reading only its own file:\n" +
                 resumed)
    resumed = train(args.whole, ["--steps", "2", "--log-every", "1",
                                 "--resume", checkpoint]).stdout
    same("resumed on one device", losses(resumed), later)
    if "read %d of %d rank files" % (args.nproc, args.nproc) not in resumed:
        sys.exit("resumed on one device without every rank file:\n" +
                 resumed)
    if args.other:
        # Each rank reads the rank files its blocks overlap, no more.
        resumed = train(args.other, ["--nproc", str(args.other_nproc),
                                     "--steps", "2", "--log-every", "1",
                                     "--resume", checkpoint]).stdout
        same("resumed on another mesh", losses(resumed), later)
        read = "rank 0 read %d of %d rank files" % (args.other_files,
                                                     args.nproc)
        if read not in resumed:
            sys.exit("resumed on another mesh, expected '%s':\n%s" %
                     (read, resumed))

    # --save-every: a checkpoint after step 2 too, then the run's own after
    # step 3, which continues as the uninterrupted run.
    periodic = os.path.join(args.work_dir, "periodic")
    printed = train(args.sharded, launch + ["--steps", "3", "--save-every",
                                            "2", "--save-shards",
                                            periodic]).stdout
    if "step 2: saved " + periodic not in printed:
        sys.exit("--save-every 2 did not save after step 2:\n" + printed)
    resumed = train(args.sharded, launch + ["--steps", "2", "--resume",
                                            periodic]).stdout
    same("resumed from the last of periodic checkpoints", losses(resumed),
         later)
    # A rank file of another save than the manifest's (a save interrupted
    # after some ranks rewrote theirs) is refused, not mixed in.
    early = os.path.join(args.work_dir, "early")
    train(args.sharded, launch + ["--steps", "1", "--save-shards", early])
    mixed = os.path.join(args.work_dir, "mixed")
    shutil.copytree(periodic, mixed)
    shutil.copy(os.path.join(early, "rank-1.safetensors"), mixed)
    result = train(args.whole, ["--steps", "1", "--resume", mixed], False)
    if result.returncode != 1 or "rank-1.safetensors' holds the values " \
            "after 1 steps, the manifest after 3" not in result.stderr:
        sys.exit("a rank file of another save: %d, %r" %
                 (result.returncode, result.stderr))

    # A --save file of one device resumed on the mesh: each rank reads its
    # blocks of the whole values.
    whole = os.path.join(args.work_dir, "whole.safetensors")
    train(args.whole, ["--steps", "3", "--save", whole])
    resumed = train(args.sharded, launch + ["--steps", "2", "--resume",
                                            whole]).stdout
    same("a whole checkpoint resumed on the mesh", losses(resumed), later)

    # A truncated rank file, and a manifest that lost a tensor.
    damaged = os.path.join(args.work_dir, "damaged")
    shutil.copytree(checkpoint, damaged)
    with open(os.path.join(damaged, "rank-1.safetensors"), "r+b") as f:
        f.truncate(100)
    result = train(args.whole, ["--steps", "1", "--resume", damaged], False)
    if result.returncode != 1 or "rank-1.safetensors" not in result.stderr:
        sys.exit("a truncated rank file: %d, %r" % (result.returncode,
                                                    result.stderr))
    # On the mesh, rank 1 names its file; the others stop, not hang.
    result = train(args.sharded, launch + ["--steps", "1", "--resume",
                                           damaged], False)
    if result.returncode == 0 or "rank 1: " not in result.stderr or \
            "rank-1.safetensors" not in result.stderr:
        sys.exit("a truncated rank file on the mesh: %d, %r" %
                 (result.returncode, result.stderr))
    shutil.rmtree(damaged)
    shutil.copytree(checkpoint, damaged)
    manifest_path = os.path.join(damaged, "manifest.json")
    manifest = json.load(open(manifest_path))
    manifest["tensors"].pop("wte.weight")
    json.dump(manifest, open(manifest_path, "w"))
    result = train(args.whole, ["--steps", "1", "--resume", damaged], False)
    if result.returncode != 1 or "has no tensor 'wte.weight'" not in \
            result.stderr:
        sys.exit("a manifest without wte.weight: %d, %r" %
                 (result.returncode, result.stderr))
    # A mesh of 2^40 devices is refused before anything is made per device.
    manifest = json.load(open(os.path.join(checkpoint, "manifest.json")))
    manifest["mesh"] = [{"name": "a", "size": 2**20},
                        {"name": "b", "size": 2**20}]
    manifest["ranks"] = 2**40
    json.dump(manifest, open(manifest_path, "w"))
    result = train(args.whole, ["--steps", "1", "--resume", damaged], False)
    if result.returncode != 1 or "more than 2^20 devices" not in \
            result.stderr:
        sys.exit("a mesh of 2^40 devices: %d, %r" % (result.returncode,
                                                      result.stderr))
    # A pipelined step's manifest names the files that hold each tensor.
    if "pipeline_axis" in manifest:
        manifest = json.load(open(os.path.join(checkpoint, "manifest.json")))
        manifest["tensors"]["wte.weight"]["pipeline_holders"] = [99]
        json.dump(manifest, open(manifest_path, "w"))
        result = train(args.whole, ["--steps", "1", "--resume", damaged],
                       False)
        if result.returncode != 1 or "name a coordinate off the pipeline " \
                "axis" not in result.stderr:
            sys.exit("pipeline_holders off the axis: %d, %r" %
                     (result.returncode, result.stderr))
    print("resumed on the mesh and on one device: steps 4-5 as uninterrupted;"
          " damaged checkpoints refused")


if __name__ == "__main__":
    main()
