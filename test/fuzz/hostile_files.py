#!/usr/bin/env python3
"""Mutation fuzzing of the files tgc reads besides models: safetensors
(--params, and example files: tgc train --data and --val-data), .npy and
ONNX TensorProto .pb (--input), device files (--device-file), and ONNX external data (a
model whose external file is mutated, truncated or replaced by a link).

Each mutant is written to a scratch directory and read by the tgc command
that takes it. Exit status 0 (accepted) or 1 (diagnosed) is expected; a
crash, an abort or a hang (--timeout) is a failure, and so is an error
message that quotes a byte of a file outside the model's folder (the marker
SECRET planted there). Deterministic for a given --seed; failing inputs are
copied to --crash-dir.
"""
import argparse
import json
import os
import random
import shutil
import stat
import struct
import subprocess
import sys

EXTREME = [0, 1, 2**31 - 1, 2**32, 2**53, 2**63 - 1, 2**64 - 1, 2**62, 7]


def mutate_bytes(data, rng):
    data = bytearray(data)
    kind = rng.randrange(5)
    if not data or kind == 0:  # truncate
        return bytes(data[: rng.randrange(len(data) + 1)])
    if kind == 1:  # flip bytes
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        return bytes(data)
    if kind == 2:  # overwrite 8 bytes with an extreme little-endian integer
        at = rng.randrange(max(1, len(data) - 8))
        data[at:at + 8] = struct.pack("<Q", rng.choice(EXTREME))
        return bytes(data)
    if kind == 3:  # append garbage
        return bytes(data) + bytes(rng.randrange(256) for _ in range(64))
    at = rng.randrange(len(data))  # duplicate a slice
    return bytes(data[:at]) + bytes(data[at // 2:])


def mutate_safetensors(data, rng):
    if rng.randrange(2) or len(data) < 8:
        return mutate_bytes(data, rng)
    length = struct.unpack("<Q", data[:8])[0]
    try:
        header = json.loads(data[8:8 + length])
    except ValueError:
        return mutate_bytes(data, rng)
    names = [n for n in header if n != "__metadata__"]
    if names:
        entry = header[rng.choice(names)]
        field = rng.choice(["shape", "data_offsets", "dtype"])
        if field == "dtype":
            entry["dtype"] = rng.choice(["F32", "BF16", "I8", "U64", "?", 7])
        else:
            values = entry.get(field) or [1]
            values[rng.randrange(len(values))] = rng.choice(EXTREME + [-1])
            entry[field] = values
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data[8 + length:]


def mutate_device(rng):
    fields = ["hbm_bytes", "gemm_workspace_bytes", "hbm_bandwidth",
              "matrix_flops_fp32", "vector_flops_fp32", "vector_ops_int32",
              "launch_overhead"]
    device = {"base": "H100-SXM"}
    for _ in range(rng.randint(1, 3)):
        device[rng.choice(fields)] = rng.choice(
            EXTREME + [-1, 1e300, 0.5, "x", None, [], True])
    return json.dumps(device).encode()


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tools-dir", required=True)
    parser.add_argument("--inputs-dir", required=True,
                        help="test/Import/Inputs (mlp.onnx, x.pb, external.onnx)")
    parser.add_argument("--work-dir", required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--timeout", type=float, default=20)
    parser.add_argument("--crash-dir", default="fuzz-failures")
    args = parser.parse_args()

    rng = random.Random(args.seed)
    tgc = os.path.join(args.tools_dir, "tgc")
    work = args.work_dir
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    inputs = args.inputs_dir
    # Seeds: an imported model with its parameters, an input .pb and .npy.
    model = os.path.join(work, "model.mlir")
    subprocess.run([tgc, "import", os.path.join(inputs, "mlp.onnx"),
                    "--input-shape", "x=2x4", "-o", model], check=True)
    params = open(os.path.join(work, "model.safetensors"), "rb").read()
    pb = open(os.path.join(inputs, "x.pb"), "rb").read()
    subprocess.run([tgc, "run", model, "--params",
                    os.path.join(work, "model.safetensors"), "--input",
                    "x=" + os.path.join(inputs, "x.pb"), "--output-dir",
                    os.path.join(work, "seed")], check=True,
                   capture_output=True)
    npy = open(os.path.join(work, "seed", "y.npy"), "rb").read()
    external_model = open(os.path.join(inputs, "external.onnx"), "rb").read()
    external_bin = open(os.path.join(inputs, "external.bin"), "rb").read()
    # An MLP and an example file for it: 5 examples of 4 features and a
    # class below 3, 2 a step.
    classifier = os.path.join(work, "classifier.mlir")
    subprocess.run([os.path.join(args.tools_dir, "tgc-zoo"), "mlp",
                    "--input-size", "4", "--hidden", "8", "--classes", "3",
                    "--batch", "2", "-o", classifier], check=True)
    features = struct.pack("<20f", *[0.25 * k for k in range(20)])
    classes = struct.pack("<5q", 0, 2, 1, 1, 0)
    header = json.dumps({
        "inputs": {"dtype": "F32", "shape": [5, 4],
                   "data_offsets": [0, len(features)]},
        "labels": {"dtype": "I64", "shape": [5],
                   "data_offsets": [len(features),
                                    len(features) + len(classes)]}}).encode()
    examples = struct.pack("<Q", len(header)) + header + features + classes
    secret = os.path.join(work, "secret.bin")
    with open(secret, "wb") as f:
        f.write(b"SECRET" * 64)

    failures = 0
    for i in range(args.iterations):
        case = os.path.join(work, f"case{i % 4}")
        shutil.rmtree(case, ignore_errors=True)
        os.makedirs(case)
        # Kinds and link variants in turn, so that a short run covers each.
        kind = ["params", "npy", "pb", "device", "external",
                "examples"][i % 6]
        if kind == "params":
            path = os.path.join(case, "p.safetensors")
            open(path, "wb").write(mutate_safetensors(params, rng))
            command = [tgc, "run", model, "--params", path,
                       "--random-inputs", "0"]
        elif kind == "npy":
            path = os.path.join(case, "x.npy")
            open(path, "wb").write(mutate_bytes(npy[:80], rng) + npy[80:]
                                   if rng.randrange(2) else
                                   mutate_bytes(npy, rng))
            command = [tgc, "run", model, "--input", "x=" + path,
                       "--random-inputs", "0"]
        elif kind == "pb":
            path = os.path.join(case, "x.pb")
            open(path, "wb").write(mutate_bytes(pb, rng))
            command = [tgc, "run", model, "--input", "x=" + path,
                       "--random-inputs", "0"]
        elif kind == "examples":
            path = os.path.join(case, "e.safetensors")
            open(path, "wb").write(mutate_safetensors(examples, rng))
            # In turn the training data and the held-out data (the
            # evaluation's batches in file order).
            command = [tgc, "train", classifier, "--steps", "2"] + (
                ["--data", path] if (i // 6) % 2 == 0 else
                ["--data", "fixed", "--val-data", path])
        elif kind == "device":
            path = os.path.join(case, "device.json")
            open(path, "wb").write(mutate_device(rng))
            command = [tgc, "report", model, "--device-file", path]
        else:
            path = os.path.join(case, "model.onnx")
            open(path, "wb").write(mutate_bytes(external_model, rng)
                                   if rng.randrange(3) == 0 else external_model)
            weights = os.path.join(case, "external.bin")
            how = (i // 5) % 4
            if how == 0:
                os.symlink(secret, weights)
            elif how == 1:  # a link inside, through a folder linked out
                os.symlink(work, os.path.join(case, "sub"))
                os.symlink("sub/secret.bin", weights)
            elif how == 2:
                os.mkfifo(weights)
            else:
                open(weights, "wb").write(mutate_bytes(external_bin, rng))
            command = [tgc, "import", path, "-o", os.path.join(case, "o.mlir")]
        try:
            result = subprocess.run(command, capture_output=True,
                                    timeout=args.timeout)
            status = result.returncode
            detail = result.stderr.decode(errors="replace")[-2000:]
        except subprocess.TimeoutExpired:
            status, detail = "timeout", ""
        # A byte of the file outside the model, in a message or an output.
        leaked = "SECRET" in detail
        written = os.path.join(case, "o.safetensors")
        if os.path.exists(written):
            leaked |= b"SECRET" in open(written, "rb").read()
        if status not in (0, 1) or leaked:
            failures += 1
            os.makedirs(args.crash_dir, exist_ok=True)
            kept = os.path.join(args.crash_dir, f"hostile-{i}")
            # Links are kept as links; a FIFO cannot be copied (it is named
            # in the log, and the case is rebuilt from --seed).
            shutil.copytree(case, kept, symlinks=True, ignore=lambda d, names: [
                n for n in names
                if stat.S_ISFIFO(os.lstat(os.path.join(d, n)).st_mode)])
            print(f"FAIL: {' '.join(command)} exited with {status}"
                  f"{' and leaked file content' if leaked else ''}; kept in "
                  f"{kept}\n{detail}", file=sys.stderr)
    print(f"hostile files: {args.iterations} mutants, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
