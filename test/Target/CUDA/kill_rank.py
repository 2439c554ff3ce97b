#!/usr/bin/env python3
"""A rank that dies mid-run: the others stop with a clear error, in time.

Also a launch that does not match the compiled mesh: a WORLD_SIZE other
than the mesh's devices, and ranks that run different compiled steps, are
errors on every rank; so is one rank that cannot set up the evaluation
(its --val-data missing), before the first step and well within the
timeout.

Emits a dp=2 step (`tgc compile --mesh dp=2 --emit cuda`), builds it for the
host target, starts `train --nproc 2` for many steps, kills rank 1 with
SIGKILL once rank 0 has logged a step, and checks that the launcher exits 1
within the communication timeout (plus slack), naming the killed rank, and
that rank 0 reports the failed collective rather than hanging.

With --mesh pp=2 (and --options --micro-batches 2) only the killing part
runs, on a pipelined step: rank 0 waits for rank 1's gradients in a
transfer between stages, not in a collective.

With --kill-rank K on a bigger mesh (dp=2,pp=2), rank K dies while the
others wait for one another, not only for it: every survivor must report
the failure naming rank K, all of them within --within seconds (well under
the timeout: the store, not the timeout, tells them).
"""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import time


def run(command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.stderr.write("$ " + " ".join(command) + "\n" + result.stdout +
                         result.stderr)
        sys.exit(1)


def children_with_rank(parent, rank):
    """The processes whose parent is `parent` and whose RANK is `rank`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[1]) != parent:
                continue
            with open("/proc/%s/environ" % entry, "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        if ("RANK=%d" % rank).encode() in env:
            found.append(int(entry))
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--runtime-dir", required=True)
    parser.add_argument("--work-dir", required=True)
    parser.add_argument("--mesh", default="dp=2")
    parser.add_argument("--options", default="",
                        help="more tgc compile options")
    parser.add_argument("--timeout", type=int, default=10,
                        help="TGC_COMM_TIMEOUT for the run, seconds")
    parser.add_argument("--kill-rank", type=int, default=1)
    parser.add_argument("--within", type=float, default=None,
                        help="the survivors must stop this soon, seconds")
    args = parser.parse_args()

    work = args.work_dir
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    model = os.path.join(work, "model.mlir")
    project = os.path.join(work, "project")
    build = os.path.join(project, "build")
    run([os.path.join(args.bin, "tgc-zoo"), "mlp", "--layers", "2", "-o",
         model])
    run([os.path.join(args.bin, "tgc"), "compile", model, "--train", "--mesh",
         args.mesh] + args.options.split() + ["--emit", "cuda", "--evaluation",
                                              "-o", project])
    run(["cmake", "-S", project, "-B", build, "-G", "Ninja",
         "-DTGC_TARGET=host", "-DTGCRuntime_DIR=" + args.runtime_dir])
    run(["cmake", "--build", build])

    env = dict(os.environ, TGC_COMM_TIMEOUT=str(args.timeout))
    train = os.path.join(build, "train")
    if args.mesh == "dp=2":
        check_launch_mismatch(args, work, model, env, train)
    kill_rank(args, env, train)


def free_port():
    import socket
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return str(probe.getsockname()[1])


def check_launch_mismatch(args, work, model, env, train):
    wrong = subprocess.run([train, "--steps", "1"], capture_output=True,
                           text=True, env=dict(env, RANK="0", WORLD_SIZE="3",
                                               MASTER_PORT="1"))
    if wrong.returncode != 1 or ("compiled for a mesh of 2 devices (dp=2) but "
                                 "the launch has 3 rank(s)") not in wrong.stderr:
        sys.exit("WORLD_SIZE=3 on a dp=2 step: %d, %r" %
                 (wrong.returncode, wrong.stderr))

    # Another compiled step (ZeRO-1) as rank 1.
    other = os.path.join(work, "other")
    run([os.path.join(args.bin, "tgc"), "compile", model, "--train", "--mesh",
         "dp=2", "--zero", "1", "--emit", "cuda", "-o", other])
    run(["cmake", "-S", other, "-B", os.path.join(other, "build"), "-G",
         "Ninja", "-DTGC_TARGET=host", "-DTGCRuntime_DIR=" + args.runtime_dir])
    run(["cmake", "--build", os.path.join(other, "build")])
    port = free_port()
    ranks = [subprocess.Popen(
        [program, "--steps", "1", "--data", "fixed"], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
        env=dict(env, RANK=str(rank), WORLD_SIZE="2", MASTER_ADDR="127.0.0.1",
                 MASTER_PORT=port))
        for rank, program in enumerate(
            [train, os.path.join(other, "build", "train")])]
    for rank, process in enumerate(ranks):
        _, stderr = process.communicate(timeout=args.timeout + 30)
        if (process.returncode != 1 or "error: rank %d:" % rank not in stderr
                or "runs a different compiled step" not in stderr):
            sys.exit("rank %d of two different steps: %d, %r" %
                     (rank, process.returncode, stderr))

    # Rank 1 cannot read its validation data: both stop before the first
    # step, rank 0 naming rank 1, without waiting for the timeout.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from compare_host_target import write_example_file
    val = write_example_file(work, os.path.dirname(os.path.dirname(train)),
                             "val.safetensors", seed=1)[0]
    port = free_port()
    start = time.monotonic()
    ranks = [subprocess.Popen(
        [train, "--steps", "1", "--data", "fixed", "--val-data", path],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=dict(env, RANK=str(rank), WORLD_SIZE="2", MASTER_ADDR="127.0.0.1",
                 MASTER_PORT=port))
        for rank, path in enumerate(
            [val, os.path.join(work, "missing.safetensors")])]
    expected = ["rank 1 could not set up the evaluation",
                "cannot be read"]
    for rank, process in enumerate(ranks):
        stdout, stderr = process.communicate(timeout=args.timeout + 30)
        if (process.returncode != 1 or "error: rank %d:" % rank not in stderr
                or expected[rank] not in stderr or "step 1:" in stdout):
            sys.exit("rank %d, rank 1's --val-data missing: %d, %r" %
                     (rank, process.returncode, stderr))
    if time.monotonic() - start > args.timeout:
        sys.exit("rank 1's missing --val-data stopped the ranks after %.1f s "
                 "(timeout %d s)" % (time.monotonic() - start, args.timeout))
    print("one rank's evaluation that cannot be set up stops both")


def kill_rank(args, env, train):
    nproc = 1
    for axis in args.mesh.split(","):
        nproc *= int(axis.split("=")[1])
    victim = args.kill_rank
    launcher = subprocess.Popen(
        [train, "--nproc", str(nproc), "--steps", "1000000",
         "--data", "fixed", "--log-every", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    line = launcher.stdout.readline()
    if not line.startswith("step 1:"):
        launcher.kill()
        sys.exit("expected rank 0's first step, got %r; stderr: %s" %
                 (line, launcher.stderr.read()))
    victims = children_with_rank(launcher.pid, victim)
    if len(victims) != 1:
        launcher.kill()
        sys.exit("expected one process of rank %d, found %s" %
                 (victim, victims))
    os.kill(victims[0], signal.SIGKILL)
    killed = time.monotonic()
    try:
        _, stderr = launcher.communicate(timeout=args.timeout + 30)
    except subprocess.TimeoutExpired:
        launcher.kill()
        sys.exit("the launcher still runs %d s after rank %d died: a hang" %
                 (args.timeout + 30, victim))
    took = time.monotonic() - killed
    print(stderr, end="")
    if launcher.returncode != 1:
        sys.exit("the launcher exited %d, not 1" % launcher.returncode)
    expected = ["rank %d was killed by signal" % victim]
    if nproc == 2:
        expected.append("error: rank 0:")
    else:
        # Each survivor says why it stopped, naming the dead rank.
        expected += ["rank %d has exited or crashed" % victim]
        expected += ["error: rank %d: " % rank for rank in range(nproc)
                     if rank != victim]
    for text in expected:
        if text not in stderr:
            sys.exit("no %r in the launcher's output" % text)
    print("the survivors stopped %.1f s after rank %d died (timeout %d s)" %
          (took, victim, args.timeout))
    if args.within is not None and took > args.within:
        sys.exit("the survivors took %.1f s to stop, more than %g s" %
                 (took, args.within))


if __name__ == "__main__":
    main()
