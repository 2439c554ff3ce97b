#!/usr/bin/env python3
"""The generated project against the interpreter, in CI.

Writes a model with tgc-zoo (or takes --model, an ONNX export), emits its
training step with
`tgc compile --emit cuda`, builds the project for the host target
(-DTGC_TARGET=host: the generated kernels on the CPU, one thread per block),
runs `train --seed 0`, and compares its per-step losses with those of
`tgc train` on the same model and options (the interpreter). Exits 1 when a
loss differs by more than --rtol relative.

With --mesh-options (`--mesh dp=2 --zero 3`), the step is compiled
partitioned and `train --nproc N` runs one process per device, talking
through the runtime's collectives; the reference is the unsharded step of
`tgc train` (with --simulated-reference, the partitioned one on the
interpreter's simulated ranks), and the parameters rank 0 saves are the
ranks' blocks gathered.

With --validation (FORMAT-tokens:V or examples), the project also holds
the evaluation (`tgc compile --evaluation`), and both trainers measure a
validation loss on held-out data every 5 steps (`--val-data`): the losses
must agree as the steps' do.
"""

import argparse
import json
import os
import re
import shutil
import struct
import subprocess
import sys

# The example files' writer (numpy, imported where they are written).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tgc", "Inputs"))

LOSS = re.compile(r"^step (\d+): loss (\S+)", re.M)
# The rate a learning rate schedule gave a logged step.
RATE = re.compile(r"^step (\d+): loss .*\(lr (\S+)\)$", re.M)
VALIDATION = re.compile(r"^step (\d+): val loss (\S+) \((\d+) batch", re.M)
# What the data feeds: tgc train's remark, the generated train's line.
REMARK = re.compile(r"remark: (--data .*)$", re.M)
DATA = re.compile(r"^data: (.*)$", re.M)


def run(command, stderr=False, **kwargs):
    """The command's stdout (and stderr, with `stderr`); exits 1 when it
    fails."""
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        sys.stderr.write("$ " + " ".join(command) + "\n" + result.stdout +
                         result.stderr)
        sys.exit(1)
    return (result.stdout, result.stderr) if stderr else result.stdout


def losses(text):
    return {int(step): float(loss) for step, loss in LOSS.findall(text)}


def read_safetensors(path):
    """The float tensors of a .safetensors file, by name, as numpy arrays."""
    import numpy
    with open(path, "rb") as f:
        data = f.read()
    length = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + length])
    # BF16: the high half of an f32 (the generated trainer saves a bf16
    # parameter as BF16, tgc train as F32).
    types = {"F32": numpy.float32, "F64": numpy.float64,
             "F16": numpy.float16, "BF16": numpy.uint16}
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__" or entry["dtype"] not in types:
            continue
        begin, end = entry["data_offsets"]
        value = numpy.frombuffer(data[8 + length + begin:8 + length + end],
                                 dtype=types[entry["dtype"]])
        if entry["dtype"] == "BF16":
            value = (value.astype(numpy.uint32) << 16).view(numpy.float32)
        tensors[name] = value.astype(numpy.float64).reshape(entry["shape"])
    return tensors


def is_split_view(shape, view):
    """Whether `view` is `shape` with one dimension split in two."""
    if len(view) != len(shape) + 1:
        return False
    return any(shape[:d] == view[:d] and shape[d + 1:] == view[d + 2:] and
               view[d] * view[d + 1] == shape[d] for d in range(len(shape)))


def check_profile(args, model, project, build, options):
    """train --profile times each kernel of step.json once a step, and the
    estimates in step.json are tgc report's, kernel for kernel."""
    profile = os.path.join(args.work_dir, "profile.json")
    printed = run([os.path.join(build, "train"), "--steps", "3", "--seed",
                   "0", "--profile", profile])
    if "profile of 2 step(s)" not in printed:
        sys.exit("train --profile printed no table:\n" + printed)
    with open(os.path.join(project, "step.json")) as f:
        step = json.load(f)
    with open(profile) as f:
        timed = json.load(f)
    kernels = step["kernels"]
    calls = {k["name"]: k["calls_per_step"] for k in timed["kernels"]}
    expected = {name: kernels.count(name) for name in kernels}
    if calls != expected:
        sys.exit("train --profile timed %s, step.json launches %s" %
                 (sorted(calls.items()), sorted(expected.items())))
    covered = [k for op in step["estimates"]["ops"] for k in op["kernels"]]
    if sorted(covered) != sorted(kernels):
        sys.exit("the estimates cover %s, not the kernels %s" %
                 (covered, kernels))
    report = json.loads(run([os.path.join(args.bin, "tgc"), "report", model,
                             "--train", "--json"] + options +
                            args.compile_options.split()))
    total = sum(op["seconds"] for op in step["estimates"]["ops"])
    if abs(total - report["step_time_s"]) > 1e-9 * report["step_time_s"]:
        sys.exit("the estimates sum to %.9g s, tgc report's step time is "
                 "%.9g s" % (total, report["step_time_s"]))
    # A profile that cannot be written: an error naming it, nothing left.
    bad = os.path.join(args.work_dir, "missing", "profile.json")
    result = subprocess.run([os.path.join(build, "train"), "--steps", "2",
                             "--profile", bad], capture_output=True, text=True)
    if result.returncode != 1 or "--profile: cannot write" not in \
            result.stderr or os.path.exists(bad + ".tmp"):
        sys.exit("train --profile to a missing directory: status %d, %s" %
                 (result.returncode, result.stderr))
    print("profile: %d kernels timed once a step; estimates sum to tgc "
          "report's %.3f us" % (len(calls), total * 1e6))


def write_token_file(work, spec, name="tokens.bin", seed=0):
    """The token file `name` of `spec` (FORMAT-tokens:V) in `work`: 4096
    ids below V (a fixed pseudo-random stream of `seed`), as nanoGPT writes
    them or after llm.c's header of 256 int32 (magic 20240520, version 1,
    the count)."""
    import random
    kind, vocabulary = spec.split(":")
    stream = random.Random(seed)
    ids = [stream.randrange(int(vocabulary)) for _ in range(4096)]
    header = b""
    if kind == "llmc-tokens":
        header = struct.pack("<3i", 20240520, 1, len(ids)) + bytes(1012)
    elif kind != "nanogpt-tokens":
        sys.exit("unknown token file format " + kind)
    path = os.path.join(work, name)
    with open(path, "wb") as f:
        f.write(header + struct.pack("<%dH" % len(ids), *ids))
    return path


def write_example_file(work, project, filename="examples.safetensors",
                       seed=0):
    """An example file `filename` for the step of `project` (its step.json):
    every input and label but the integer ones a run fills by name (an
    attention mask...), 2.5 batches of examples (the epochs leave some
    out): floats normal, ids below their bound, some labels the ignored id
    of a loss (a generator of `seed`)."""
    import make_examples
    import numpy
    with open(os.path.join(project, "step.json")) as f:
        arguments = json.load(f)["arguments"]
    rng = numpy.random.default_rng(seed)
    tensors = []
    for arg in arguments:
        shape = arg.get("global_shape", arg["shape"])
        name, dtype = arg["name"], arg["dtype"]
        floating = dtype.startswith("F") or dtype == "BF16"
        named = any(word in name.lower()
                    for word in ("mask", "token_type", "position"))
        if arg["role"] not in ("input", "label") or (named and not floating):
            continue
        batch = shape[0]
        shape = [batch * 5 // 2] + shape[1:]
        if floating:
            values = rng.standard_normal(shape)
        else:
            values = rng.integers(0, arg.get("id_bound", 16), shape)
            for ignored in arg.get("ignored_ids", [])[:1]:
                values[rng.random(shape) < 0.1] = ignored
        tensors.append((name, values, dtype, arg.get("id_bound"), batch))
    path = os.path.join(work, filename)
    make_examples.save(path, [tensor[:3] for tensor in tensors])
    return path, tensors


def check_bad_example_files(work, build, launch, env, tensors, good):
    """train refuses a missing example file, one of fewer examples than a
    step takes and one with an id out of its bound, naming the file and
    what is wrong, exit 1 (every rank's, under --nproc), and a --save over
    the example file `good`."""
    import make_examples
    cases = [(os.path.join(work, "missing.safetensors"),
              "cannot be read: No such file or directory")]
    batch = tensors[0][4]
    if batch > 1:
        path = os.path.join(work, "few.safetensors")
        make_examples.save(path, [(name, values[:1], dtype)
                                  for name, values, dtype, _, _ in tensors])
        cases.append((path, "': it holds 1 examples; a step takes %d" %
                      batch))
    for k, (name, values, dtype, bound, _) in enumerate(tensors):
        if bound:
            bad = values.copy()
            bad.flat[0] = bound
            path = os.path.join(work, "out-of-range.safetensors")
            make_examples.save(path, [t[:3] for t in tensors[:k]] +
                               [(name, bad, dtype)] +
                               [t[:3] for t in tensors[k + 1:]])
            cases.append((path, "': tensor '%s', example 0, element 0 is %d, "
                          "not in [0, %d)" % (name, bound, bound)))
            break
    for path, message in cases:
        result = subprocess.run([os.path.join(build, "train")] + launch +
                                ["--steps", "1", "--data", path],
                                capture_output=True, text=True, timeout=60,
                                env=env)
        expected = "example file '%s%s" % (path, message if message[0] ==
                                           "'" else "' " + message)
        if result.returncode != 1 or expected not in result.stderr:
            sys.exit("train --data %s: status %d, %r (expected %r)" %
                     (path, result.returncode, result.stderr, expected))
    result = subprocess.run([os.path.join(build, "train")] + launch +
                            ["--steps", "1", "--data", good, "--save", good],
                            capture_output=True, text=True, timeout=60,
                            env=env)
    expected = "--save: '%s' is the --data file" % good
    if result.returncode != 1 or expected not in result.stderr:
        sys.exit("train --save over --data: status %d, %r (expected %r)" %
                 (result.returncode, result.stderr, expected))
    print("bad example files: %d refused, and --save over one" % len(cases))


def check_bad_token_files(work, build, launch, env):
    """train refuses a missing token file, a directory and a FIFO (without
    blocking on it) with a message naming the file, exit 1 (every rank's,
    under --nproc)."""
    fifo = os.path.join(work, "tokens.fifo")
    os.mkfifo(fifo)
    for path, message in [(os.path.join(work, "missing.bin"),
                           "cannot be read: No such file or directory"),
                          (work, "is not a regular file"),
                          (fifo, "is not a regular file")]:
        result = subprocess.run([os.path.join(build, "train")] + launch +
                                ["--steps", "1", "--data", path],
                                capture_output=True, text=True, timeout=60,
                                env=env)
        expected = "token file '%s' %s" % (path, message)
        if result.returncode != 1 or expected not in result.stderr:
            sys.exit("train --data %s: status %d, %r (expected %r)" %
                     (path, result.returncode, result.stderr, expected))
    print("bad token files: missing, a directory and a FIFO refused")


def check_bad_flags(work, build, launch):
    """train refuses flag values it cannot take, before it runs a step: a
    count beyond its type (not truncated: 2^32 + 1 steps is not 1 step), a
    sign, a non-finite learning rate, a --save, --profile or --save-shards
    destination it could not write after the run (a missing directory, a
    directory, a file; under --nproc the launcher refuses it before it
    starts a process), and a TGC_HOST_WORKERS or TGC_HOST_THREADS that is
    not a count from 1 to 1024."""
    missing = os.path.join(work, "missing", "c.safetensors")
    for flag, value, expected in [
            ("--save", missing, "--save: cannot write '%s'" % missing),
            ("--save", work, "--save: cannot write '%s': it is a directory"
             % work),
            ("--profile", missing, "--profile: cannot write '%s'" % missing),
            ("--save-shards", missing,
             "--save-shards: cannot write '%s'" % missing),
            ("--save-shards", os.path.join(work, "generated.safetensors"),
             "--save-shards: '%s' is not a directory"
             % os.path.join(work, "generated.safetensors")),
            ("--steps", "4294967297",
             "--steps takes an integer from 0 to 4294967295"),
            ("--steps", "99999999999999999999",
             "--steps takes an integer from 0 to 4294967295"),
            ("--seed", "+3", "--seed takes an integer from 0 to"),
            ("--log-every", "-1", "--log-every takes an integer from 0 to"),
            ("--lr", "nan", "--lr takes a non-negative number"),
            ("--lr-schedule", "linear",
             "--lr-schedule is constant or cosine, not 'linear'"),
            ("--decay-steps", "10",
             "--decay-steps needs --lr-schedule cosine"),
            ("--min-lr", "-1", "--min-lr takes a non-negative number"),
            ("--save-every", "2", "--save-every needs --save or --save-shards")]:
        result = subprocess.run([os.path.join(build, "train")] + launch +
                                [flag, value],
                                capture_output=True, text=True, timeout=60)
        if result.returncode != 1 or expected not in result.stderr or \
                LOSS.search(result.stdout):
            sys.exit("train %s %s: status %d, %r (expected %r)" %
                     (flag, value, result.returncode, result.stderr,
                      expected))
    for name, what, value in [("TGC_HOST_WORKERS", "workers", "0"),
                              ("TGC_HOST_WORKERS", "workers", "2x"),
                              ("TGC_HOST_WORKERS", "workers", "1025"),
                              ("TGC_HOST_THREADS", "threads per block", ""),
                              ("TGC_HOST_THREADS", "threads per block",
                               "-4")]:
        result = subprocess.run([os.path.join(build, "train")] + launch,
                                capture_output=True, text=True, timeout=60,
                                env=dict(os.environ, **{name: value}))
        expected = "%s='%s' is not a number of %s from 1 to 1024" % (
            name, value, what)
        if result.returncode != 1 or expected not in result.stderr or \
                LOSS.search(result.stdout):
            sys.exit("train with %s=%s: status %d, %r (expected %r)" %
                     (name, value, result.returncode, result.stderr,
                      expected))
    # --val-data needs the evaluation (tgc compile --evaluation).
    with open(os.path.join(os.path.dirname(build), "step.json")) as f:
        evaluated = "evaluation" in json.load(f)
    checks = [(["--val-every", "2"],
               "--val-every and --val-batches need --val-data")]
    if not evaluated:
        checks.append((["--val-data", os.path.join(work, "val.bin")],
                       "--val-data: this project has no evaluation; compile "
                       "it with tgc compile --emit cuda --evaluation"))
    for flags, expected in checks:
        result = subprocess.run([os.path.join(build, "train")] + launch +
                                ["--steps", "1"] + flags,
                                capture_output=True, text=True, timeout=60)
        if result.returncode != 1 or expected not in result.stderr or \
                LOSS.search(result.stdout):
            sys.exit("train %s: status %d, %r (expected %r)" %
                     (" ".join(flags), result.returncode, result.stderr,
                      expected))
    print("bad flag values refused")


def check_corrupt_params(work, build, launch, saved):
    """train refuses a parameter file holding a NaN, naming the tensor and
    the element, before a step (not as a NaN loss at step 1)."""
    with open(saved, "rb") as f:
        data = bytearray(f.read())
    length = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + length])
    names = [n for n in sorted(header) if n != "__metadata__" and
             header[n]["dtype"] == "F32" and
             header[n]["data_offsets"][1] > header[n]["data_offsets"][0]]
    if not names:
        return
    begin = 8 + length + header[names[0]]["data_offsets"][0]
    data[begin:begin + 4] = struct.pack("<f", float("nan"))
    corrupt = os.path.join(work, "nan.safetensors")
    with open(corrupt, "wb") as f:
        f.write(data)
    result = subprocess.run([os.path.join(build, "train")] + launch +
                            ["--steps", "1", "--params", corrupt],
                            capture_output=True, text=True, timeout=120,
                            env=dict(os.environ, TGC_COMM_TIMEOUT="60"))
    expected = "tensor '%s' holds NaN at element 0" % names[0]
    if result.returncode != 1 or expected not in result.stderr or \
            LOSS.search(result.stdout):
        sys.exit("train --params with a NaN: status %d, %r (expected %r)" %
                 (result.returncode, result.stderr, expected))
    print("a NaN in --params refused: %s" % names[0])


def check_special_save(work, build):
    """--save to a FIFO (a special file: nothing to replace) writes through
    it, as tgc's outputs do: a checkpoint arrives at the reader, and the
    FIFO is still a FIFO (a temporary renamed over it would have replaced
    it; over /dev/null, as root, the device)."""
    import stat
    import threading
    fifo = os.path.join(work, "save.fifo")
    if os.path.exists(fifo):
        os.remove(fifo)
    os.mkfifo(fifo)
    received = []
    # A daemon: were the FIFO replaced, the reader would wait for ever.
    reader = threading.Thread(
        target=lambda: received.append(open(fifo, "rb").read()), daemon=True)
    reader.start()
    result = subprocess.run([os.path.join(build, "train"), "--steps", "1",
                             "--save", fifo], capture_output=True, text=True,
                            timeout=120)
    reader.join(timeout=60)
    if result.returncode != 0 or not received or \
            not stat.S_ISFIFO(os.stat(fifo).st_mode):
        sys.exit("train --save FIFO: status %d, %r; %d bytes read; %s" %
                 (result.returncode, result.stderr,
                  len(received[0]) if received else -1,
                  "a FIFO" if stat.S_ISFIFO(os.stat(fifo).st_mode)
                  else "replaced"))
    length = int.from_bytes(received[0][:8], "little")
    json.loads(received[0][8:8 + length])
    print("--save through a FIFO: %d bytes, the FIFO kept" % len(received[0]))


def check_imported(args, project, build, first_loss):
    """An imported model's trainer starts from its weights (the project's
    params.safetensors); --init random from --seed alone; a missing file is
    an error naming it, not a silent random start."""
    train = os.path.join(build, "train")
    common = ["--steps", "1", "--seed", "0", "--data", args.data]
    if args.nproc:
        common += ["--nproc", str(args.nproc)]
    seeded = losses(run([train, "--init", "random"] + common))[1]
    if seeded == first_loss:
        sys.exit("train --init random started from the model's weights too")
    params = os.path.join(project, "params.safetensors")
    os.rename(params, params + ".moved")
    try:
        result = subprocess.run([train] + common, capture_output=True,
                                text=True)
    finally:
        os.rename(params + ".moved", params)
    if result.returncode != 1 or "params.safetensors" not in result.stderr \
            or "--init random" not in result.stderr:
        sys.exit("train without the model's params.safetensors: status %d, "
                 "%s" % (result.returncode, result.stderr))
    print("imported weights: loaded by default (step 1 loss %.6g; %.6g from "
          "--seed alone); a missing file is an error" % (first_loss, seeded))
    with open(os.path.join(project, "step.json")) as f:
        frozen = [arg["name"] for arg in json.load(f)["arguments"]
                  if arg.get("frozen")]
    if "--lora" in args.options.split() and not frozen:
        sys.exit("step.json of a LoRA step marks no argument frozen")
    if frozen:
        check_frozen_params(args, project, train, common, first_loss, frozen)


def write_subset(source, path, keep):
    """`source`'s entries whose name `keep` accepts, as a .safetensors
    file at `path`."""
    with open(source, "rb") as f:
        data = f.read()
    length = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + length])
    body, entries = b"", {}
    for name, entry in header.items():
        if name == "__metadata__" or not keep(name):
            continue
        begin, end = entry["data_offsets"]
        entries[name] = dict(entry, data_offsets=[len(body),
                                                  len(body) + end - begin])
        body += data[8 + length + begin:8 + length + end]
    encoded = json.dumps(entries).encode()
    with open(path, "wb") as f:
        f.write(len(encoded).to_bytes(8, "little") + encoded + body)


def check_frozen_params(args, project, train, common, first_loss, frozen):
    """In a step with frozen parameters (a LoRA step), --params needs the
    frozen ones only: a base model's file starts the adapters from --seed
    (with B = 0, the first loss is the base model's), and names them; a file
    without a frozen parameter is refused, naming it."""
    params = os.path.join(project, "params.safetensors")
    base = os.path.join(project, "base.safetensors")
    write_subset(params, base, lambda name: name in frozen)
    output = run([train, "--params", base] + common)
    if losses(output).get(1) != first_loss or \
            "start from --seed" not in output:
        sys.exit("train --params with the frozen parameters only: %r "
                 "(expected loss %.6g and the adapters named)" %
                 (output, first_loss))
    partial = os.path.join(project, "partial.safetensors")
    write_subset(params, partial, lambda name: name != frozen[0])
    result = subprocess.run([train, "--params", partial] + common,
                            capture_output=True, text=True, timeout=120)
    if result.returncode != 1 or "no tensor '%s'" % frozen[0] \
            not in result.stderr:
        sys.exit("train --params without the frozen %s: status %d, %r" %
                 (frozen[0], result.returncode, result.stderr))
    print("--params of a step with %d frozen parameters: the adapters start "
          "from --seed, a missing frozen one is refused" % len(frozen))


def check_validation(work, build, launch, generated, reference, args,
                     val_data, tgc_train):
    """Both trainers' validation losses, every 5 steps and at the last, on
    the same batches; a file of less than a batch refused. `tgc_train`:
    the interpreter's command, without its flags."""
    mine, theirs = VALIDATION.findall(generated), VALIDATION.findall(reference)
    expected = sorted(set(range(5, args.steps + 1, 5)) | {args.steps})
    if [int(step) for step, _, _ in theirs] != expected or \
            [(s, b) for s, _, b in mine] != [(s, b) for s, _, b in theirs]:
        sys.exit("validation losses: train %s, tgc train %s (expected steps "
                 "%s)" % (mine, theirs, expected))
    worst = 0.0
    for (step, a, _), (_, b, _) in zip(mine, theirs):
        error = abs(float(a) - float(b)) / max(abs(float(b)), 1e-30)
        worst = max(worst, error)
        if error > args.rtol:
            sys.exit("step %s: the generated evaluation's loss %s differs "
                     "from the interpreter's %s by %.3g relative (> %g)" %
                     (step, a, b, error, args.rtol))
    short = os.path.join(work, "short" + os.path.splitext(val_data)[1])
    with open(val_data, "rb") as f:
        data = f.read()
    with open(short, "wb") as f:
        f.write(data[:40] if short.endswith(".bin") else b"")
    result = subprocess.run([os.path.join(build, "train")] + launch +
                            ["--steps", "1", "--val-data", short],
                            capture_output=True, text=True, timeout=60,
                            env=dict(os.environ, TGC_COMM_TIMEOUT="60"))
    if result.returncode != 1 or short not in result.stderr or \
            LOSS.search(result.stdout):
        sys.exit("train --val-data %s: status %d, %r" %
                 (short, result.returncode, result.stderr))
    refused = "a short file refused"
    # After an example file, a token file: both trainers refuse it for a
    # model without token ids (naming what it needs), or both take it.
    if val_data.endswith(".safetensors"):
        tokens = os.path.join(work, "tokens.bin")
        with open(tokens, "wb") as f:
            f.write(bytes(4096))
        flags = ["--steps", "1", "--val-data", tokens]
        results = [subprocess.run(command + flags, capture_output=True,
                                  text=True, timeout=120,
                                  env=dict(os.environ, TGC_COMM_TIMEOUT="60"))
                   for command in ([os.path.join(build, "train")] + launch,
                                   tgc_train)]
        needs = "a token file needs a token-id 'input'"
        outcomes = [(r.returncode, needs in r.stderr) for r in results]
        if outcomes[0] != outcomes[1] or outcomes[0] not in ((0, False),
                                                             (1, True)):
            sys.exit("--val-data %s: train exits %d (%r), tgc train %d (%r)"
                     % (tokens, results[0].returncode, results[0].stderr,
                        results[1].returncode, results[1].stderr))
        refused += (", a token file refused by both (no token ids)"
                    if outcomes[0][0] else ", a token file taken by both")
    print("validation: %d losses equal within %.3g relative (worst %.3g), "
          "%s batches; %s" %
          (len(theirs), args.rtol, worst, theirs[0][2], refused))


def check_resumed_schedule(work, build, launch, env, common, generated,
                           steps):
    """A cosine schedule across a checkpoint: the first part of the run
    says where the cosine ends (--decay-steps, the whole run's last step),
    the resumed part ends there (its default end); together they give the
    uninterrupted run's losses."""
    first = steps // 2
    checkpoint = os.path.join(work, "schedule.safetensors")
    common = common[2:]  # without --steps
    run([os.path.join(build, "train")] + launch + common +
        ["--steps", str(first), "--decay-steps", str(steps), "--save",
         checkpoint], env=env)
    resumed = losses(run([os.path.join(build, "train")] + launch + common +
                         ["--steps", str(steps - first), "--resume",
                          checkpoint], env=env))
    for step in range(first + 1, steps + 1):
        a, b = resumed.get(step), generated[step]
        if a is None or abs(a - b) > 1e-6 * abs(b):
            sys.exit("resumed at step %d, step %d's loss is %s, the "
                     "uninterrupted run's %.9g: the schedule did not "
                     "continue" % (first, step, a, b))
    print("a cosine schedule resumed at step %d continues the run (steps "
          "%d-%d as uninterrupted)" % (first, first + 1, steps))


def check_periodic_save(work, build, launch, env, common):
    """--save-every 1 on a run that fails (a learning rate of 1e30 makes a
    loss non-finite within a few steps): the checkpoint holds the values
    after the last step that finished, as a run of that many steps saves
    them."""
    import numpy
    common = common[2:]  # without --steps
    periodic = os.path.join(work, "periodic.safetensors")
    failing = subprocess.run(
        [os.path.join(build, "train")] + launch + common +
        ["--steps", "10", "--lr", "1e30", "--save-every", "1", "--save",
         periodic], capture_output=True, text=True, env=env)
    if failing.returncode != 1 or "the loss is" not in failing.stderr or \
            "step 1: saved " + periodic not in failing.stdout:
        sys.exit("--save-every with a failing run: status %d\n%s%s" %
                 (failing.returncode, failing.stdout, failing.stderr))
    with open(periodic, "rb") as f:
        header = json.loads(f.read(int.from_bytes(f.read(8), "little")))
    steps = int(header["__metadata__"]["tgc.steps"])
    expected = os.path.join(work, "periodic-expected.safetensors")
    run([os.path.join(build, "train")] + launch + common +
        ["--steps", str(steps), "--lr", "1e30", "--save", expected], env=env)
    mine, theirs = read_safetensors(periodic), read_safetensors(expected)
    for name, value in theirs.items():
        if not numpy.array_equal(mine[name], value, equal_nan=True):
            sys.exit("--save-every: '%s' after step %d differs from a run "
                     "of %d steps" % (name, steps, steps))
    print("--save-every 1 kept the values after step %d of a run that then "
          "failed" % steps)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True, help="tgc's bin directory")
    parser.add_argument("--runtime-dir", required=True,
                        help="TGCRuntime_DIR (the runtime's build directory)")
    parser.add_argument("--work-dir", required=True)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--zoo", help="tgc-zoo arguments, space-separated")
    source.add_argument("--model",
                        help="a model file instead (an ONNX export: the "
                        "trainer starts from its weights, as tgc train)")
    parser.add_argument("--options", default="",
                        help="pipeline options for both tgc compile and train")
    parser.add_argument("--compile-options", default="",
                        help="options of tgc compile alone (planning: "
                        "--memory-budget, --no-fuse), which tgc train does "
                        "not take and which must not change the numbers")
    parser.add_argument("--mesh-options", default="",
                        help="sharding options of tgc compile alone "
                        "(--mesh, --zero, --sequence-parallel): the reference "
                        "is the unsharded step")
    parser.add_argument("--simulated-reference", action="store_true",
                        help="the reference is tgc train of the partitioned "
                        "step too (--mesh-options on the interpreter's "
                        "simulated ranks), not of the unsharded one")
    parser.add_argument("--nproc", type=int, default=0,
                        help="train --nproc N: one process per device")
    parser.add_argument("--data", default="synthetic-copy",
                        help="synthetic-copy, fixed, FORMAT-tokens:V (a "
                        "token file of 4096 ids below V written in the work "
                        "directory: nanogpt, or llmc with llm.c's header), or "
                        "examples (an example file of the step's inputs and "
                        "labels, 2.5 batches)")
    parser.add_argument("--host-threads", type=int, default=0,
                        help="TGC_HOST_THREADS for train: every block on "
                        "this many host threads, cooperating as a GPU "
                        "block's do (tgc/runtime/CudaCompat.h)")
    parser.add_argument("--check-outputs", action="store_true",
                        help="also check --save through a FIFO")
    parser.add_argument("--env", action="append", default=[],
                        metavar="NAME=VALUE",
                        help="an environment variable for train (e.g. "
                        "TGC_GEMM_EPILOGUE=0: every GEMM epilogue as the "
                        "GEMM and the region's kernels)")
    parser.add_argument("--validation", default="",
                        help="held-out data for --val-data: FORMAT-tokens:V "
                        "or examples")
    parser.add_argument("--train-options", default="",
                        help="flags of both trainers alone (a learning "
                        "rate schedule: --warmup 5 --lr-schedule cosine); "
                        "with a cosine, a run resumed from a checkpoint "
                        "must continue it")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--rtol", type=float, default=1e-5)
    parser.add_argument("--profile", action="store_true",
                        help="also check train --profile against step.json: "
                        "every kernel timed once per step, and the cost "
                        "model's estimates covering each kernel once and "
                        "summing to tgc report's step time")
    parser.add_argument("--param-atol", type=float, default=1e-6,
                        help="parameters after the run: |a - b| <= atol + "
                        "rtol |b|")
    args = parser.parse_args()

    work = args.work_dir
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    if "-tokens:" in args.data:
        args.data = write_token_file(work, args.data)
    project = os.path.join(work, "project")
    options = args.options.split()
    if args.model:
        model = args.model
    else:
        model = os.path.join(work, "model.mlir")
        run([os.path.join(args.bin, "tgc-zoo")] + args.zoo.split() +
            ["-o", model])
    run([os.path.join(args.bin, "tgc"), "compile", model, "--train"] + options +
        args.compile_options.split() + args.mesh_options.split() +
        ["--emit", "cuda", "-o", project] +
        (["--evaluation"] if args.validation else []))
    examples = None
    if args.data == "examples":
        args.data, examples = write_example_file(work, project)
    validation = []
    if args.validation == "examples":
        validation = ["--val-data", write_example_file(
            work, project, "val.safetensors", seed=1)[0]]
    elif args.validation:
        validation = ["--val-data", write_token_file(
            work, args.validation, "val.bin", seed=1)]
    if validation:
        validation += ["--val-every", "5", "--val-batches", "3"]
    build = os.path.join(project, "build")
    run(["cmake", "-S", project, "-B", build, "-G", "Ninja",
         "-DTGC_TARGET=host", "-DTGCRuntime_DIR=" + args.runtime_dir])
    run(["cmake", "--build", build])
    common = ["--steps", str(args.steps), "--seed", "0", "--data", args.data,
              "--log-every", "1"] + args.train_options.split()
    saved = os.path.join(work, "generated.safetensors")
    expected = os.path.join(work, "interpreter.safetensors")
    launch = ["--nproc", str(args.nproc)] if args.nproc else []
    env = dict(os.environ, TGC_COMM_TIMEOUT="60")
    if args.host_threads:
        env["TGC_HOST_THREADS"] = str(args.host_threads)
    for setting in args.env:
        name, _, value = setting.partition("=")
        env[name] = value
    printed = run([os.path.join(build, "train")] + launch + common +
                  validation + ["--save", saved], env=env)
    reference_mesh = args.mesh_options.split() if args.simulated_reference \
        else []
    tgc_train = [os.path.join(args.bin, "tgc"), "train", model] + options + \
        reference_mesh
    printedReference, remarks = run(
        tgc_train + common + validation + ["--save", expected], stderr=True)
    if DATA.findall(printed) != REMARK.findall(remarks):
        sys.exit("the generated train says the data feeds %s, tgc train %s" %
                 (DATA.findall(printed), REMARK.findall(remarks)))
    for line in DATA.findall(printed):
        print("both trainers: " + line)
    generated, reference = losses(printed), losses(printedReference)
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
    if RATE.findall(printed) != RATE.findall(printedReference):
        sys.exit("the learning rates differ: train prints %s, tgc train %s" %
                 (RATE.findall(printed), RATE.findall(printedReference)))
    if "--lr-schedule" in args.train_options and \
            len(RATE.findall(printed)) != args.steps:
        sys.exit("a schedule's rates are not printed at every step:\n" +
                 printed)
    import numpy
    mine, theirs = read_safetensors(saved), read_safetensors(expected)
    if not theirs or set(theirs) - set(mine):
        sys.exit("the parameters differ in names: %s" %
                 sorted(set(theirs) ^ set(mine)))
    for name, value in theirs.items():
        # Under tensor parallelism a fused projection's weight is stored in
        # a split view ([h, 3, h] for [h, 3h]): the same values row-major.
        if mine[name].shape != value.shape and is_split_view(
                list(value.shape), list(mine[name].shape)):
            mine[name] = mine[name].reshape(value.shape)
        if not numpy.allclose(mine[name], value, rtol=args.rtol,
                              atol=args.param_atol):
            worstParam = numpy.max(numpy.abs(mine[name] - value))
            sys.exit("parameter %s after %d steps differs by up to %.3g" %
                     (name, args.steps, worstParam))
    print("%d parameters equal within rtol %g, atol %g" %
          (len(theirs), args.rtol, args.param_atol))
    if args.profile:
        check_profile(args, model, project, build, options)
    # An ONNX export's weights are the project's params.safetensors; a .mlir
    # model without initial values starts from --seed either way.
    if args.model and args.model.endswith(".onnx"):
        check_imported(args, project, build, generated[1])
    if args.data.endswith("tokens.bin"):
        check_bad_token_files(work, build, launch, env)
    if examples:
        check_bad_example_files(work, build, launch, env, examples,
                                args.data)
    if validation:
        check_validation(work, build, launch, printed, printedReference, args,
                         validation[1], tgc_train)
    if "cosine" in args.train_options:
        check_resumed_schedule(work, build, launch, env, common, generated,
                               args.steps)
        check_periodic_save(work, build, launch, env, common)
    check_bad_flags(work, build, launch)
    check_corrupt_params(work, build, launch, saved)
    if args.check_outputs:
        check_special_save(work, build)
    print("%d steps: losses equal within %.3g relative (worst %.3g); %s -> %s"
          % (args.steps, args.rtol, worst, reference[1], reference[args.steps]))


if __name__ == "__main__":
    main()
