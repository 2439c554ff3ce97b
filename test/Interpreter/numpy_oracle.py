#!/usr/bin/python3
"""Independent numerical checks of the tgc CPU reference interpreter.

For every tg op this script writes the MLIR text of a small function, draws
seeded random inputs with numpy, writes them as .npy files, runs
`tgc run --input ... --output-dir ...`, and compares the results with a numpy
reference written from the op descriptions in
dialects/TG/include/tgc/Dialect/TG/TGOps.td (not from the interpreter's
source). References are computed in float64; f32 results are compared with
tolerances suited to f32, and every all-f32 case is run again with --f64 and
compared with a 1e-12 tolerance. Low-precision types (bf16, f16, f8E4M3FN,
f8E5M2) are checked bit-exactly against a round-to-nearest-even written here.
It also checks the CLI's error paths (exit status 1, a message on stderr, no
output files).

    /usr/bin/python3 test/Interpreter/numpy_oracle.py \
        --tgc build/bin/tgc --work-dir /tmp/tgc-oracle

Prints one line per case ("PASS name" or "FAIL name: details"), then
"N passed, M failed"; exits 1 if any case failed.
"""

import argparse
import math
import os
import shutil
import subprocess
import sys
import time
import zlib
from concurrent.futures import ThreadPoolExecutor

import numpy as np

np.seterr(all="ignore")

# ---------------------------------------------------------------------------
# Floating-point formats and round-to-nearest-even, written independently.
# ---------------------------------------------------------------------------

# name -> (explicit mantissa bits, smallest normal exponent, largest finite
# value, has infinity)
FORMATS = {
    "bf16": (7, -126, (2 - 2.0**-7) * 2.0**127, True),
    "f16": (10, -14, 65504.0, True),
    "f8E4M3FN": (3, -6, 448.0, False),
    "f8E5M2": (2, -14, 57344.0, True),
    "f32": (23, -126, (2 - 2.0**-23) * 2.0**127, True),
    "f64": (52, -1022, sys.float_info.max, True),
}


def round_to(x, fmt):
    """Rounds float64 values to `fmt`, to nearest even, in one step.

    Overflow gives infinity, or NaN for f8E4M3FN (no infinity); an infinite
    input stays infinite (NaN for f8E4M3FN); NaN stays NaN. Returns float64.
    """
    mbits, emin, maxf, has_inf = FORMATS[fmt]
    x = np.asarray(x, dtype=np.float64)
    ax = np.abs(x)
    finite = np.isfinite(x)
    safe = np.where(finite, ax, 1.0)
    _, e2 = np.frexp(safe)  # safe = f * 2^e2, f in [0.5, 1)
    exp = np.maximum(e2 - 1, emin)
    quantum = np.ldexp(1.0, exp - mbits)
    # safe / quantum is exact (a power-of-two scaling); np.round is
    # round-half-to-even.
    r = np.round(safe / quantum) * quantum
    big = np.inf if has_inf else np.nan
    r = np.where(r > maxf, big, r)
    r = np.where(finite, r, np.where(np.isnan(x), np.nan, big))
    return np.copysign(r, x)


def bf16_from_f32_bits(x32):
    """The classic bit trick (RNE on the upper 16 bits): a second,
    independent implementation used to cross-check round_to."""
    x32 = np.asarray(x32, dtype=np.float32)
    u = x32.view(np.uint32).astype(np.uint64)
    lsb = (u >> np.uint64(16)) & np.uint64(1)
    r = ((u + np.uint64(0x7FFF) + lsb) & np.uint64(0xFFFF0000)).astype(np.uint32)
    out = r.view(np.float32).astype(np.float64)
    return np.where(np.isnan(x32), np.nan, out)


def int_to_fmt(n, fmt):
    """An exact Python integer rounded to `fmt` (nearest even), as a float."""
    mbits, emin, maxf, has_inf = FORMATS[fmt]
    if n == 0:
        return 0.0
    a = abs(n)
    e = a.bit_length() - 1
    shift = max(e, emin) - mbits
    if shift > 0:
        q = 1 << shift
        r, rem = divmod(a, q)
        half = q >> 1
        if rem > half or (rem == half and (r & 1)):
            r += 1
        a = r * q
    v = float(a)
    if v > maxf:
        v = math.inf if has_inf else math.nan
    return -v if n < 0 else v


def ulp_of(x, fmt):
    mbits, emin, _, _ = FORMATS[fmt]
    ax = np.abs(np.asarray(x, dtype=np.float64))
    _, e2 = np.frexp(np.where(np.isfinite(ax) & (ax > 0), ax, 1.0))
    exp = np.maximum(e2 - 1, emin)
    exp = np.where(ax > 0, exp, emin)
    return np.ldexp(1.0, exp - mbits)


def f32(x):
    """float64 -> the nearest float32 value, back as float64."""
    return np.asarray(x, dtype=np.float64).astype(np.float32).astype(np.float64)


# ---------------------------------------------------------------------------
# Philox4x32-10, written from the Random123 paper's definition.
# ---------------------------------------------------------------------------

def philox4x32_10(c0, c1, c2, c3, k0, k1):
    mask = np.uint64(0xFFFFFFFF)
    m0, m1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
    w0, w1 = np.uint64(0x9E3779B9), np.uint64(0xBB67AE85)
    c = [np.asarray(v, dtype=np.uint64) & mask for v in (c0, c1, c2, c3)]
    k0 = np.asarray(k0, dtype=np.uint64) & mask
    k1 = np.asarray(k1, dtype=np.uint64) & mask
    s32 = np.uint64(32)
    for _ in range(10):
        p0 = m0 * c[0]
        p1 = m1 * c[2]
        hi0, lo0 = p0 >> s32, p0 & mask
        hi1, lo1 = p1 >> s32, p1 & mask
        c = [hi1 ^ c[1] ^ k0, lo1, hi0 ^ c[3] ^ k1, lo0]
        k0 = (k0 + w0) & mask
        k1 = (k1 + w1) & mask
    return c


def dropout_keep(seed, n, stream, rate):
    idx = np.arange(n, dtype=np.uint64)
    seed &= (1 << 64) - 1
    words = philox4x32_10(idx & np.uint64(0xFFFFFFFF), idx >> np.uint64(32),
                          np.full(n, stream, dtype=np.uint64),
                          np.zeros(n, dtype=np.uint64),
                          seed & 0xFFFFFFFF, seed >> 32)
    u = words[0].astype(np.float64) / 2.0**32
    return u >= rate


# ---------------------------------------------------------------------------
# numpy references of the ops (float64).
# ---------------------------------------------------------------------------

_erf = np.vectorize(math.erf, otypes=[np.float64])


def erf(x):
    return _erf(np.asarray(x, dtype=np.float64))


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def gelu_erf(x):
    return x * 0.5 * (1.0 + erf(x / math.sqrt(2.0)))


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


def softmax(x, axis):
    m = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=axis, keepdims=True)


def log_softmax(x, axis):
    m = np.max(x, axis=axis, keepdims=True)
    return x - m - np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))


def logsumexp(x, axis):
    m = np.max(x, axis=axis, keepdims=True)
    return np.squeeze(m, axis) + np.log(np.sum(np.exp(x - m), axis=axis))


def layer_norm(x, g, b, eps):
    mean = x.mean(axis=-1)
    var = ((x - mean[..., None]) ** 2).mean(axis=-1)
    rstd = 1.0 / np.sqrt(var + eps)
    y = (x - mean[..., None]) * rstd[..., None] * g + b
    return y, mean, rstd


def rms_norm(x, g, eps):
    rstd = 1.0 / np.sqrt((x * x).sum(axis=-1) / x.shape[-1] + eps)
    return x * rstd[..., None] * g, rstd


def attention(q, k, v, causal, scale):
    B, H, Sq, D = q.shape
    K, Sk = k.shape[1], k.shape[2]
    group = H // K
    out = np.zeros((B, H, Sq, v.shape[3]))
    lse = np.zeros((B, H, Sq))
    for b in range(B):
        for h in range(H):
            kh = h // group
            s = scale * (q[b, h] @ k[b, kh].T)
            if causal:
                i = np.arange(Sq)[:, None]
                j = np.arange(Sk)[None, :]
                s = np.where(j <= i + Sk - Sq, s, -np.inf)
            l = logsumexp(s, 1)
            p = np.exp(s - l[:, None])
            out[b, h] = p @ v[b, kh]
            lse[b, h] = l
    return out, lse


def cross_entropy(logits, labels, reduction, ignore_index=None):
    C = logits.shape[-1]
    flat = logits.reshape(-1, C)
    lab = labels.reshape(-1)
    lse = logsumexp(flat, 1)
    keep = np.ones(lab.shape, bool) if ignore_index is None else lab != ignore_index
    losses = np.array([lse[t] - flat[t, lab[t]] for t in range(len(lab)) if keep[t]])
    total = losses.sum() if len(losses) else 0.0
    if reduction == "mean":
        loss = total / len(losses) if len(losses) else math.nan
    else:
        loss = total
    return np.float64(loss), lse.reshape(labels.shape)


def pad(x, low, high, interior):
    """Zeros before (low), after (high) and between (interior) the elements."""
    x = np.asarray(x)
    shape = [l + n + max(n - 1, 0) * i + h for n, l, h, i in zip(x.shape, low, high, interior)]
    out = np.zeros(shape, x.dtype)
    if x.ndim == 0:
        return x.copy()
    where = np.ix_(*[l + np.arange(n) * (i + 1) for n, l, i in zip(x.shape, low, interior)])
    out[where] = x
    return out


def gelu_erf_grad(x):
    # d/dx x * Phi(x) = Phi(x) + x * phi(x)
    return 0.5 * (1.0 + erf(x / math.sqrt(2.0))) + x * np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)


def gelu_tanh_grad(x):
    c = math.sqrt(2.0 / math.pi)
    t = np.tanh(c * (x + 0.044715 * x**3))
    return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * c * (1.0 + 3 * 0.044715 * x * x)


def softmax_grad(y, dy, axis):
    return y * (dy - np.sum(dy * y, axis=axis, keepdims=True))


def layer_norm_grad(dy, x, mean, rstd, g):
    """The spec's formulas, from the given statistics (not recomputed)."""
    lead = tuple(range(x.ndim - 1))
    xhat = (x - mean[..., None]) * rstd[..., None]
    gg = dy * g
    dx = rstd[..., None] * (gg - gg.mean(-1, keepdims=True) - xhat * (gg * xhat).mean(-1, keepdims=True))
    return dx, (dy * xhat).sum(lead), dy.sum(lead)


def rms_norm_grad(dy, x, rstd, g):
    lead = tuple(range(x.ndim - 1))
    xhat = x * rstd[..., None]
    gg = dy * g
    dx = rstd[..., None] * (gg - xhat * (gg * xhat).mean(-1, keepdims=True))
    return dx, (dy * xhat).sum(lead)


def attention_grad(do, q, k, v, o, lse, causal, scale, absolute=False):
    """dq, dk, dv from the spec's formulas, with p rebuilt from the given
    logsumexp. With absolute=True, the same sums over absolute values (the
    scale of the rounding errors)."""
    B, H, Sq, D = q.shape
    K, Sk = k.shape[1], k.shape[2]
    group = H // K
    f = np.abs if absolute else (lambda a: a)
    dq, dk, dv = np.zeros(q.shape), np.zeros(k.shape), np.zeros(v.shape)
    for b in range(B):
        for h in range(H):
            kh = h // group
            s = scale * (q[b, h] @ k[b, kh].T)
            p = np.exp(s - lse[b, h][:, None])
            if causal:
                i = np.arange(Sq)[:, None]
                j = np.arange(Sk)[None, :]
                p = np.where(j <= i + Sk - Sq, p, 0.0)
            dp = f(do[b, h]) @ f(v[b, kh]).T
            rowsum = np.sum(f(do[b, h] * o[b, h]), axis=1, keepdims=True)
            ds = p * (dp + rowsum) if absolute else p * (dp - rowsum)
            dq[b, h] = scale * ds @ f(k[b, kh])
            dk[b, kh] += scale * ds.T @ f(q[b, h])
            dv[b, kh] += p.T @ f(do[b, h])
    return dq, dk, dv


def embedding_grad(dy, ids, V):
    D = dy.shape[-1]
    out = np.zeros((V, D))
    np.add.at(out, ids.reshape(-1), dy.reshape(-1, D))
    return out


def cross_entropy_grad(dloss, logits, labels, lse, reduction, ignore_index=None):
    C = logits.shape[-1]
    flat = logits.reshape(-1, C)
    lab = labels.reshape(-1)
    keep = np.ones(lab.shape, bool) if ignore_index is None else lab != ignore_index
    n = int(keep.sum())
    w = np.float64(dloss) / n if reduction == "mean" else np.float64(dloss)  # n = 0: unused
    out = np.zeros(flat.shape)
    for t in range(len(lab)):
        if keep[t]:
            out[t] = w * (np.exp(flat[t] - lse.reshape(-1)[t]) - (np.arange(C) == lab[t]))
    return out.reshape(logits.shape)


def wrap(values, bits):
    """Python integers -> two's complement `bits`-bit integers."""
    m = 1 << bits
    out = [((int(v) + (m >> 1)) % m) - (m >> 1) for v in values]
    return np.array(out, dtype=np.int64 if bits == 64 else np.int32)


def int_div(a, b):
    q = abs(int(a)) // abs(int(b))
    return q if (a >= 0) == (b >= 0) else -q


def f2int(values, bits):
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    out = []
    for v in np.ravel(values):
        v = float(v)
        if math.isnan(v):
            out.append(0)
        elif v >= 2.0 ** (bits - 1):
            out.append(hi)
        elif v < -(2.0 ** (bits - 1)):
            out.append(lo)
        else:
            out.append(int(math.trunc(v)))
    return np.array(out, dtype=np.int64 if bits == 64 else np.int32).reshape(np.shape(values))


# ---------------------------------------------------------------------------
# MLIR text.
# ---------------------------------------------------------------------------

def tt(shape, et):
    return "tensor<" + "".join("%dx" % d for d in shape) + et + ">"


def flt(v):
    return "%.17e" % v


def func(args, body, rets, name="main"):
    """args: [(name, type[, role])]; rets: [(ssa, type, name)]."""
    sig = []
    for a in args:
        role = a[2] if len(a) > 2 else "input"
        sig.append('%%%s: %s {tg.role = "%s", tg.name = "%s"}' % (a[0], a[1], role, a[0]))
    res = ['%s {tg.role = "output", tg.name = "%s"}' % (r[1], r[2]) for r in rets]
    text = "func.func @%s(%s)\n    -> (%s) {\n" % (name, ",\n    ".join(sig), ", ".join(res))
    text += "".join("  %s\n" % line for line in body)
    text += "  return %s : %s\n}\n" % (", ".join(r[0] for r in rets), ", ".join(r[1] for r in rets))
    return text


def dense(values, et):
    a = np.asarray(values)

    def fmt(v):
        if et == "i1":
            return "true" if v else "false"
        if et.startswith("i"):
            return str(int(v))
        return flt(float(v))

    def rec(x):
        if x.ndim == 0:
            return fmt(x.item())
        return "[" + ", ".join(rec(s) for s in x) + "]"

    return "dense<%s>" % rec(a)


# ---------------------------------------------------------------------------
# Checkers: obs (the array read back) -> None, or a string saying what is wrong.
# ---------------------------------------------------------------------------

def _fmtv(v):
    if isinstance(v, (float, np.floating)):
        return "%.9g" % v
    return str(v)


def _mismatch(bad, obs, exp, extra=""):
    idx = np.argwhere(bad)
    n = len(idx)
    first = tuple(int(i) for i in idx[0]) if obs.ndim else ()
    o = obs[first] if obs.ndim else obs[()]
    e = exp[first] if exp.ndim else exp[()]
    return "%d/%d elements differ; first at %s: expected %s, got %s%s" % (
        n, obs.size, list(first), _fmtv(e), _fmtv(o), extra)


def _shape_dtype(obs, shape, dtype):
    if obs.dtype != np.dtype(dtype):
        return "written as %s, expected %s" % (obs.dtype, np.dtype(dtype))
    if tuple(obs.shape) != tuple(shape):
        return "shape %s, expected %s" % (tuple(obs.shape), tuple(shape))
    return None


def chk_exact(ref, dtype=None):
    ref = np.asarray(ref)
    dtype = np.dtype(dtype or ref.dtype)
    ref = ref.astype(dtype)

    def check(obs):
        err = _shape_dtype(obs, ref.shape, dtype)
        if err:
            return err
        if dtype.kind == "f":
            same = (obs == ref) | (np.isnan(obs) & np.isnan(ref))
        else:
            same = obs == ref
        if not np.all(same):
            return _mismatch(~same, obs, ref)
        return None

    return check


def chk_close(ref, rtol, atol, dtype=np.float32, scale=None):
    """|obs - ref| <= atol + rtol * (|ref| + scale); a reference that is not
    finite once rounded to `dtype` must be matched exactly."""
    ref = np.asarray(ref, dtype=np.float64)
    refc = ref.astype(dtype).astype(np.float64)
    tol = atol + rtol * np.abs(ref)
    if scale is not None:
        tol = tol + rtol * np.asarray(scale, dtype=np.float64)

    def check(obs):
        err = _shape_dtype(obs, ref.shape, dtype)
        if err:
            return err
        o = obs.astype(np.float64)
        nonfinite = ~np.isfinite(refc)
        bad = nonfinite & ~((o == refc) | (np.isnan(o) & np.isnan(refc)))
        with np.errstate(invalid="ignore"):
            bad |= ~nonfinite & ~(np.abs(o - ref) <= tol)
        if np.any(bad):
            with np.errstate(invalid="ignore"):
                worst = np.nanmax(np.where(~nonfinite, np.abs(o - ref), 0))
            return _mismatch(bad, o, ref, " (max abs err %.3g, rtol %g atol %g)" % (worst, rtol, atol))
        return None

    return check


def chk_lowp(ref64, fmt, ulps=1.0, atol=1e-6):
    """obs is a value of `fmt` (written as float32) within `ulps` ulps of
    `fmt` around the exact reference, or within `atol` of it (an op computed
    in f32 and rounded once can lose absolute accuracy ~1e-7 to cancellation
    in its formula, e.g. 1 + tanh(z) in the tail of gelu)."""
    ref = np.asarray(ref64, dtype=np.float64)

    def check(obs):
        err = _shape_dtype(obs, ref.shape, np.float32)
        if err:
            return err
        o = obs.astype(np.float64)
        rep = (round_to(o, fmt) == o) | np.isnan(o)
        if not np.all(rep):
            return _mismatch(~rep, o, round_to(ref, fmt), " (not a %s value)" % fmt)
        bad = ~(np.abs(o - ref) <= np.maximum(ulps * ulp_of(ref, fmt), atol))
        bad &= ~((o == ref) | (np.isnan(o) & np.isnan(ref)))
        if np.any(bad):
            return _mismatch(bad, o, ref, " (beyond %g %s ulp)" % (ulps, fmt))
        return None

    return check


class E:
    """An expected result for fcase: a float64 reference and how to check it.

    kind: 'close' (tolerance), 'exact' (data movement: bit-equal once
    rounded to the output type), 'int' / 'bool' (exact, with the reference's
    dtype in both modes)."""

    def __init__(self, ref, kind="close", rtol=1e-5, atol=1e-6, scale=None):
        self.ref, self.kind, self.rtol, self.atol, self.scale = ref, kind, rtol, atol, scale

    def checker(self, f64):
        if self.kind in ("int", "bool"):
            return chk_exact(self.ref)
        dtype = np.float64 if f64 else np.float32
        if self.kind == "exact":
            return chk_exact(np.asarray(self.ref, np.float64).astype(dtype))
        if f64:
            return chk_close(self.ref, 1e-12, 1e-12, np.float64, self.scale)
        return chk_close(self.ref, self.rtol, self.atol, np.float32, self.scale)


# ---------------------------------------------------------------------------
# Cases and runs.
# ---------------------------------------------------------------------------

MISSING = object()  # an --input path that does not exist


class Run:
    def __init__(self, mlir, inputs=None, flags=(), raw_inputs=(), mlir2=None):
        self.mlir = mlir
        self.inputs = inputs or {}  # name -> ndarray | bytes | MISSING
        self.flags = list(flags)
        self.raw_inputs = list(raw_inputs)  # verbatim --input values
        self.mlir2 = mlir2  # second file for --compare


class Result:
    pass


class Case:
    def __init__(self, name, runs, check):
        self.name, self.runs, self.check = name, runs, check


TGC = None
WORK = None


def execute(run, d):
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "f.mlir")
    with open(path, "w") as f:
        f.write(run.mlir)
    cmd = [TGC, "run", path]
    if run.mlir2 is not None:
        path2 = os.path.join(d, "g.mlir")
        with open(path2, "w") as f:
            f.write(run.mlir2)
        cmd += [path2, "--compare"]
    for name, value in run.inputs.items():
        p = os.path.join(d, "in_%s.npy" % name)
        if value is MISSING:
            p = os.path.join(d, "does_not_exist_%s.npy" % name)
        elif isinstance(value, bytes):
            with open(p, "wb") as f:
                f.write(value)
        else:
            np.save(p, value)
        cmd += ["--input", "%s=%s" % (name, p)]
    for spec in run.raw_inputs:
        cmd += ["--input", spec.replace("@DIR@", d)]
    out = os.path.join(d, "out")
    if run.mlir2 is None:
        cmd += ["--output-dir", out]
    cmd += run.flags
    r = Result()
    r.cmd = cmd
    r.out_dir = out
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        r.rc, r.stdout, r.stderr = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        r.rc, r.stdout, r.stderr = -999, "", "timed out"
    r.files = sorted(os.listdir(out)) if os.path.isdir(out) else []
    r.outputs = {}
    for fname in r.files:
        if fname.endswith(".npy"):
            try:
                r.outputs[fname[:-4]] = np.load(os.path.join(out, fname), allow_pickle=False)
            except Exception as e:  # noqa: BLE001
                r.outputs[fname[:-4]] = e
    return r


def _describe_failure(r):
    tail = r.stderr.strip().splitlines()
    tail = " | ".join(tail[-3:]) if tail else "(no stderr)"
    how = "killed by signal %d" % -r.rc if r.rc < 0 and r.rc != -999 else "exit status %d" % r.rc
    return "tgc failed (%s): %s" % (how, tail)


def check_outputs(r, checks):
    if r.rc != 0:
        return [_describe_failure(r)]
    errors = []
    for rname, chk in checks.items():
        obs = r.outputs.get(rname)
        if obs is None:
            errors.append("%s: no output file %s.npy (have %s)" % (rname, rname, r.files))
            continue
        if isinstance(obs, Exception):
            errors.append("%s: unreadable output: %s" % (rname, obs))
            continue
        err = chk(obs)
        if err:
            errors.append("%s: %s" % (rname, err))
    return errors


CASES = []


def add_case(name, mlir, inputs, checks, flags=()):
    run = Run(mlir, inputs, flags)
    CASES.append(Case(name, [run], lambda rs, c=checks: check_outputs(rs[0], c)))


def fcase(name, mlir, inputs, expected, flags=(), f64=True):
    """A case checked with f32 tolerances, and its --f64 twin."""
    add_case(name, mlir, inputs, {k: e.checker(False) for k, e in expected.items()}, flags)
    if f64:
        add_case(name + "[f64]", mlir, inputs,
                 {k: e.checker(True) for k, e in expected.items()}, list(flags) + ["--f64"])


def rng_for(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


NF = ["--allow-non-finite"]


# ---------------------------------------------------------------------------
# Self-tests of the oracle's own helpers (no tgc involved).
# ---------------------------------------------------------------------------

def selftests():
    out = []
    rng = np.random.default_rng(1)
    x = np.concatenate([
        rng.standard_normal(20000).astype(np.float32),
        (rng.standard_normal(5000) * 1e38).astype(np.float32),
        (rng.standard_normal(5000) * 1e-39).astype(np.float32),  # subnormals
        np.array([3.4028235e38, -3.4028235e38, 1.00390625, 1.01171875,
                  2.0**-134, 3 * 2.0**-134], np.float32)])
    a = round_to(x.astype(np.float64), "bf16")
    b = bf16_from_f32_bits(x)
    out.append(("selftest_bf16_rounding_two_ways",
                None if np.array_equal(a, b) else "round_to and the bit trick differ on %d values" % np.sum(a != b)))
    y = np.concatenate([rng.standard_normal(20000) * 1000, rng.standard_normal(5000) * 1e-6,
                        [65519.0, 65520.0, 2.0**-25, 3 * 2.0**-25, 70000.0]])
    y32 = y.astype(np.float32).astype(np.float64)
    a = round_to(y32, "f16")
    b = y32.astype(np.float16).astype(np.float64)
    out.append(("selftest_f16_rounding_vs_numpy",
                None if np.array_equal(a, b) else "round_to and numpy's float16 differ on %d values" % np.sum(a != b)))
    ints = [0, 1, -1, 2**24 + 1, 2**24 + 3, 257, 259, 16842753, 2**63 - 1, -2**63, 65519, 65520, 12345678901]
    bad = [n for n in ints if int_to_fmt(n, "f32") != float(np.float32(np.float64(n)))
           and abs(n) < 2**53]
    bad += [n for n in ints if int_to_fmt(n, "f64") != float(n)]
    out.append(("selftest_int_rounding", "mismatch for %s" % bad if bad else None))
    kat = [((0, 0, 0, 0, 0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
           ((0xFFFFFFFF,) * 6, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
           ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344, 0xA4093822, 0x299F31D0),
            (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1))]
    errs = []
    for inp, want in kat:
        got = tuple(int(w) for w in philox4x32_10(*inp))
        if got != want:
            errs.append("%s -> %s, want %s" % (inp, [hex(g) for g in got], [hex(w) for w in want]))
    out.append(("selftest_philox_known_answers", "; ".join(errs) or None))
    return out


# ---------------------------------------------------------------------------
# Elementwise ops.
# ---------------------------------------------------------------------------

def build_elementwise():
    S = (4, 6)

    def binary(op, a, b, ref, flags=(), tol=(1e-5, 1e-6), name=None, f64=True):
        shape = a.shape
        ty = tt(shape, "f32")
        m = func([("a", ty), ("b", ty)], ["%%r = tg.%s %%a, %%b : %s" % (op, ty)], [("%r", ty, "r")])
        fcase(name or op + "_f32", m, {"a": a, "b": b},
              {"r": E(ref, rtol=tol[0], atol=tol[1])}, flags, f64)

    def rnd(name, scale=1.0):
        return (rng_for(name).standard_normal(S) * scale).astype(np.float32)

    for op, fn in [("add", np.add), ("sub", np.subtract), ("mul", np.multiply)]:
        a, b = rnd(op + "a", 3), rnd(op + "b", 3)
        binary(op, a, b, fn(a.astype(np.float64), b.astype(np.float64)))

    a = rnd("diva", 3)
    bm = rng_for("divb").uniform(0.5, 2.0, S) * np.sign(rng_for("divs").standard_normal(S))
    b = bm.astype(np.float32)
    binary("div", a, b, a.astype(np.float64) / b)
    a = np.array([1, -1, 0, 5, -0.0, 7], np.float32)
    b = np.array([0, 0, 0, -0.0, 3, -2], np.float32)
    binary("div", a, b, np.array([np.inf, -np.inf, np.nan, -np.inf, -0.0, -3.5]), name="div_f32_by_zero")

    for op, fn in [("max", np.maximum), ("min", np.minimum)]:
        a, b = rnd(op + "a"), rnd(op + "b")
        binary(op, a, b, fn(a.astype(np.float64), b.astype(np.float64)))
        a = np.array([np.nan, 1, np.nan, -np.inf, 2, np.inf, -3], np.float32)
        b = np.array([1, np.nan, np.nan, 3, np.inf, -np.inf, -3], np.float32)
        binary(op, a, b, fn(a.astype(np.float64), b.astype(np.float64)), NF, name=op + "_f32_nan")

    a = rng_for("powa").uniform(0.1, 3.0, S).astype(np.float32)
    b = rng_for("powb").uniform(-2.0, 2.0, S).astype(np.float32)
    binary("pow", a, b, np.power(a.astype(np.float64), b.astype(np.float64)))
    # C pow special cases (C99 Annex F).
    sp = [(-2, 3, -8.0), (-2, 0.5, math.nan), (0, -1, math.inf), (-0.0, -1, -math.inf),
          (0, 2, 0.0), (0, 0, 1.0), (5, 0, 1.0), (1, 1e30, 1.0), (-8, 1 / 3, math.nan),
          (2, -3, 0.125), (-1, 2.0**30, 1.0), (4, 0.5, 2.0), (10, 50, math.inf),
          (np.nan, 0, 1.0), (1, np.nan, 1.0), (-1, np.inf, 1.0), (0.5, np.inf, 0.0),
          (2, -np.inf, 0.0), (np.inf, -1, 0.0), (np.nan, 2, math.nan)]
    a = np.array([s[0] for s in sp], np.float32)
    b = np.array([s[1] for s in sp], np.float32)
    ref = np.array([s[2] for s in sp])
    # pow(10, 50) is finite in f64: the reference is the exact value.
    ref[12] = 1e50
    binary("pow", a, b, ref, NF, name="pow_f32_special_cases")

    def unary(op, x, ref, flags=(), tol=(1e-5, 1e-6), name=None, attr=""):
        ty = tt(x.shape, "f32")
        m = func([("x", ty)], ["%%r = tg.%s %s%%x : %s" % (op, attr, ty)], [("%r", ty, "r")])
        fcase(name or (op if not attr else op + "_" + attr.strip()) + "_f32", m, {"x": x},
              {"r": E(ref, rtol=tol[0], atol=tol[1])}, flags)

    xs = (rng_for("unary").standard_normal(64) * 2.5).astype(np.float32)
    x64 = xs.astype(np.float64)
    pos = rng_for("unarypos").uniform(0.01, 20.0, 64).astype(np.float32)
    p64 = pos.astype(np.float64)
    tr = (2e-5, 2e-6)
    unary("neg", xs, -x64)
    unary("abs", xs, np.abs(x64))
    unary("exp", xs, np.exp(x64))
    unary("log", pos, np.log(p64))
    unary("sqrt", pos, np.sqrt(p64))
    unary("rsqrt", pos, 1 / np.sqrt(p64))
    unary("tanh", xs, np.tanh(x64), tol=tr)
    unary("erf", xs, erf(x64), tol=tr)
    unary("sigmoid", xs, sigmoid(x64), tol=tr)
    unary("sin", xs, np.sin(x64))
    unary("cos", xs, np.cos(x64))
    unary("relu", xs, np.maximum(x64, 0))
    unary("silu", xs, x64 * sigmoid(x64), tol=tr)
    unary("gelu", xs, gelu_erf(x64), tol=tr, attr="erf ")
    unary("gelu", xs, gelu_tanh(x64), tol=tr, attr="tanh ")
    # Edges: large arguments, domain errors, zeros.
    e = np.array([100.0, -200.0, 0.0, 88.0, -100.0, 20.0, -20.0, 5.0, -5.0, 1e-3, -1e-3], np.float32)
    e64 = e.astype(np.float64)
    unary("exp", e, np.exp(e64), name="exp_f32_edges")
    unary("tanh", e, np.tanh(e64), tol=tr, name="tanh_f32_edges")
    unary("erf", e, erf(e64), tol=tr, name="erf_f32_edges")
    unary("sigmoid", e, sigmoid(e64), tol=tr, name="sigmoid_f32_edges")
    unary("silu", e, e64 * sigmoid(e64), tol=tr, name="silu_f32_edges")
    unary("gelu", e, gelu_erf(e64), tol=tr, attr="erf ", name="gelu_erf_f32_edges")
    unary("gelu", e, gelu_tanh(e64), tol=tr, attr="tanh ", name="gelu_tanh_f32_edges")
    t = np.array([0.0, -0.0, np.pi, -np.pi / 2, 100.0, 1e4, -12345.678, 1e-20, 1e5], np.float32)
    t64 = t.astype(np.float64)
    unary("sin", t, np.sin(t64), name="sin_f32_edges")
    unary("cos", t, np.cos(t64), name="cos_f32_edges")
    d = np.array([-1.0, 0.0, -0.0, 1.0, 4.0, 1e-30, 1e30], np.float32)
    with np.errstate(all="ignore"):
        d64 = d.astype(np.float64)
        unary("log", d, np.log(d64), name="log_f32_domain")
        unary("sqrt", d, np.sqrt(d64), name="sqrt_f32_domain")
        unary("rsqrt", d, 1 / np.sqrt(d64), name="rsqrt_f32_domain")
    n = np.array([np.nan, -1.0, 2.0, -np.inf, np.inf, 0.0], np.float32)
    unary("relu", n, np.array([np.nan, 0, 2, 0, np.inf, 0]), NF, name="relu_f32_nonfinite")
    unary("abs", n, np.abs(n.astype(np.float64)), NF, name="abs_f32_nonfinite")
    unary("neg", n, -n.astype(np.float64), NF, name="neg_f32_nonfinite")
    unary("sigmoid", n, np.array([np.nan, sigmoid(-1.0), sigmoid(2.0), 0, 1, 0.5]), NF,
          name="sigmoid_f32_nonfinite")
    unary("tanh", n, np.tanh(n.astype(np.float64)), NF, name="tanh_f32_nonfinite")

    # Integer arithmetic: wrap-around, division toward zero.
    for et, bits, npt in [("i64", 64, np.int64), ("i32", 32, np.int32)]:
        r = rng_for("int" + et)
        big = (1 << (bits - 1)) - 1
        a = list(r.integers(-1000, 1000, 12)) + [big, -big - 1, big, 1 << (bits // 2 + 1), 7, -7, 7, -7, 0, 3037000500 if bits == 64 else 46341]
        b = list(r.integers(1, 1000, 12) * r.choice([-1, 1], 12)) + [1, -1, big, 1 << (bits // 2 + 1), 2, 2, -2, -2, 5, 3037000500 if bits == 64 else 46341]
        a = np.array(a, npt)
        b = np.array(b, npt)
        ty = tt(a.shape, et)
        ops = ["add", "sub", "mul", "div", "max", "min"]
        body = ["%%%s = tg.%s %%a, %%b : %s" % (o, o, ty) for o in ops]
        body += ["%%neg = tg.neg %%a : %s" % ty, "%%abs = tg.abs %%a : %s" % ty]
        rets = [("%" + o, ty, o) for o in ops + ["neg", "abs"]]
        A = [int(v) for v in a]
        B = [int(v) for v in b]
        # -MIN / MIN / -1: excluded from the reference of div (undefined);
        # the i64 MIN / -1 case is its own test below.
        exp = {
            "add": wrap([x + y for x, y in zip(A, B)], bits),
            "sub": wrap([x - y for x, y in zip(A, B)], bits),
            "mul": wrap([x * y for x, y in zip(A, B)], bits),
            "div": wrap([int_div(x, y) for x, y in zip(A, B)], bits),
            "max": np.maximum(a, b), "min": np.minimum(a, b),
            "neg": wrap([-x for x in A], bits), "abs": wrap([abs(x) for x in A], bits),
        }
        # MIN / -1 overflows: leave it out of this case.
        keep = [i for i in range(len(A)) if not (A[i] == -big - 1 and B[i] == -1)]
        a2, b2 = a[keep], b[keep]
        ty2 = tt(a2.shape, et)
        body = [s.replace(ty, ty2) for s in body]
        rets = [(s, ty2, n) for s, _, n in rets]
        m = func([("a", ty2), ("b", ty2)], body, rets)
        add_case("int_arith_" + et, m, {"a": a2, "b": b2},
                 {k: chk_exact(np.asarray(v)[keep]) for k, v in exp.items()})

    # INT64_MIN / -1: not defined by the spec; it must not crash tgc (either
    # the wrapped value or a reported error).
    ty = tt((1,), "i64")
    m = func([("a", ty), ("b", ty)], ["%%r = tg.div %%a, %%b : %s" % ty], [("%r", ty, "r")])

    def min_div_check(rs):
        r = rs[0]
        if r.rc == 0:
            o = r.outputs.get("r")
            if o is None or o.tolist() != [-(1 << 63)]:
                return ["expected the wrapped value -2^63, got %s" % (None if o is None else o.tolist())]
            return []
        if r.rc == 1 and "error" in r.stderr:
            return []
        return [_describe_failure(r)]

    CASES.append(Case("div_i64_min_by_minus_one_no_crash",
                      [Run(m, {"a": np.array([-(1 << 63)], np.int64), "b": np.array([-1], np.int64)})],
                      min_div_check))

    # select
    r = rng_for("select")
    p = r.random((3, 5)) < 0.5
    a = r.standard_normal((3, 5)).astype(np.float32)
    b = r.standard_normal((3, 5)).astype(np.float32)
    for et, av, bv in [("f32", a, b), ("i64", (a * 100).astype(np.int64), (b * 100).astype(np.int64)),
                       ("i32", (a * 100).astype(np.int32), (b * 100).astype(np.int32)),
                       ("i1", a > 0, b > 0)]:
        ty = tt((3, 5), et)
        m = func([("p", tt((3, 5), "i1")), ("a", ty), ("b", ty)],
                 ["%%r = tg.select %%p, %%a, %%b : %s, %s" % (tt((3, 5), "i1"), ty)], [("%r", ty, "r")])
        ref = np.where(p, av, bv)
        if et == "f32":
            fcase("select_f32", m, {"p": p, "a": av, "b": bv}, {"r": E(ref, "exact")})
        else:
            add_case("select_" + et, m, {"p": p, "a": av, "b": bv}, {"r": chk_exact(ref)})

    # compare: every direction, ordered comparisons with NaN.
    dirs = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
            "gt": np.greater, "ge": np.greater_equal}
    lhs = np.array([1, 2, 3, np.nan, 1, np.nan, -0.0, np.inf, -np.inf, 5, -1e-45, 2], np.float32)
    rhs = np.array([1, 3, 2, 1, np.nan, np.nan, 0.0, np.inf, 1, np.inf, 0, 2.0000002], np.float32)
    r = rng_for("compare")
    lhs = np.concatenate([lhs, r.integers(-3, 3, 20).astype(np.float32)])
    rhs = np.concatenate([rhs, r.integers(-3, 3, 20).astype(np.float32)])
    ty = tt(lhs.shape, "f32")
    bt = tt(lhs.shape, "i1")
    for d, fn in dirs.items():
        m = func([("a", ty), ("b", ty)], ["%%r = tg.compare %s, %%a, %%b : %s" % (d, ty)], [("%r", bt, "r")])
        with np.errstate(invalid="ignore"):
            ref = fn(lhs, rhs)
        fcase("compare_%s_f32_nan" % d, m, {"a": lhs, "b": rhs}, {"r": E(ref, "bool")}, NF)
    for et, npt in [("i64", np.int64), ("i32", np.int32)]:
        a = np.concatenate([r.integers(-3, 3, 20), [np.iinfo(npt).min, np.iinfo(npt).max, -1]]).astype(npt)
        b = np.concatenate([r.integers(-3, 3, 20), [np.iinfo(npt).max, np.iinfo(npt).min, 1]]).astype(npt)
        ty = tt(a.shape, et)
        bt = tt(a.shape, "i1")
        body = ["%%%s = tg.compare %s, %%a, %%b : %s" % (d, d, ty) for d in dirs]
        m = func([("a", ty), ("b", ty)], body, [("%" + d, bt, d) for d in dirs])
        add_case("compare_all_directions_" + et, m, {"a": a, "b": b},
                 {d: chk_exact(fn(a, b)) for d, fn in dirs.items()})


# ---------------------------------------------------------------------------
# convert
# ---------------------------------------------------------------------------

def conv_module(src_et, dst_et, shape):
    s, d = tt(shape, src_et), tt(shape, dst_et)
    return func([("x", s)], ["%%r = tg.convert %%x : %s -> %s" % (s, d)], [("%r", d, "r")])


def build_convert():
    r = rng_for("convert")
    rnd = np.concatenate([r.standard_normal(40) * 10, r.standard_normal(20) * 1e-3, r.standard_normal(20) * 1e4])

    def f2f(name, src_et, dst_et, values, flags=(), npt=np.float32):
        x = np.asarray(values, dtype=np.float64)
        xin = x.astype(npt)
        exact_in = xin.astype(np.float64)
        ref = round_to(exact_in, dst_et)
        dt = np.float64 if dst_et == "f64" else np.float32
        add_case(name, conv_module(src_et, dst_et, xin.shape), {"x": xin}, {"r": chk_exact(ref, dt)}, flags)

    # f32 -> bf16: ties to even, overflow to inf, subnormals.
    bfmax = (2 - 2.0**-7) * 2.0**127
    sp = [1 + 2.0**-8, 1 + 3 * 2.0**-8, -(1 + 2.0**-8), 1 + 2.0**-8 + 2.0**-20, bfmax, bfmax + 2.0**119,
          -(bfmax + 2.0**119), bfmax + 2.0**119 - 2.0**104, 3.4028234663852886e38, 3e38, 2.0**-134, 3 * 2.0**-134,
          2.0**-130 + 2.0**-140, 2.0**-126, 2.0**-133, 0.0, -0.0, 1e-45]
    f2f("convert_f32_to_bf16", "f32", "bf16", np.concatenate([rnd, sp]))
    f2f("convert_f32_to_bf16_nonfinite", "f32", "bf16", [np.nan, np.inf, -np.inf, 1.0], flags=NF)
    sp = [65519.0, 65520.0, -65520.0, 65504.0, 70000.0, 1e10, 2.0**-25, 3 * 2.0**-25, 2.0**-24, -(2.0**-25),
          1e-8, 1 + 2.0**-11, 1 + 3 * 2.0**-11, 2.0**-14, 2.0**-14 - 2.0**-25, 0.1]
    f2f("convert_f32_to_f16", "f32", "f16", np.concatenate([rnd, sp]))
    f2f("convert_f32_to_f16_nonfinite", "f32", "f16", [np.nan, np.inf, -np.inf], flags=NF)
    sp = [465.0, 464.0, 448.0, -465.0, -464.0, 500.0, 1e6, 480.0, 2.0**-9, 2.0**-10, 3 * 2.0**-10,
          2.0**-6, 1.0625, 1.1875, -1.0625, 0.0, 2.0**-11, 7 * 2.0**-10, 240.0, 0.3]
    f2f("convert_f32_to_f8E4M3FN", "f32", "f8E4M3FN", np.concatenate([rnd[:60] * 3, sp]))
    f2f("convert_f32_to_f8E4M3FN_inf_to_nan", "f32", "f8E4M3FN", [np.inf, -np.inf, np.nan, 1.0], flags=NF)
    sp = [61440.0, 61439.0, 57344.0, -61440.0, 65536.0, 2.0**-16, 2.0**-17, 3 * 2.0**-17, 2.0**-14,
          1.125, 1.375, -1.125, 0.0, 5 * 2.0**-17, 0.3, 1e5]
    f2f("convert_f32_to_f8E5M2", "f32", "f8E5M2", np.concatenate([rnd * 10, sp]))
    f2f("convert_f32_to_f8E5M2_nonfinite", "f32", "f8E5M2", [np.inf, -np.inf, np.nan], flags=NF)

    # Widening, and conversions between low-precision types.
    bvals = round_to(np.concatenate([rnd, [2.0**-133, bfmax, 1e5, 1e-10, 65504.0, 65520.0]]), "bf16")
    f2f("convert_bf16_to_f32", "bf16", "f32", bvals)
    f2f("convert_bf16_to_f16", "bf16", "f16", bvals)
    hvals = round_to(np.concatenate([rnd, [1 + 2.0**-10, 1 + 3 * 2.0**-10, 65504.0, 2.0**-24]]), "f16")
    f2f("convert_f16_to_bf16", "f16", "bf16", hvals, npt=np.float16)
    f2f("convert_f16_to_f32", "f16", "f32", hvals, npt=np.float16)
    f2f("convert_f16_to_f8E4M3FN", "f16", "f8E4M3FN", hvals, npt=np.float16)
    e5 = round_to(np.concatenate([rnd, [57344.0, 0.875, 3 * 2.0**-16, 2.0**-16, 448.0, 480.0]]), "f8E5M2")
    f2f("convert_f8E5M2_to_f8E4M3FN", "f8E5M2", "f8E4M3FN", e5)
    f2f("convert_f8E5M2_to_f32", "f8E5M2", "f32", e5)
    e4 = round_to(np.concatenate([np.clip(rnd, -448, 448), [448.0, 2.0**-9, 0.875]]), "f8E4M3FN")
    f2f("convert_f8E4M3FN_to_bf16", "f8E4M3FN", "bf16", e4)
    f2f("convert_f8E4M3FN_to_f16", "f8E4M3FN", "f16", e4)
    f2f("convert_f32_to_f64", "f32", "f64", np.concatenate([rnd, [3.4028234663852886e38, 1e-45]]))
    d = [1 + 2.0**-24, 1 + 3 * 2.0**-24, 1 + 2.0**-24 + 2.0**-50, 1e39, -1e39, 1e-46, 2.0**-150,
         3 * 2.0**-150, 0.1, 1 / 3, 3.4028235677973366e38, 3.4028235677973362e38]
    f2f("convert_f64_to_f32", "f64", "f32", np.concatenate([rnd / 3, d]), npt=np.float64)
    # One rounding from f64, not two (via f32): 1 + 2^-8 + 2^-30 is just above
    # the bf16 tie, but rounds to the tie 1 + 2^-8 in f32.
    f2f("convert_f64_to_bf16_single_rounding", "f64", "bf16",
        [1 + 2.0**-8 + 2.0**-30, 1 + 2.0**-8, -(1 + 2.0**-8 + 2.0**-30), 1 + 3 * 2.0**-8 - 2.0**-40, 0.1],
        npt=np.float64)
    f2f("convert_f64_to_f16_single_rounding", "f64", "f16",
        [1 + 2.0**-11 + 2.0**-40, 1 + 2.0**-11, 65519.99999999, 65520.0], npt=np.float64)
    f2f("convert_f64_to_f8E4M3FN_single_rounding", "f64", "f8E4M3FN",
        [1 + 2.0**-4 + 2.0**-30, 464.0000000001, 464.0], npt=np.float64)

    # float -> int: toward zero, saturating, NaN -> 0.
    fi = np.array([2.7, -2.7, 0.5, -0.5, 0.0, -0.0, 1e10, -1e10, 2147483520.0, 2.0**31, -(2.0**31),
                   -2147483904.0, 1e20, -1e20, 2.0**62, 9.2233715e18, -(2.0**63), 123456.78, 3e38,
                   np.nan, np.inf, -np.inf], np.float32)
    for et, bits in [("i32", 32), ("i64", 64)]:
        add_case("convert_f32_to_%s" % et, conv_module("f32", et, fi.shape), {"x": fi},
                 {"r": chk_exact(f2int(fi, bits))}, NF)
    fd = np.array([2.0**53 + 2, -(2.0**53) - 2, 2.0**63, -(2.0**63), 9.2233720368547748e18, 1.9999999999, -1.9999999999,
                   2147483647.9, -2147483648.9, np.nan], np.float64)
    for et, bits in [("i32", 32), ("i64", 64)]:
        add_case("convert_f64_to_%s" % et, conv_module("f64", et, fd.shape), {"x": fd},
                 {"r": chk_exact(f2int(fd, bits))}, NF)
    bv = round_to([2.5, -2.5, 300.0, 3e38, -3e38, 0.99], "bf16")
    add_case("convert_bf16_to_i32", conv_module("bf16", "i32", bv.shape), {"x": bv.astype(np.float32)},
             {"r": chk_exact(f2int(bv, 32))})
    hv = np.array([2.5, -2.5, 65504.0, -65504.0, 0.99], np.float16)
    add_case("convert_f16_to_i64", conv_module("f16", "i64", hv.shape), {"x": hv},
             {"r": chk_exact(f2int(hv.astype(np.float64), 64))})

    # int -> float: nearest even, in one rounding.
    iv = [0, 1, -1, 2**24 + 1, 2**24 + 3, -(2**24 + 1), 2**63 - 1, -(2**63), 123, 16842753, 257, 259,
          -257, 65519, 65520, 70000, 2049, 2051, 2**53 + 1, 2**53 + 3, 2**31 - 1, 12345678901]
    for dst in ["f32", "bf16", "f16", "f64", "f8E4M3FN", "f8E5M2"]:
        ref = np.array([int_to_fmt(n, dst) for n in iv])
        add_case("convert_i64_to_%s" % dst, conv_module("i64", dst, (len(iv),)), {"x": np.array(iv, np.int64)},
                 {"r": chk_exact(ref, np.float64 if dst == "f64" else np.float32)})
    iv32 = [0, 1, -1, 2**24 + 1, 2**24 + 3, 2**31 - 1, -(2**31), 16842753, 257, 259, 65520]
    for dst in ["f32", "bf16", "f16"]:
        ref = np.array([int_to_fmt(n, dst) for n in iv32])
        add_case("convert_i32_to_%s" % dst, conv_module("i32", dst, (len(iv32),)),
                 {"x": np.array(iv32, np.int32)}, {"r": chk_exact(ref, np.float32)})
    add_case("convert_i32_to_i64", conv_module("i32", "i64", (len(iv32),)), {"x": np.array(iv32, np.int32)},
             {"r": chk_exact(np.array(iv32, np.int64))})

    # to and from i1.
    fb = np.array([0.0, -0.0, 1e-45, -3.0, 0.5, np.nan, np.inf, -np.inf], np.float32)
    add_case("convert_f32_to_i1", conv_module("f32", "i1", fb.shape), {"x": fb}, {"r": chk_exact(fb != 0)}, NF)
    bb = round_to([0.0, -0.0, 2.0**-133, 1.0], "bf16")
    add_case("convert_bf16_to_i1", conv_module("bf16", "i1", bb.shape), {"x": bb.astype(np.float32)},
             {"r": chk_exact(bb != 0)})
    for et, npt in [("i64", np.int64), ("i32", np.int32)]:
        v = np.array([0, 5, -1, np.iinfo(npt).min, np.iinfo(npt).max], npt)
        add_case("convert_%s_to_i1" % et, conv_module(et, "i1", v.shape), {"x": v}, {"r": chk_exact(v != 0)})
    pb = np.array([True, False, True, True, False])
    for dst, dt in [("f32", np.float32), ("bf16", np.float32), ("f16", np.float32), ("f8E4M3FN", np.float32),
                    ("f64", np.float64), ("i64", np.int64), ("i32", np.int32)]:
        add_case("convert_i1_to_%s" % dst, conv_module("i1", dst, pb.shape), {"x": pb},
                 {"r": chk_exact(pb.astype(dt))})

    # Inputs of low-precision arguments are rounded to the type on reading.
    vals = np.concatenate([rnd, [1 + 2.0**-8, 1 + 3 * 2.0**-8, 2.0**-134, 3 * 2.0**-134]]).astype(np.float32)
    add_case("input_rounding_bf16", conv_module("bf16", "f32", vals.shape), {"x": vals},
             {"r": chk_exact(round_to(vals.astype(np.float64), "bf16"), np.float32)})
    vals = np.concatenate([rnd, [1 + 2.0**-11, 1 + 3 * 2.0**-11, 2.0**-25, 3 * 2.0**-25]]).astype(np.float32)
    add_case("input_rounding_f16_from_float32", conv_module("f16", "f32", vals.shape), {"x": vals},
             {"r": chk_exact(round_to(vals.astype(np.float64), "f16"), np.float32)})
    vals = np.array([1.0625, 1.1875, 464.0, 0.3, 2.0**-10, 3 * 2.0**-10, -100.0], np.float32)
    add_case("input_rounding_f8E4M3FN", conv_module("f8E4M3FN", "f32", vals.shape), {"x": vals},
             {"r": chk_exact(round_to(vals.astype(np.float64), "f8E4M3FN"), np.float32)})
    vals = np.array([1.125, 1.375, 61439.0, 0.3, 2.0**-17, 3 * 2.0**-17], np.float32)
    add_case("input_rounding_f8E5M2", conv_module("f8E5M2", "f32", vals.shape), {"x": vals},
             {"r": chk_exact(round_to(vals.astype(np.float64), "f8E5M2"), np.float32)})
    vals = np.array([0.1, 1 / 3, 1e300], np.float64)
    add_case("input_f64_from_float64",
             func([("x", tt((3,), "f64"))], ["%r = tg.neg %x : tensor<3xf64>"], [("%r", "tensor<3xf64>", "r")]),
             {"x": vals}, {"r": chk_exact(-vals)})
    vals32 = np.array([0.1, 1 / 3, 3e38], np.float32)
    add_case("input_f64_from_float32",
             func([("x", tt((3,), "f64"))], ["%r = tg.neg %x : tensor<3xf64>"], [("%r", "tensor<3xf64>", "r")]),
             {"x": vals32}, {"r": chk_exact(-vals32.astype(np.float64))})
    add_case("input_i64_from_int32",
             func([("x", tt((3,), "i64"))], ["%r = tg.neg %x : tensor<3xi64>"], [("%r", "tensor<3xi64>", "r")]),
             {"x": np.array([1, -2, 2**31 - 1], np.int32)}, {"r": chk_exact(np.array([-1, 2, -(2**31 - 1)], np.int64))})
    add_case("input_i32_from_int64_in_range",
             func([("x", tt((3,), "i32"))], ["%r = tg.neg %x : tensor<3xi32>"], [("%r", "tensor<3xi32>", "r")]),
             {"x": np.array([1, -2, 2**31 - 1], np.int64)}, {"r": chk_exact(np.array([-1, 2, -(2**31 - 1)], np.int32))})


# ---------------------------------------------------------------------------
# Precision emulation.
# ---------------------------------------------------------------------------

def build_precision():
    def prog(et, ops, shape):
        ty = tt(shape, et)
        body, rets = [], []
        for o in ops:
            if o in ("add", "mul", "sub", "div"):
                body.append("%%%s = tg.%s %%a, %%b : %s" % (o, o, ty))
            else:
                body.append("%%%s = tg.%s %%a : %s" % (o, o, ty))
            rets.append(("%" + o, ty, o))
        return func([("a", ty), ("b", ty)], body, rets)

    bfmax = (2 - 2.0**-7) * 2.0**127
    r = rng_for("pe")
    ra = round_to(r.standard_normal(40) * 4, "bf16")
    rb = round_to(r.standard_normal(40) * 4, "bf16")
    # (a, b) pairs, bf16-exact: ties, overflow, subnormal products.
    pairs = [(1.0, 2.0**-8), (1.0, 3 * 2.0**-8), (-1.0, -(2.0**-8)), (bfmax, 2.0**119), (-bfmax, -(2.0**119)),
             (round_to(3e38, "bf16")[()], 2.0), (1.5 * 2.0**-120, 2.0**-14), (2.0**-120, 2.0**-14),
             (1.5 * 2.0**-120, 2.0**-13), (2.0**-126, -(2.0**-133)), (256.0, 1.0), (256.0, 3.0), (3.0, 1 / 3.0)]
    a = np.concatenate([ra, [round_to(p[0], "bf16")[()] for p in pairs]])
    b = np.concatenate([rb, [round_to(p[1], "bf16")[()] for p in pairs]])
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    m = prog("bf16", ["add", "mul", "sub", "div", "exp"], a.shape)
    with np.errstate(all="ignore"):
        ref32 = {"add": f32(a32 + b32), "mul": f32(a32 * b32), "sub": f32(a32 - b32),
                 "div": f32(a.astype(np.float64) / b), "exp": f32(np.exp(a))}
    add_case("precision_bf16_arith_rounded", m, {"a": a32, "b": b32},
             {k: chk_exact(round_to(v, "bf16"), np.float32) for k, v in ref32.items()})
    # Off: the same program keeps f32 values (exp: f32 accuracy).
    add_case("precision_emulation_off_bf16", m, {"a": a32, "b": b32},
             {"add": chk_exact(ref32["add"], np.float32), "mul": chk_exact(ref32["mul"], np.float32),
              "sub": chk_exact(ref32["sub"], np.float32),
              "div": chk_close(a.astype(np.float64) / b, 1e-6, 1e-30),
              "exp": chk_close(np.exp(a), 2e-6, 1e-30)},
             ["--precision-emulation", "off"])
    # Every op rounds: (1 + 2^-8) + 2^-8 is 1 in bf16, 1 + 2^-7 if rounded once.
    ty = tt((2,), "bf16")
    m2 = func([("a", ty), ("b", ty)], ["%s = tg.add %%a, %%b : %s" % ("%s1", ty), "%%s2 = tg.add %%s1, %%b : %s" % ty],
              [("%s2", ty, "r")])
    av = np.array([1.0, 256.0], np.float32)
    bv = np.array([2.0**-8, 1.0], np.float32)
    add_case("precision_bf16_rounds_after_every_op", m2, {"a": av, "b": bv},
             {"r": chk_exact(np.array([1.0, 256.0]), np.float32)})
    add_case("precision_bf16_off_no_rounding", m2, {"a": av, "b": bv},
             {"r": chk_exact(np.array([1 + 2.0**-7, 258.0]), np.float32)}, ["--precision-emulation", "off"])

    # --f64 holds every float in double, without rounding, even bf16.
    add_case("precision_f64_mode_keeps_double", m2, {"a": av, "b": bv},
             {"r": chk_exact(np.array([1 + 2.0**-7, 258.0]), np.float64)}, ["--f64"])

    # f16: overflow to inf, subnormal ties.
    pairs = [(65504.0, 16.0), (65504.0, 8.0), (-65504.0, -16.0), (2.0**-12, 2.0**-13), (3 * 2.0**-12, 2.0**-13),
             (2.0**-24, 2.0**-24), (1.0, 2.0**-11), (1.0, 3 * 2.0**-11), (300.0, 300.0)]
    ha = np.concatenate([round_to(r.standard_normal(30) * 10, "f16"), [p[0] for p in pairs]]).astype(np.float16)
    hb = np.concatenate([round_to(r.standard_normal(30) * 10, "f16"), [p[1] for p in pairs]]).astype(np.float16)
    h32a, h32b = ha.astype(np.float32), hb.astype(np.float32)
    m = prog("f16", ["add", "mul"], ha.shape)
    add_case("precision_f16_arith_rounded", m, {"a": ha, "b": hb},
             {"add": chk_exact(round_to(f32(h32a + h32b), "f16"), np.float32),
              "mul": chk_exact(round_to(f32(h32a * h32b), "f16"), np.float32)})
    add_case("precision_emulation_off_f16", m, {"a": ha, "b": hb},
             {"add": chk_exact(f32(h32a + h32b), np.float32), "mul": chk_exact(f32(h32a * h32b), np.float32)},
             ["--precision-emulation", "off"])

    # f8: E4M3FN saturates to NaN, E5M2 overflows to inf.
    pairs = [(448.0, 16.0), (448.0, 32.0), (1.0, 0.0625), (1.0, 0.1875), (-448.0, -32.0), (2.0**-6, 2.0**-9),
             (0.5, 0.5), (2.0**-9, 2.0**-9), (3.0, 0.375)]
    fa = np.array([p[0] for p in pairs])
    fb = np.array([p[1] for p in pairs])
    m = prog("f8E4M3FN", ["add", "mul"], fa.shape)
    add_case("precision_f8E4M3FN_arith_rounded", m, {"a": fa.astype(np.float32), "b": fb.astype(np.float32)},
             {"add": chk_exact(round_to(f32(fa + fb), "f8E4M3FN"), np.float32),
              "mul": chk_exact(round_to(f32(fa * fb), "f8E4M3FN"), np.float32)})
    pairs = [(57344.0, 4096.0), (57344.0, 2048.0), (256.0, 256.0), (1.0, 0.125), (1.0, 0.375), (2.0**-16, 2.0**-16),
             (2.0**-8, 2.0**-9), (3.0, 0.5)]
    fa = np.array([p[0] for p in pairs])
    fb = np.array([p[1] for p in pairs])
    m = prog("f8E5M2", ["add", "mul"], fa.shape)
    add_case("precision_f8E5M2_arith_rounded", m, {"a": fa.astype(np.float32), "b": fb.astype(np.float32)},
             {"add": chk_exact(round_to(f32(fa + fb), "f8E5M2"), np.float32),
              "mul": chk_exact(round_to(f32(fa * fb), "f8E5M2"), np.float32)})

    # Transcendentals and normalizations in bf16: within one bf16 ulp of exact.
    x = round_to(r.standard_normal(64) * 2, "bf16")
    ty = tt(x.shape, "bf16")
    ops = ["tanh", "sigmoid", "erf", "silu", "sin", "cos", "log", "sqrt"]
    body = ["%%%s = tg.%s %%x : %s" % (o, o, ty) for o in ops if o not in ("log", "sqrt")]
    body += ["%%ax = tg.abs %%x : %s" % ty, "%%log = tg.log %%ax : %s" % ty, "%%sqrt = tg.sqrt %%ax : %s" % ty,
             "%%gelu = tg.gelu tanh %%x : %s" % ty]
    m = func([("x", ty)], body, [("%" + o, ty, o) for o in ops + ["gelu"]])
    ax = np.abs(x)
    refs = {"tanh": np.tanh(x), "sigmoid": sigmoid(x), "erf": erf(x), "silu": x * sigmoid(x),
            "sin": np.sin(x), "cos": np.cos(x),
            "log": np.log(ax), "sqrt": np.sqrt(ax), "gelu": gelu_tanh(x)}
    add_case("precision_bf16_transcendentals", m, {"x": x.astype(np.float32)},
             {k: chk_lowp(v, "bf16") for k, v in refs.items()})


# ---------------------------------------------------------------------------
# Shape ops.
# ---------------------------------------------------------------------------

def build_shape():
    r = rng_for("shape")
    # constant
    c1 = np.array([[1.5, -2.25, 0.0], [3.0, 1e-3, -1e30]])
    c2 = np.array([2**62, -(2**63), 5, -1], np.int64)
    c3 = np.array([True, False, True])
    c4 = np.array([7, -8, 2**31 - 1], np.int32)
    body = ["%%a = tg.constant %s : %s" % (dense(c1, "f32"), tt(c1.shape, "f32")),
            "%%b = tg.constant %s : %s" % (dense(c2, "i64"), tt(c2.shape, "i64")),
            "%%c = tg.constant %s : %s" % (dense(c3, "i1"), tt(c3.shape, "i1")),
            "%%d = tg.constant %s : %s" % (dense(c4, "i32"), tt(c4.shape, "i32")),
            "%%e = tg.constant dense<2.5> : %s" % tt((3, 2), "f32"),
            "%%f = tg.constant dense<[1.5, -2.0, 0.1]> : %s" % tt((3,), "f64"),
            "%%g = tg.constant dense<[1.5, -2.0, 448.0]> : %s" % tt((3,), "bf16"),
            "%%h = tg.constant dense<7> : %s" % tt((), "i64")]
    rets = [("%a", tt(c1.shape, "f32"), "a"), ("%b", tt(c2.shape, "i64"), "b"), ("%c", tt(c3.shape, "i1"), "c"),
            ("%d", tt(c4.shape, "i32"), "d"), ("%e", tt((3, 2), "f32"), "e"), ("%f", tt((3,), "f64"), "f"),
            ("%g", tt((3,), "bf16"), "g"), ("%h", tt((), "i64"), "h")]
    checks = {"a": chk_exact(f32(c1), np.float32), "b": chk_exact(c2), "c": chk_exact(c3), "d": chk_exact(c4),
              "e": chk_exact(np.full((3, 2), 2.5), np.float32), "f": chk_exact(np.array([1.5, -2.0, 0.1])),
              "g": chk_exact(np.array([1.5, -2.0, 448.0]), np.float32), "h": chk_exact(np.array(7, np.int64))}
    add_case("constant", func([], body, rets), {}, checks)
    add_case("constant[f64]", func([], body, rets), {},
             dict(checks, a=chk_exact(f32(c1)), e=chk_exact(np.full((3, 2), 2.5)),
                  g=chk_exact(np.array([1.5, -2.0, 448.0]))), ["--f64"])

    def mv(name, x, et, line, out_shape, ref):
        """A data-movement case: exact in both modes."""
        tin, tout = tt(x.shape, et), tt(out_shape, et)
        m = func([("x", tin)], ["%r = " + line.format(tin=tin, tout=tout)], [("%r", tout, "r")])
        if et == "f32":
            fcase(name, m, {"x": x}, {"r": E(ref, "exact")})
        else:
            add_case(name, m, {"x": x}, {"r": chk_exact(ref)})

    def bcast_ref(x, dims, out_shape):
        shp = [1] * len(out_shape)
        for i, d in enumerate(dims):
            shp[d] = x.shape[i]
        return np.broadcast_to(x.reshape(shp), out_shape).copy()

    for name, ishape, dims, oshape in [("scalar", (), [], (3, 4)), ("row", (4,), [1], (3, 4)),
                                       ("col", (3,), [0], (3, 4)), ("expand1", (2, 1, 4), [0, 1, 2], (2, 3, 4)),
                                       ("middle", (3,), [1], (2, 3, 4)), ("twodims", (1, 4), [0, 2], (3, 5, 4)),
                                       ("outer", (2, 3), [1, 2], (4, 2, 3))]:
        x = r.standard_normal(ishape).astype(np.float32)
        ref = bcast_ref(x, dims, oshape)
        mv("broadcast_in_dim_" + name, x, "f32", "tg.broadcast_in_dim %%x dims = %s : {tin} -> {tout}" % dims,
           oshape, ref)
    xi = r.integers(-100, 100, (3, 1)).astype(np.int64)
    mv("broadcast_in_dim_i64", xi, "i64", "tg.broadcast_in_dim %x dims = [0, 2] : {tin} -> {tout}", (3, 2, 5),
       bcast_ref(xi, [0, 2], (3, 2, 5)))
    xb = np.array([True, False])
    mv("broadcast_in_dim_i1", xb, "i1", "tg.broadcast_in_dim %x dims = [1] : {tin} -> {tout}", (3, 2),
       bcast_ref(xb, [1], (3, 2)))

    x = r.standard_normal((2, 3, 4)).astype(np.float32)
    for oshape in [(6, 4), (24,), (4, 3, 2), (1, 24, 1)]:
        mv("reshape_to_" + "x".join(map(str, oshape)), x, "f32", "tg.reshape %x : {tin} -> {tout}", oshape,
           x.reshape(oshape))
    mv("reshape_to_scalar", np.array([3.5], np.float32), "f32", "tg.reshape %x : {tin} -> {tout}", (),
       np.array(3.5))
    xi = r.integers(-9, 9, (4, 6)).astype(np.int64)
    mv("reshape_i64", xi, "i64", "tg.reshape %x : {tin} -> {tout}", (2, 12), xi.reshape(2, 12))

    for perm in [[1, 0, 2], [2, 0, 1], [0, 2, 1]]:
        out = tuple(x.shape[p] for p in perm)
        mv("transpose_" + "".join(map(str, perm)), x, "f32",
           "tg.transpose %%x perm = %s : {tin} -> {tout}" % perm, out, np.transpose(x, perm))
    x4 = r.standard_normal((2, 3, 4, 5)).astype(np.float32)
    mv("transpose_4d_0213", x4, "f32", "tg.transpose %x perm = [0, 2, 1, 3] : {tin} -> {tout}", (2, 4, 3, 5),
       np.transpose(x4, [0, 2, 1, 3]))
    mv("transpose_4d_3120", x4, "f32", "tg.transpose %x perm = [3, 1, 2, 0] : {tin} -> {tout}", (5, 3, 4, 2),
       np.transpose(x4, [3, 1, 2, 0]))
    xb = r.random((3, 4)) < 0.5
    mv("transpose_i1", xb, "i1", "tg.transpose %x perm = [1, 0] : {tin} -> {tout}", (4, 3), xb.T)

    x = r.standard_normal((8, 9)).astype(np.float32)

    def sl(name, x, et, ranges):
        txt = ", ".join("%d:%d:%d" % rg if len(rg) == 3 else "%d:%d" % rg for rg in ranges)
        idx = tuple(slice(*rg) for rg in ranges)
        ref = x[idx]
        mv(name, x, et, "tg.slice %%x [%s] : {tin} -> {tout}" % txt, ref.shape, ref)

    sl("slice_strided", x, "f32", [(1, 7, 2), (0, 9, 3)])
    sl("slice_strided_uneven", x, "f32", [(0, 8, 3), (2, 9, 4)])
    sl("slice_plain", x, "f32", [(2, 5), (1, 8)])
    sl("slice_full", x, "f32", [(0, 8), (0, 9)])
    sl("slice_last_elem", x, "f32", [(7, 8), (8, 9, 5)])
    x3 = r.standard_normal((3, 5, 7)).astype(np.float32)
    sl("slice_3d", x3, "f32", [(1, 3), (0, 5, 2), (6, 7)])
    sl("slice_i64", r.integers(-50, 50, (6, 4)).astype(np.int64), "i64", [(1, 6, 2), (1, 3)])

    def cc(name, xs, et, dim):
        args = [("x%d" % i, tt(v.shape, et)) for i, v in enumerate(xs)]
        ref = np.concatenate(xs, axis=dim)
        tout = tt(ref.shape, et)
        line = "%%r = tg.concat %s dim = %d : (%s) -> %s" % (
            ", ".join("%" + a[0] for a in args), dim, ", ".join(a[1] for a in args), tout)
        m = func(args, [line], [("%r", tout, "r")])
        inputs = {a[0]: v for a, v in zip(args, xs)}
        if et == "f32":
            fcase(name, m, inputs, {"r": E(ref, "exact")})
        else:
            add_case(name, m, inputs, {"r": chk_exact(ref)})

    cc("concat_dim1", [r.standard_normal((4, k)).astype(np.float32) for k in (2, 3, 1)], "f32", 1)
    cc("concat_dim0_3d", [r.standard_normal((k, 2, 3)).astype(np.float32) for k in (1, 2)], "f32", 0)
    cc("concat_dim2_3d", [r.standard_normal((2, 3, k)).astype(np.float32) for k in (4, 1, 2)], "f32", 2)
    cc("concat_i64", [r.integers(0, 9, (k, 3)).astype(np.int64) for k in (2, 2)], "i64", 0)
    cc("concat_i1", [r.random((2, k)) < 0.5 for k in (1, 3)], "i1", 1)

    def pd(name, x, et, low, high, interior, flags=()):
        ref = pad(x, low, high, interior)
        tin, tout = tt(x.shape, et), tt(ref.shape, et)
        m = func([("x", tin)], ["%%r = tg.pad %%x low = %s high = %s interior = %s : %s -> %s"
                                % (low, high, interior, tin, tout)], [("%r", tout, "r")])
        if et == "f32":
            fcase(name, m, {"x": x}, {"r": E(ref, "exact")}, flags)
        elif et in ("bf16", "f16"):
            add_case(name, m, {"x": x.astype(np.float32)}, {"r": chk_exact(ref, np.float32)}, flags)
        else:
            add_case(name, m, {"x": x}, {"r": chk_exact(ref)}, flags)

    x = r.standard_normal((2, 3)).astype(np.float32)
    pd("pad_low_high_interior", x, "f32", [1, 0], [0, 2], [0, 1])
    pd("pad_low_only", x, "f32", [2, 1], [0, 0], [0, 0])
    pd("pad_high_only", x, "f32", [0, 0], [3, 1], [0, 0])
    pd("pad_interior_only", x, "f32", [0, 0], [0, 0], [2, 3])
    pd("pad_zero_is_identity", x, "f32", [0, 0], [0, 0], [0, 0])
    pd("pad_3d", r.standard_normal((2, 3, 4)).astype(np.float32), "f32", [0, 2, 1], [1, 0, 3], [2, 0, 1])
    pd("pad_size1_dim_interior", r.standard_normal((1, 3)).astype(np.float32), "f32", [1, 0], [1, 0], [5, 1])
    pd("pad_zero_size_dim", np.zeros((0, 3), np.float32), "f32", [2, 1], [1, 0], [3, 2])
    pd("pad_zero_size_dim_no_padding", np.zeros((2, 0), np.float32), "f32", [0, 0], [0, 0], [1, 0])
    pd("pad_zero_size_inner_dim", np.zeros((2, 0, 2), np.float32), "f32", [1, 2, 0], [0, 1, 1], [1, 4, 1])
    pd("pad_scalar", np.array(2.5, np.float32), "f32", [], [], [])
    pd("pad_nan_inf", np.array([np.nan, -np.inf, np.inf, -0.0], np.float32), "f32", [1], [1], [1], NF)
    pd("pad_i64", r.integers(-(2**62), 2**62, (3, 2)).astype(np.int64), "i64", [1, 0], [0, 2], [1, 1])
    pd("pad_i32", r.integers(-(2**31), 2**31 - 1, (2, 2, 2)).astype(np.int32), "i32", [0, 1, 0], [1, 0, 0], [0, 0, 2])
    pd("pad_i64_zero_size", np.zeros((0,), np.int64), "i64", [2], [3], [1])
    pd("pad_i1", r.random((2, 3)) < 0.5, "i1", [1, 1], [0, 1], [1, 0])
    pd("pad_bf16", round_to(r.standard_normal((3, 2)), "bf16"), "bf16", [0, 1], [2, 0], [1, 1])


# ---------------------------------------------------------------------------
# Reductions.
# ---------------------------------------------------------------------------

def build_reduce():
    r = rng_for("reduce")
    x = (r.standard_normal((3, 4, 5)) * 3).astype(np.float32)
    x64 = x.astype(np.float64)
    tin = tt(x.shape, "f32")
    for kind, fn in [("sum", np.sum), ("max", np.max), ("min", np.min), ("mean", np.mean)]:
        for dims in ([0], [1], [2], [0, 2], [1, 2], [0, 1, 2]):
            ref = fn(x64, axis=tuple(dims))
            scale = np.sum(np.abs(x64), axis=tuple(dims)) if kind == "sum" else (
                np.mean(np.abs(x64), axis=tuple(dims)) if kind == "mean" else None)
            tout = tt(ref.shape, "f32")
            m = func([("x", tin)], ["%%r = tg.reduce %s %%x dims = %s : %s -> %s" % (kind, dims, tin, tout)],
                     [("%r", tout, "r")])
            e = E(ref, "close", 1e-5, 1e-6, scale) if kind in ("sum", "mean") else E(ref, "exact")
            fcase("reduce_%s_dims%s_f32" % (kind, "".join(map(str, dims))), m, {"x": x}, {"r": e})
    for et, npt in [("i64", np.int64), ("i32", np.int32)]:
        xi = r.integers(-1000, 1000, (3, 4, 5)).astype(npt)
        xi[0, 0, 0] = np.iinfo(npt).max // 4
        tin_i = tt(xi.shape, et)
        body, rets, checks = [], [], {}
        for kind, fn in [("sum", np.sum), ("max", np.max), ("min", np.min)]:
            for dims in ([0], [2], [0, 1], [0, 1, 2]):
                ref = fn(xi.astype(np.int64), axis=tuple(dims)).astype(npt)
                n = "%s%s" % (kind, "".join(map(str, dims)))
                body.append("%%%s = tg.reduce %s %%x dims = %s : %s -> %s" % (n, kind, dims, tin_i,
                                                                                tt(ref.shape, et)))
                rets.append(("%" + n, tt(ref.shape, et), n))
                checks[n] = chk_exact(ref)
        add_case("reduce_int_" + et, func([("x", tin_i)], body, rets), {"x": xi}, checks)
    # Empty reductions (a 3x0 slice): sum 0, max lowest, min highest.
    for et, npt, lo, hi in [("f32", np.float32, -np.inf, np.inf),
                            ("i64", np.int64, np.iinfo(np.int64).min, np.iinfo(np.int64).max),
                            ("i32", np.int32, np.iinfo(np.int32).min, np.iinfo(np.int32).max)]:
        xe = np.ones((3, 4), npt)
        t0, te, t3 = tt((3, 4), et), tt((3, 0), et), tt((3,), et)
        body = ["%%e = tg.slice %%x [0:3, 2:2] : %s -> %s" % (t0, te)]
        for kind in ("sum", "max", "min"):
            body.append("%%%s = tg.reduce %s %%e dims = [1] : %s -> %s" % (kind, kind, te, t3))
        m = func([("x", t0)], body, [("%" + k, t3, k) for k in ("sum", "max", "min")])
        add_case("reduce_empty_" + et, m, {"x": xe},
                 {"sum": chk_exact(np.zeros(3, npt)), "max": chk_exact(np.full(3, lo, npt)),
                  "min": chk_exact(np.full(3, hi, npt))})
    # bf16: accumulated in f32, rounded once (256 + 16 x 1 = 272, not 256).
    xb = np.array([[256.0] + [1.0] * 16, [1.0] * 16 + [256.0], [3.0] * 17])
    tb, to = tt(xb.shape, "bf16"), tt((3,), "bf16")
    m = func([("x", tb)], ["%%s = tg.reduce sum %%x dims = [1] : %s -> %s" % (tb, to),
                           "%%m = tg.reduce mean %%x dims = [1] : %s -> %s" % (tb, to),
                           "%%mx = tg.reduce max %%x dims = [1] : %s -> %s" % (tb, to)],
             [("%s", to, "sum"), ("%m", to, "mean"), ("%mx", to, "max")])
    add_case("reduce_bf16_accumulates_in_f32", m, {"x": xb.astype(np.float32)},
             {"sum": chk_exact(round_to(xb.sum(1), "bf16"), np.float32),
              "mean": chk_exact(round_to(f32(xb.sum(1) / 17), "bf16"), np.float32),
              "max": chk_exact(xb.max(1), np.float32)})
    xr = round_to(r.standard_normal((4, 32)), "bf16")
    tb, to = tt(xr.shape, "bf16"), tt((4,), "bf16")
    m = func([("x", tb)], ["%%s = tg.reduce sum %%x dims = [1] : %s -> %s" % (tb, to),
                           "%%m = tg.reduce mean %%x dims = [1] : %s -> %s" % (tb, to)],
             [("%s", to, "sum"), ("%m", to, "mean")])
    add_case("reduce_bf16_random", m, {"x": xr.astype(np.float32)},
             {"sum": chk_lowp(xr.sum(1), "bf16"), "mean": chk_lowp(xr.mean(1), "bf16")})


# ---------------------------------------------------------------------------
# Compute ops.
# ---------------------------------------------------------------------------

def build_compute():
    r = rng_for("compute")

    def mm(name, ashape, bshape, ta=False, tb=False, et="f32", out_et=None, values=None, check=None):
        out_et = out_et or et
        if values is None:
            a = r.standard_normal(ashape)
            b = r.standard_normal(bshape)
            if et != "f32":
                a, b = round_to(a, et), round_to(b, et)
            else:
                a, b = f32(a), f32(b)
        else:
            a, b = values
        A = np.swapaxes(a, -1, -2) if ta else a
        B = np.swapaxes(b, -1, -2) if tb else b
        ref = np.matmul(A, B)
        scale = np.matmul(np.abs(A), np.abs(B))
        flags = (" transpose_a" if ta else "") + (" transpose_b" if tb else "")
        t1, t2, t3 = tt(ashape, et), tt(bshape, et), tt(ref.shape, out_et)
        m = func([("a", t1), ("b", t2)], ["%%r = tg.matmul %%a, %%b%s : (%s, %s) -> %s" % (flags, t1, t2, t3)],
                 [("%r", t3, "r")])
        inputs = {"a": a.astype(np.float32), "b": b.astype(np.float32)}
        if et == "f32" and out_et == "f32":
            fcase(name, m, inputs, {"r": E(ref, "close", 1e-5, 1e-6, scale)})
        else:
            add_case(name, m, inputs, {"r": check(ref, scale) if check else chk_close(ref, 1e-5, 1e-6, np.float32, scale)})

    mm("matmul_f32", (5, 7), (7, 3))
    mm("matmul_f32_transpose_a", (7, 5), (7, 3), ta=True)
    mm("matmul_f32_transpose_b", (5, 7), (3, 7), tb=True)
    mm("matmul_f32_transpose_ab", (7, 5), (3, 7), ta=True, tb=True)
    mm("matmul_f32_batched", (2, 5, 7), (2, 7, 3))
    mm("matmul_f32_batched_4d_transpose_b", (2, 3, 4, 6), (2, 3, 5, 6), tb=True)
    mm("matmul_f32_batched_transpose_a", (2, 6, 4), (2, 6, 3), ta=True)
    mm("matmul_f32_shared_rhs", (2, 4, 7), (7, 3))
    mm("matmul_f32_shared_rhs_4d", (2, 3, 4, 7), (7, 5))
    mm("matmul_f32_shared_rhs_transpose_b", (2, 4, 7), (3, 7), tb=True)
    mm("matmul_f32_k1", (4, 1), (1, 3))
    mm("matmul_bf16_to_f32", (2, 6, 16), (16, 5), et="bf16", out_et="f32")
    mm("matmul_f16_to_f32", (6, 16), (16, 5), et="f16", out_et="f32")
    # bf16 -> bf16 with small integers: exact f32 sums, one rounding.
    a = r.integers(-8, 9, (6, 16)).astype(np.float64)
    a[0] = [256.0] + [1.0] * 15
    b = r.integers(-8, 9, (16, 4)).astype(np.float64)
    b[:, 0] = 1.0
    mm("matmul_bf16_rounded_once", (6, 16), (16, 4), et="bf16", values=(a, b),
       check=lambda ref, s: chk_exact(round_to(ref, "bf16"), np.float32))
    mm("matmul_bf16_random_to_bf16", (3, 4, 32), (32, 8), et="bf16",
       check=lambda ref, s: chk_lowp(ref, "bf16"))

    # embedding
    for et, npt in [("i64", np.int64), ("i32", np.int32)]:
        table = r.standard_normal((10, 4)).astype(np.float32)
        ids = r.integers(0, 10, (2, 3)).astype(npt)
        ids[0, 0], ids[1, 2] = 0, 9
        t1, t2, t3 = tt((10, 4), "f32"), tt((2, 3), et), tt((2, 3, 4), "f32")
        m = func([("t", t1), ("ids", t2)], ["%%r = tg.embedding %%t[%%ids] : (%s, %s) -> %s" % (t1, t2, t3)],
                 [("%r", t3, "r")])
        fcase("embedding_ids_" + et, m, {"t": table, "ids": ids}, {"r": E(table[ids], "exact")})
    table = round_to(r.standard_normal((7, 3)), "bf16")
    ids = np.array([6, 0, 3, 3], np.int64)
    t1, t2, t3 = tt((7, 3), "bf16"), tt((4,), "i64"), tt((4, 3), "bf16")
    m = func([("t", t1), ("ids", t2)], ["%%r = tg.embedding %%t[%%ids] : (%s, %s) -> %s" % (t1, t2, t3)],
             [("%r", t3, "r")])
    add_case("embedding_bf16", m, {"t": table.astype(np.float32), "ids": ids},
             {"r": chk_exact(table[ids], np.float32)})

    # softmax / log_softmax
    x = (r.standard_normal((3, 4, 5)) * 3).astype(np.float32)
    xl = (r.standard_normal((2, 6, 3)) * 40 + 100).astype(np.float32)  # needs the max subtraction
    for opname, fn in [("softmax", softmax), ("log_softmax", log_softmax)]:
        for tag, v, dim in [("last", x, 2), ("middle", x, 1), ("first", x, 0), ("large_middle", xl, 1)]:
            ty = tt(v.shape, "f32")
            m = func([("x", ty)], ["%%r = tg.%s %%x dim = %d : %s" % (opname, dim, ty)], [("%r", ty, "r")])
            fcase("%s_%s_f32" % (opname, tag), m, {"x": v}, {"r": E(fn(v.astype(np.float64), dim))})
        xi = np.array([[-np.inf, 0.0, 0.0, 1.0], [-np.inf, 5.0, -np.inf, 2.0]], np.float32)
        ty = tt(xi.shape, "f32")
        m = func([("x", ty)], ["%%r = tg.%s %%x dim = 1 : %s" % (opname, ty)], [("%r", ty, "r")])
        fcase("%s_f32_neg_inf_inputs" % opname, m, {"x": xi}, {"r": E(fn(xi.astype(np.float64), 1))}, NF)
        xb = round_to(r.standard_normal((4, 8)) * 3, "bf16")
        ty = tt(xb.shape, "bf16")
        m = func([("x", ty)], ["%%r = tg.%s %%x dim = 0 : %s" % (opname, ty)], [("%r", ty, "r")])
        add_case("%s_bf16" % opname, m, {"x": xb.astype(np.float32)}, {"r": chk_lowp(fn(xb, 0), "bf16")})

    # layer_norm
    def ln(name, x, g, b, eps, xet="f32", pet="f32"):
        tx, tp = tt(x.shape, xet), tt(g.shape, pet)
        ts = tt(x.shape[:-1], "f32")
        m = func([("x", tx), ("g", tp), ("b", tp)],
                 ["%%y, %%mean, %%rstd = tg.layer_norm %%x, %%g, %%b epsilon = %s : (%s, %s, %s) -> (%s, %s, %s)"
                  % (flt(eps), tx, tp, tp, tx, ts, ts)],
                 [("%y", tx, "y"), ("%mean", ts, "mean"), ("%rstd", ts, "rstd")])
        y, mean, rstd = layer_norm(x.astype(np.float64), g.astype(np.float64), b.astype(np.float64), eps)
        inputs = {"x": x.astype(np.float32), "g": g.astype(np.float32), "b": b.astype(np.float32)}
        if xet == "f32" and pet == "f32":
            fcase(name, m, inputs, {"y": E(y, atol=2e-5), "mean": E(mean, scale=np.abs(x).mean(-1)),
                                    "rstd": E(rstd)})
        else:
            add_case(name, m, inputs, {"y": chk_lowp(y, xet),
                                       "mean": chk_close(mean, 1e-5, 1e-6, np.float32, np.abs(x).mean(-1)),
                                       "rstd": chk_close(rstd, 1e-5, 1e-6)})

    ln("layer_norm_f32", (r.standard_normal((2, 3, 16)) * 2 + 1).astype(np.float32),
       r.standard_normal(16).astype(np.float32), r.standard_normal(16).astype(np.float32), 1e-5)
    ln("layer_norm_f32_big_eps", r.standard_normal((4, 8)).astype(np.float32),
       r.standard_normal(8).astype(np.float32), r.standard_normal(8).astype(np.float32), 0.5)
    ln("layer_norm_f32_h1", r.standard_normal((5, 1)).astype(np.float32),
       np.array([2.0], np.float32), np.array([0.25], np.float32), 1e-5)
    ln("layer_norm_bf16_x_f32_params", round_to(r.standard_normal((3, 32)) * 2, "bf16"),
       r.standard_normal(32).astype(np.float32), r.standard_normal(32).astype(np.float32), 1e-5, "bf16", "f32")
    ln("layer_norm_bf16_all", round_to(r.standard_normal((3, 32)) * 2, "bf16"),
       round_to(r.standard_normal(32), "bf16"), round_to(r.standard_normal(32), "bf16"), 1e-5, "bf16", "bf16")

    def rms(name, x, g, eps, xet="f32", pet="f32"):
        tx, tp, ts = tt(x.shape, xet), tt(g.shape, pet), tt(x.shape[:-1], "f32")
        m = func([("x", tx), ("g", tp)],
                 ["%%y, %%rstd = tg.rms_norm %%x, %%g epsilon = %s : (%s, %s) -> (%s, %s)"
                  % (flt(eps), tx, tp, tx, ts)], [("%y", tx, "y"), ("%rstd", ts, "rstd")])
        y, rstd = rms_norm(x.astype(np.float64), g.astype(np.float64), eps)
        inputs = {"x": x.astype(np.float32), "g": g.astype(np.float32)}
        if xet == "f32":
            fcase(name, m, inputs, {"y": E(y), "rstd": E(rstd)})
        else:
            add_case(name, m, inputs, {"y": chk_lowp(y, xet), "rstd": chk_close(rstd, 1e-5, 1e-6)})

    rms("rms_norm_f32", (r.standard_normal((2, 3, 16)) * 2).astype(np.float32),
        r.standard_normal(16).astype(np.float32), 1e-6)
    rms("rms_norm_f32_big_eps", (r.standard_normal((4, 8)) * 0.1).astype(np.float32),
        r.standard_normal(8).astype(np.float32), 0.5)
    rms("rms_norm_bf16", round_to(r.standard_normal((3, 32)), "bf16"), round_to(r.standard_normal(32), "bf16"),
        1e-6, "bf16", "bf16")

    # attention
    def att(name, B, H, K, Sq, Sk, D, Dv, causal, scale, et="f32"):
        q = r.standard_normal((B, H, Sq, D))
        k = r.standard_normal((B, K, Sk, D))
        v = r.standard_normal((B, K, Sk, Dv))
        if et != "f32":
            q, k, v = round_to(q, et), round_to(k, et), round_to(v, et)
        else:
            q, k, v = f32(q), f32(k), f32(v)
        s = scale if scale is not None else 1 / math.sqrt(D)
        out, lse = attention(q, k, v, causal, s)
        tq, tk, tv = tt(q.shape, et), tt(k.shape, et), tt(v.shape, et)
        to, tl = tt(out.shape, et), tt(lse.shape, "f32")
        attrs = (" causal" if causal else "") + (" scale = %s" % flt(scale) if scale is not None else "")
        m = func([("q", tq), ("k", tk), ("v", tv)],
                 ["%%o, %%lse = tg.attention %%q, %%k, %%v%s : (%s, %s, %s) -> (%s, %s)" % (attrs, tq, tk, tv, to, tl)],
                 [("%o", to, "out"), ("%lse", tl, "lse")])
        inputs = {"q": q.astype(np.float32), "k": k.astype(np.float32), "v": v.astype(np.float32)}
        if et == "f32":
            fcase(name, m, inputs, {"out": E(out), "lse": E(lse)})
        else:
            add_case(name, m, inputs, {"out": chk_lowp(out, et), "lse": chk_close(lse, 1e-5, 1e-6)})

    att("attention_f32", 2, 2, 2, 4, 6, 8, 5, False, None)
    att("attention_f32_explicit_scale", 1, 2, 2, 5, 3, 4, 4, False, 0.3)
    att("attention_f32_sq_gt_sk", 1, 2, 2, 6, 3, 4, 4, False, None)
    att("attention_f32_causal_square", 2, 2, 2, 5, 5, 8, 8, True, None)
    att("attention_f32_causal_sq_lt_sk", 1, 3, 3, 3, 6, 4, 5, True, None)
    att("attention_f32_causal_sq1", 1, 1, 1, 1, 4, 4, 3, True, None)
    att("attention_f32_gqa", 2, 4, 2, 4, 5, 8, 6, False, None)
    att("attention_f32_gqa_causal_scale", 1, 4, 2, 3, 5, 8, 6, True, 0.7)
    att("attention_f32_mqa", 1, 4, 1, 3, 3, 4, 4, False, None)
    att("attention_bf16", 1, 2, 2, 4, 6, 8, 8, True, None, "bf16")

    # cross_entropy
    def ce(name, logits, labels, red, ignore=None, let="i64", xet="f32"):
        tl, ty = tt(logits.shape, xet), tt(labels.shape, let)
        ts = tt(labels.shape, "f32")
        attr = " ignore_index = %d" % ignore if ignore is not None else ""
        m = func([("logits", tl), ("labels", ty, "label")],
                 ["%%loss, %%lse = tg.cross_entropy %s %%logits, %%labels%s : (%s, %s) -> (tensor<f32>, %s)"
                  % (red, attr, tl, ty, ts)], [("%loss", "tensor<f32>", "loss"), ("%lse", ts, "lse")])
        loss, lse = cross_entropy(logits.astype(np.float64), labels, red, ignore)
        inputs = {"logits": logits.astype(np.float32), "labels": labels}
        if xet == "f32":
            fcase(name, m, inputs, {"loss": E(loss, atol=1e-5), "lse": E(lse)})
        else:
            add_case(name, m, inputs, {"loss": chk_close(loss, 1e-5, 1e-5), "lse": chk_close(lse, 1e-5, 1e-6)})

    lg = f32(r.standard_normal((6, 10)) * 3)
    lab = r.integers(0, 10, 6).astype(np.int64)
    ce("cross_entropy_mean", lg, lab, "mean")
    ce("cross_entropy_sum", lg, lab, "sum")
    lab2 = np.array([3, -100, 5, -100, 0, 9], np.int64)
    ce("cross_entropy_mean_ignore_index", lg, lab2, "mean", -100)
    ce("cross_entropy_sum_ignore_index", lg, lab2, "sum", -100)
    lab3 = np.array([2, 2, 5, 1, 2, 0], np.int64)
    ce("cross_entropy_ignore_index_is_a_class", lg, lab3, "mean", 2)
    ce("cross_entropy_all_ignored_nan", lg, np.full(6, -100, np.int64), "mean", -100)
    ce("cross_entropy_all_ignored_sum_zero", lg, np.full(6, -100, np.int64), "sum", -100)
    ce("cross_entropy_3d_i32_labels", f32(r.standard_normal((2, 3, 7)) * 2),
       r.integers(0, 7, (2, 3)).astype(np.int32), "mean", let="i32")
    ce("cross_entropy_large_logits", f32(r.standard_normal((4, 5)) * 50 + 200), r.integers(0, 5, 4).astype(np.int64),
       "mean")
    ce("cross_entropy_bf16_logits", round_to(r.standard_normal((4, 8)) * 2, "bf16"),
       r.integers(0, 8, 4).astype(np.int64), "sum", xet="bf16")


# ---------------------------------------------------------------------------
# Backward ops.
# ---------------------------------------------------------------------------

def build_backward():
    r = rng_for("backward")

    # softmax_grad: y is a real softmax output, except in one case where the
    # formula is checked on arbitrary values.
    def smg(name, shape, dim, et="f32", arbitrary_y=False):
        x = r.standard_normal(shape) * 2
        y = r.uniform(-1, 1, shape) if arbitrary_y else softmax(x, dim)
        dy = r.standard_normal(shape)
        rnd = f32 if et == "f32" else (lambda a: round_to(a, et))
        y, dy = rnd(y), rnd(dy)
        ref = softmax_grad(y, dy, dim)
        scale = np.abs(y) * (np.abs(dy) + np.sum(np.abs(dy * y), axis=dim, keepdims=True))
        ty = tt(shape, et)
        m = func([("y", ty), ("dy", ty)], ["%%r = tg.softmax_grad %%y, %%dy dim = %d : %s" % (dim, ty)],
                 [("%r", ty, "r")])
        inputs = {"y": y.astype(np.float32), "dy": dy.astype(np.float32)}
        if et == "f32":
            fcase(name, m, inputs, {"r": E(ref, scale=scale)})
        else:
            add_case(name, m, inputs, {"r": chk_lowp(ref, et)})

    smg("softmax_grad_middle_f32", (3, 5, 4), 1)
    smg("softmax_grad_last_f32", (3, 5, 4), 2)
    smg("softmax_grad_first_f32", (3, 5, 4), 0)
    smg("softmax_grad_middle_4d_f32", (2, 3, 6, 2), 2)
    smg("softmax_grad_arbitrary_y_f32", (4, 6, 3), 1, arbitrary_y=True)
    smg("softmax_grad_bf16", (4, 8), 0, et="bf16")

    # gelu_grad, both formulas.
    xs = f32(np.concatenate([r.standard_normal(48) * 2.5,
                             [0.0, 1e-3, -1e-3, 5.0, -5.0, 8.0, -8.0, 20.0, -20.0, 3.0, -3.0, 0.5]]))
    dys = f32(r.standard_normal(xs.shape) * 2)
    ty = tt(xs.shape, "f32")
    for approx, fn in [("erf", gelu_erf_grad), ("tanh", gelu_tanh_grad)]:
        m = func([("dy", ty), ("x", ty)], ["%%r = tg.gelu_grad %s %%dy, %%x : %s" % (approx, ty)],
                 [("%r", ty, "r")])
        fcase("gelu_grad_%s_f32" % approx, m, {"dy": dys.astype(np.float32), "x": xs.astype(np.float32)},
              {"r": E(dys * fn(xs), rtol=2e-5, atol=2e-6)})
        xb = round_to(r.standard_normal(32) * 2, "bf16")
        db = round_to(r.standard_normal(32), "bf16")
        tb = tt((32,), "bf16")
        m = func([("dy", tb), ("x", tb)], ["%%r = tg.gelu_grad %s %%dy, %%x : %s" % (approx, tb)],
                 [("%r", tb, "r")])
        add_case("gelu_grad_%s_bf16" % approx, m, {"dy": db.astype(np.float32), "x": xb.astype(np.float32)},
                 {"r": chk_lowp(db * fn(xb), "bf16")})

    # Huge finite inputs: gelu'(x) is 1 for large positive x and 0 for large
    # negative x (x^2 and x^3 overflow f32 there).
    xh = np.array([1e20, -1e20, 3e38, -3e38, 1e13, -1e13, 1e6, -1e6], np.float32)
    dh = f32(r.standard_normal(xh.shape))
    th = tt(xh.shape, "f32")
    for approx in ("erf", "tanh"):
        m = func([("dy", th), ("x", th)], ["%%r = tg.gelu_grad %s %%dy, %%x : %s" % (approx, th)],
                 [("%r", th, "r")])
        fcase("gelu_grad_%s_f32_huge_inputs" % approx, m, {"dy": dh.astype(np.float32), "x": xh},
              {"r": E(np.where(xh > 0, dh, 0.0), rtol=2e-5, atol=2e-6)})

    # layer_norm_grad from x, the statistics computed here (f32, as the
    # forward returns them) and the scale.
    def lng(name, shape, eps, xet="f32", pet="f32", xscale=2.0):
        H = shape[-1]
        rnd = {"f32": f32, "bf16": lambda a: round_to(a, "bf16")}
        x = rnd[xet](r.standard_normal(shape) * xscale + 0.5)
        dy = rnd[xet](r.standard_normal(shape))
        g = rnd[pet](r.standard_normal(H))
        _, mean, rstd = layer_norm(x, g, np.zeros(H), eps)
        mean, rstd = f32(mean), f32(rstd)
        dx, dg, db = layer_norm_grad(dy, x, mean, rstd, g)
        lead = tuple(range(len(shape) - 1))
        xhat = np.abs((x - mean[..., None]) * rstd[..., None])
        ag = np.abs(dy * g)
        dx_scale = rstd[..., None] * (ag + ag.mean(-1, keepdims=True) + xhat * (ag * xhat).mean(-1, keepdims=True))
        dg_scale = (np.abs(dy) * xhat).sum(lead)
        db_scale = np.abs(dy).sum(lead)
        tx, tg, ts = tt(shape, xet), tt((H,), pet), tt(shape[:-1], "f32")
        m = func([("dy", tx), ("x", tx), ("mean", ts), ("rstd", ts), ("g", tg)],
                 ["%%dx, %%dg, %%db = tg.layer_norm_grad %%dy, %%x, %%mean, %%rstd, %%g : (%s, %s, %s, %s, %s) -> (%s, %s, %s)"
                  % (tx, tx, ts, ts, tg, tx, tg, tg)],
                 [("%dx", tx, "dx"), ("%dg", tg, "dg"), ("%db", tg, "db")])
        inputs = {k: v.astype(np.float32) for k, v in
                  {"dy": dy, "x": x, "mean": mean, "rstd": rstd, "g": g}.items()}
        if xet == "f32" and pet == "f32":
            fcase(name, m, inputs, {"dx": E(dx, scale=dx_scale), "dg": E(dg, scale=dg_scale),
                                    "db": E(db, scale=db_scale)})
        else:
            chk = {"dx": chk_lowp(dx, xet) if xet != "f32" else chk_close(dx, 1e-5, 1e-6, np.float32, dx_scale)}
            for k, ref, sc in (("dg", dg, dg_scale), ("db", db, db_scale)):
                chk[k] = chk_lowp(ref, pet) if pet != "f32" else chk_close(ref, 1e-5, 1e-6, np.float32, sc)
            add_case(name, m, inputs, chk)

    lng("layer_norm_grad_f32", (2, 3, 16), 1e-5)
    lng("layer_norm_grad_f32_big_eps", (4, 8), 0.5)
    lng("layer_norm_grad_f32_h1", (5, 1), 1e-5)
    lng("layer_norm_grad_bf16_x_f32_scale", (3, 32), 1e-5, "bf16", "f32")
    lng("layer_norm_grad_f32_no_rows", (0, 6), 1e-5)

    def rmsg(name, shape, eps, xet="f32", pet="f32", xscale=2.0):
        H = shape[-1]
        rnd = {"f32": f32, "bf16": lambda a: round_to(a, "bf16")}
        x = rnd[xet](r.standard_normal(shape) * xscale)
        dy = rnd[xet](r.standard_normal(shape))
        g = rnd[pet](r.standard_normal(H))
        _, rstd = rms_norm(x, g, eps)
        rstd = f32(rstd)
        dx, dg = rms_norm_grad(dy, x, rstd, g)
        lead = tuple(range(len(shape) - 1))
        xhat = np.abs(x * rstd[..., None])
        ag = np.abs(dy * g)
        dx_scale = rstd[..., None] * (ag + xhat * (ag * xhat).mean(-1, keepdims=True))
        dg_scale = (np.abs(dy) * xhat).sum(lead)
        tx, tg, ts = tt(shape, xet), tt((H,), pet), tt(shape[:-1], "f32")
        m = func([("dy", tx), ("x", tx), ("rstd", ts), ("g", tg)],
                 ["%%dx, %%dg = tg.rms_norm_grad %%dy, %%x, %%rstd, %%g : (%s, %s, %s, %s) -> (%s, %s)"
                  % (tx, tx, ts, tg, tx, tg)],
                 [("%dx", tx, "dx"), ("%dg", tg, "dg")])
        inputs = {k: v.astype(np.float32) for k, v in {"dy": dy, "x": x, "rstd": rstd, "g": g}.items()}
        if xet == "f32" and pet == "f32":
            fcase(name, m, inputs, {"dx": E(dx, scale=dx_scale), "dg": E(dg, scale=dg_scale)})
        else:
            add_case(name, m, inputs, {"dx": chk_lowp(dx, xet), "dg": chk_lowp(dg, pet)})

    rmsg("rms_norm_grad_f32", (2, 3, 16), 1e-6)
    rmsg("rms_norm_grad_f32_big_eps", (4, 8), 0.5, xscale=0.1)
    rmsg("rms_norm_grad_bf16", (3, 32), 1e-6, "bf16", "bf16")
    rmsg("rms_norm_grad_f32_no_rows", (2, 0, 5), 1e-6)

    # attention_grad: the forward's output and logsumexp computed here
    # (rounded to f32, as the forward returns them).
    def attg(name, B, H, K, Sq, Sk, D, Dv, causal, scale, et="f32"):
        rnd = f32 if et == "f32" else (lambda a: round_to(a, et))
        q = rnd(r.standard_normal((B, H, Sq, D)))
        k = rnd(r.standard_normal((B, K, Sk, D)))
        v = rnd(r.standard_normal((B, K, Sk, Dv)))
        do = rnd(r.standard_normal((B, H, Sq, Dv)))
        s = scale if scale is not None else 1 / math.sqrt(D)
        o, lse = attention(q, k, v, causal, s)
        o, lse = rnd(o), f32(lse)
        grads = attention_grad(do, q, k, v, o, lse, causal, s)
        scales = attention_grad(do, q, k, v, o, lse, causal, s, absolute=True)
        tq, tk, tv, to = tt(q.shape, et), tt(k.shape, et), tt(v.shape, et), tt(o.shape, et)
        tl = tt(lse.shape, "f32")
        attrs = (" causal" if causal else "") + (" scale = %s" % flt(scale) if scale is not None else "")
        m = func([("do", to), ("q", tq), ("k", tk), ("v", tv), ("o", to), ("lse", tl)],
                 ["%%dq, %%dk, %%dv = tg.attention_grad %%do, %%q, %%k, %%v, %%o, %%lse%s : (%s, %s, %s, %s, %s, %s) -> (%s, %s, %s)"
                  % (attrs, to, tq, tk, tv, to, tl, tq, tk, tv)],
                 [("%dq", tq, "dq"), ("%dk", tk, "dk"), ("%dv", tv, "dv")])
        inputs = {k_: v_.astype(np.float32) for k_, v_ in
                  {"do": do, "q": q, "k": k, "v": v, "o": o, "lse": lse}.items()}
        names = ("dq", "dk", "dv")
        if et == "f32":
            fcase(name, m, inputs, {n: E(g, scale=sc) for n, g, sc in zip(names, grads, scales)})
        else:
            add_case(name, m, inputs, {n: chk_lowp(g, et) for n, g in zip(names, grads)})

    attg("attention_grad_f32", 2, 2, 2, 4, 6, 8, 5, False, None)
    attg("attention_grad_f32_explicit_scale", 1, 2, 2, 5, 3, 4, 4, False, 0.3)
    attg("attention_grad_f32_causal_square", 1, 2, 2, 5, 5, 4, 4, True, None)
    attg("attention_grad_f32_causal_sq_lt_sk", 1, 3, 3, 3, 6, 4, 5, True, None)
    attg("attention_grad_f32_gqa", 2, 4, 2, 4, 5, 8, 6, False, None)
    attg("attention_grad_f32_gqa_causal_scale", 1, 4, 2, 3, 5, 8, 6, True, 0.7)
    attg("attention_grad_f32_mqa", 1, 4, 1, 3, 3, 4, 4, False, None)
    # Head size 0 with an explicit scale: every score is 0, p is uniform over
    # the visible keys, dq and dk are empty and dv = p^T @ grad_output.
    attg("attention_grad_f32_head_size_0", 1, 2, 2, 3, 4, 0, 3, True, 1.0)
    # No queries: the key and value gradients are sums over nothing.
    attg("attention_grad_f32_no_queries", 1, 2, 1, 0, 3, 4, 2, False, None)
    attg("attention_grad_bf16", 1, 2, 2, 4, 6, 8, 8, True, None, "bf16")

    # embedding_grad: repeated ids add up, unused rows are zero.
    def embg(name, ids, V, D, et="f32", dy=None, check=None):
        if dy is None:
            dy = f32(r.standard_normal(ids.shape + (D,)))
        ref = embedding_grad(dy, ids, V)
        scale = embedding_grad(np.abs(dy), ids, V)
        iet = "i64" if ids.dtype == np.int64 else "i32"
        tg, ti, tr = tt(dy.shape, et), tt(ids.shape, iet), tt((V, D), et)
        m = func([("dy", tg), ("ids", ti)], ["%%r = tg.embedding_grad %%dy[%%ids] : (%s, %s) -> %s" % (tg, ti, tr)],
                 [("%r", tr, "r")])
        inputs = {"dy": dy.astype(np.float32), "ids": ids}
        if et == "f32":
            fcase(name, m, inputs, {"r": E(ref, scale=scale)})
        else:
            add_case(name, m, inputs, {"r": check(ref)})

    ids = np.array([[3, 0, 3], [9, 3, 0]], np.int64)
    embg("embedding_grad_ids_i64_repeated", ids, 10, 4)
    embg("embedding_grad_ids_i32_repeated", r.integers(0, 4, 12).astype(np.int32), 6, 3)
    embg("embedding_grad_all_same_id", np.full((3, 5), 2, np.int64), 4, 2)
    embg("embedding_grad_no_ids", np.zeros((0,), np.int64), 5, 3)
    # bf16: sums of 256 and sixteen 1s are exact in f32 (272) and become 272
    # once rounded, where a bf16 accumulator would stay at 256.
    ids = np.array([1] * 17 + [0], np.int64)
    dyb = np.ones((18, 2))
    dyb[0] = [256.0, -3.0]
    dyb[17] = [0.5, 7.0]
    embg("embedding_grad_bf16_accumulates_in_f32", ids, 3, 2, "bf16", dyb,
         lambda ref: chk_exact(round_to(ref, "bf16"), np.float32))

    # cross_entropy_grad from the forward's logsumexp computed here.
    def ceg(name, logits, labels, red, ignore=None, dloss=1.0, let="i64", xet="f32"):
        lse = f32(logsumexp(logits.reshape(-1, logits.shape[-1]), 1).reshape(labels.shape))
        dl = f32(dloss)
        ref = cross_entropy_grad(dl, logits, labels, lse, red, ignore)
        tl, ty, ts = tt(logits.shape, xet), tt(labels.shape, let), tt(labels.shape, "f32")
        attr = " ignore_index = %d" % ignore if ignore is not None else ""
        m = func([("dloss", "tensor<f32>"), ("logits", tl), ("labels", ty, "label"), ("lse", ts)],
                 ["%%r = tg.cross_entropy_grad %s %%dloss, %%logits, %%labels, %%lse%s : (tensor<f32>, %s, %s, %s) -> %s"
                  % (red, attr, tl, ty, ts, tl)], [("%r", tl, "r")])
        inputs = {"dloss": np.array(dl, np.float32), "logits": logits.astype(np.float32), "labels": labels,
                  "lse": lse.astype(np.float32)}
        if xet == "f32":
            fcase(name, m, inputs, {"r": E(ref)})
        else:
            add_case(name, m, inputs, {"r": chk_lowp(ref, xet)})

    lg = f32(r.standard_normal((6, 10)) * 3)
    lab = r.integers(0, 10, 6).astype(np.int64)
    ceg("cross_entropy_grad_mean", lg, lab, "mean")
    ceg("cross_entropy_grad_sum", lg, lab, "sum")
    ceg("cross_entropy_grad_mean_scaled", lg, lab, "mean", dloss=0.37)
    ceg("cross_entropy_grad_sum_scaled", lg, lab, "sum", dloss=-2.5)
    lab2 = np.array([3, -100, 5, -100, 0, 9], np.int64)
    ceg("cross_entropy_grad_mean_ignore_index", lg, lab2, "mean", -100, dloss=1.5)
    ceg("cross_entropy_grad_sum_ignore_index", lg, lab2, "sum", -100, dloss=0.75)
    lab3 = np.array([2, 2, 5, 1, 2, 0], np.int64)
    ceg("cross_entropy_grad_ignore_index_is_a_class", lg, lab3, "mean", 2)
    ceg("cross_entropy_grad_all_ignored_zeros", lg, np.full(6, -100, np.int64), "mean", -100)
    ceg("cross_entropy_grad_3d_i32_labels", f32(r.standard_normal((2, 3, 7)) * 2),
        r.integers(0, 7, (2, 3)).astype(np.int32), "mean", dloss=2.0, let="i32")
    ceg("cross_entropy_grad_no_tokens", np.zeros((0, 4)), np.zeros((0,), np.int64), "mean")
    ceg("cross_entropy_grad_large_logits", f32(r.standard_normal((4, 5)) * 50 + 200),
        r.integers(0, 5, 4).astype(np.int64), "mean")
    ceg("cross_entropy_grad_bf16_logits", round_to(r.standard_normal((4, 8)) * 2, "bf16"),
        r.integers(0, 8, 4).astype(np.int64), "sum", dloss=0.5, xet="bf16")


# ---------------------------------------------------------------------------
# Dropout.
# ---------------------------------------------------------------------------

def build_dropout():
    r = rng_for("dropout")
    shape = (64, 64)
    n = 64 * 64
    x = r.standard_normal(shape).astype(np.float32)
    x[x == 0] = 1.0
    ty = tt(shape, "f32")
    seed = 0x123456789ABC
    rate = 0.25
    body = ["%%d0 = tg.dropout %%x, %%seed rate = %s stream = 0 : %s, tensor<i64>" % (flt(rate), ty),
            "%%d0b = tg.dropout %%x, %%seed rate = %s stream = 0 : %s, tensor<i64>" % (flt(rate), ty),
            "%%d1 = tg.dropout %%x, %%seed rate = %s stream = 1 : %s, tensor<i64>" % (flt(rate), ty),
            "%%d2 = tg.dropout %%x, %%seed rate = 0.0 stream = 2 : %s, tensor<i64>" % ty,
            "%%d3 = tg.dropout %%x, %%seed rate = %s stream = 3 : %s, tensor<i64>" % (flt(0.9), ty)]
    m = func([("x", ty), ("seed", "tensor<i64>", "hyper")], body,
             [("%d0", ty, "d0"), ("%d0b", ty, "d0b"), ("%d1", ty, "d1"), ("%d2", ty, "d2"), ("%d3", ty, "d3")])
    x64 = x.astype(np.float64)

    def stats(rs, f64=False):
        rr = rs[0]
        if rr.rc != 0:
            return [_describe_failure(rr)]
        errs = []
        o = rr.outputs
        dt = np.float64 if f64 else np.float32
        for k in ("d0", "d0b", "d1", "d2", "d3"):
            if k not in o:
                return ["no output %s" % k]
            if o[k].dtype != dt or o[k].shape != shape:
                errs.append("%s: %s %s, expected %s %s" % (k, o[k].dtype, o[k].shape, np.dtype(dt), shape))
        if errs:
            return errs
        tol = 1e-12 if f64 else 1e-6
        for k, rt in (("d0", rate), ("d1", rate), ("d3", 0.9)):
            d = o[k].astype(np.float64)
            dropped = d == 0
            frac = dropped.mean()
            sigma = math.sqrt(rt * (1 - rt) / n)
            if abs(frac - rt) > 5 * sigma:
                errs.append("%s: dropped fraction %.4f, expected %.2f +- %.4f" % (k, frac, rt, 5 * sigma))
            kept = ~dropped
            want = x64[kept] / (1 - rt)
            bad = ~(np.abs(d[kept] - want) <= tol * np.abs(want))
            if np.any(bad):
                i = np.argmax(bad)
                errs.append("%s: kept value %.9g, expected x/(1-rate) = %.9g (%d bad)" % (
                    k, d[kept][i], want[i], bad.sum()))
        if not np.array_equal(o["d0"], o["d0b"]):
            errs.append("two dropouts with the same seed and stream differ at %d elements" %
                        np.sum(o["d0"] != o["d0b"]))
        diff = ((o["d0"] == 0) != (o["d1"] == 0)).mean()
        if not 0.30 <= diff <= 0.45:
            errs.append("masks of stream 0 and stream 1 differ at a fraction %.3f (expected ~0.375)" % diff)
        if not np.array_equal(o["d2"].astype(np.float64), x64):
            errs.append("rate 0 is not the identity")
        return errs

    inputs = {"x": x, "seed": np.array(seed, np.int64)}
    CASES.append(Case("dropout_statistics", [Run(m, inputs)], stats))
    CASES.append(Case("dropout_statistics[f64]", [Run(m, inputs, ["--f64"])], lambda rs: stats(rs, True)))

    def across(rs):
        errs = []
        for rr in rs:
            if rr.rc != 0:
                return [_describe_failure(rr)]
        a, b, c = (rr.outputs.get("d0") for rr in rs)
        if a is None or b is None or c is None:
            return ["missing output d0"]
        if not np.array_equal(a, b):
            errs.append("same seed, two runs: masks differ at %d elements" % np.sum((a == 0) != (b == 0)))
        diff = ((a == 0) != (c == 0)).mean()
        if not 0.30 <= diff <= 0.45:
            errs.append("another seed: masks differ at a fraction %.3f (expected ~0.375)" % diff)
        return errs

    other = {"x": x, "seed": np.array(seed + 1, np.int64)}
    CASES.append(Case("dropout_same_seed_same_mask_across_runs",
                      [Run(m, inputs), Run(m, inputs), Run(m, other)], across))

    def exact(rs, f64=False):
        rr = rs[0]
        if rr.rc != 0:
            return [_describe_failure(rr)]
        errs = []
        for k, stream, rt in (("d0", 0, rate), ("d1", 1, rate), ("d3", 3, 0.9)):
            keep = dropout_keep(seed, n, stream, rt).reshape(shape)
            got = rr.outputs[k] != 0
            if not np.array_equal(keep, got):
                idx = np.argwhere(keep != got)[0]
                errs.append("%s: mask differs from Philox4x32-10 at %d elements; first at %s: expected %s" % (
                    k, np.sum(keep != got), list(idx), "keep" if keep[tuple(idx)] else "drop"))
        return errs

    CASES.append(Case("dropout_mask_is_philox4x32_10", [Run(m, inputs)], exact))

    # A block of the whole (64, 64) tensor: rows 16..47, columns 24..39,
    # told where it lies (offset: the index of its first element; global
    # shape: the whole's). Its mask is the whole mask's block.
    block = (32, 16)
    bty = tt(block, "f32")
    first = 16 * 64 + 24
    bbody = ["%%d = tg.dropout %%x, %%seed offset %%o rate = %s stream = 5 of [64, 64] : %s, tensor<i64>, tensor<i64>"
             % (flt(rate), bty)]
    bm = func([("x", bty), ("seed", "tensor<i64>", "hyper"), ("o", "tensor<i64>", "hyper")], bbody,
              [("%d", bty, "d")])
    bx = x[16:48, 24:40].copy()

    def block_mask(rs):
        rr = rs[0]
        if rr.rc != 0:
            return [_describe_failure(rr)]
        got = rr.outputs.get("d")
        if got is None:
            return ["no output d"]
        keep = dropout_keep(seed, n, 5, rate).reshape(shape)[16:48, 24:40]
        if not np.array_equal(keep, got != 0):
            idx = np.argwhere(keep != (got != 0))[0]
            return ["block mask differs from the whole mask's block at %d elements; first at %s" % (
                np.sum(keep != (got != 0)), list(idx))]
        return []

    CASES.append(Case("dropout_block_of_global_shape",
                      [Run(bm, {"x": bx, "seed": np.array(seed, np.int64),
                                "o": np.array(first, np.int64)})], block_mask))
    CASES.append(Case("dropout_mask_is_philox4x32_10[f64]", [Run(m, inputs, ["--f64"])], exact))


# ---------------------------------------------------------------------------
# optimizers
# ---------------------------------------------------------------------------

def adafactor(p, g, states, lr, t, decay_rate, eps1, clip, wd):
    """Adafactor as tg.adafactor's description states it (Shazeer & Stern
    2018, no momentum): returns the new parameter, the new states, the
    clipped update U' and RMS(U)."""
    b = 1.0 - float(t) ** decay_rate
    g2 = g * g + eps1
    if p.ndim >= 2:
        row, col = states
        row = b * row + (1 - b) * g2.mean(axis=-1)
        col = b * col + (1 - b) * g2.mean(axis=-2)
        v = np.einsum("...i,...j->...ij", row, col) / row.mean(axis=-1)[..., None, None]
        new_states = [row, col]
    else:
        v = b * states[0] + (1 - b) * g2
        new_states = [v]
    u = g / np.sqrt(v)
    rms = math.sqrt(float(np.mean(u * u))) if u.size else 0.0
    u = u / max(1.0, rms / clip)
    return p - lr * (u + wd * p), new_states, u, rms


def build_optimizer():
    def afc(name, shape, step, decay_rate=-0.8, eps1=1e-30, clip=1.0, wd=0.0, lr=0.01, zero_rows=False,
            expect_clip=None):
        r = rng_for(name)
        p = f32(r.standard_normal(shape))
        g = f32(r.standard_normal(shape) * 0.1)
        if zero_rows and len(shape) >= 2:
            g[..., 0, :] = 0.0  # a zero row: its second moment is eps1 alone
        factored = len(shape) >= 2
        state_shapes = [shape[:-1], shape[:-2] + (shape[-1],)] if factored else [shape]
        states = [f32(r.uniform(0.001, 0.02, s)) for s in state_shapes]
        lr = float(f32(lr))
        new_p, new_states, u, rms = adafactor(p, g, states, lr, step, decay_rate, eps1, clip, wd)
        # The case exercises the clipping it is named for.
        if expect_clip is not None:
            assert (rms > clip) == expect_clip, "%s: RMS(U) = %g, clip %g" % (name, rms, clip)
        tp = tt(shape, "f32")
        ts = [tt(s, "f32") for s in state_shapes]
        names = ["r", "c"] if factored else ["v"]
        args = [("p", tp), ("g", tp)] + list(zip(names, ts))
        body = ["%%lr = tg.constant dense<%s> : tensor<f32>" % flt(lr),
                "%%t = tg.constant dense<%d> : tensor<i64>" % step,
                "%%u:%d = tg.adafactor %%p, %%g, [%s], %%lr, %%t decay_rate = %s epsilon1 = %s "
                "clip_threshold = %s weight_decay = %s : %s, [%s], tensor<f32>, tensor<i64>"
                % (len(names) + 1, ", ".join("%" + n for n in names), flt(decay_rate), flt(eps1), flt(clip), flt(wd),
                   tp, ", ".join(ts))]
        rets = [("%u#0", tp, "new_p")] + [("%%u#%d" % (i + 1), t, "new_" + n) for i, (n, t) in enumerate(zip(names, ts))]
        m = func(args, body, rets)
        inputs = {"p": p.astype(np.float32), "g": g.astype(np.float32)}
        inputs.update({n: s.astype(np.float32) for n, s in zip(names, states)})
        expected = {"new_p": E(new_p, rtol=2e-6, atol=1e-7, scale=np.abs(p) + lr * np.abs(u))}
        expected.update({"new_" + n: E(s, rtol=2e-6, atol=0) for n, s in zip(names, new_states)})
        fcase(name, m, inputs, expected)

    # Factored (rank 2 and a batch of matrices), clipped or not; unfactored
    # (vector, scalar); the first step (b = 0) and later ones.
    afc("adafactor_2d_clipped", (5, 7), 3, clip=0.5, wd=0.1, expect_clip=True)
    afc("adafactor_2d_unclipped", (6, 4), 2, decay_rate=-0.5, clip=100.0, expect_clip=False)
    afc("adafactor_3d_first_step_zero_row", (3, 4, 5), 1, zero_rows=True)
    afc("adafactor_3d_unclipped", (2, 3, 8), 7, clip=10.0, wd=0.01, lr=0.1, expect_clip=False)
    afc("adafactor_1d", (9,), 5, wd=0.05)
    afc("adafactor_1d_first_step_clipped", (16,), 1, clip=0.25, expect_clip=True)
    afc("adafactor_0d", (), 4, decay_rate=-1.0, eps1=1e-3)


# ---------------------------------------------------------------------------
# fusion
# ---------------------------------------------------------------------------

def build_fusion():
    r = rng_for("fusion")
    a = r.standard_normal((4, 5)).astype(np.float32)
    b = r.standard_normal((4, 5)).astype(np.float32)
    bias = r.standard_normal(5).astype(np.float32)
    T, T4, Tb = tt((4, 5), "f32"), tt((4,), "f32"), tt((5,), "f32")
    body = [
        "%%f:2 = tg.fusion (%%a, %%b, %%bias) : (%s, %s, %s) -> (%s, %s) {" % (T, T, Tb, T, T4),
        "^bb0(%%x: %s, %%y: %s, %%z: %s):" % (T, T, Tb),
        "  %%s = tg.add %%x, %%y : %s" % T,
        "  %%zb = tg.broadcast_in_dim %%z dims = [1] : %s -> %s" % (Tb, T),
        "  %%t = tg.add %%s, %%zb : %s" % T,
        "  %%r = tg.relu %%t : %s" % T,
        "  %%c = tg.constant dense<2.5> : %s" % T,
        "  %%m = tg.mul %%r, %%c : %s" % T,
        "  %%red = tg.reduce sum %%m dims = [1] : %s -> %s" % (T, T4),
        "  tg.yield %%m, %%red : %s, %s" % (T, T4),
        "}",
        "%%g = tg.exp %%f#1 : %s" % T4,
    ]
    m = func([("a", T), ("b", T), ("bias", Tb)], body, [("%f#0", T, "m"), ("%f#1", T4, "red"), ("%g", T4, "g")])
    A, B, Z = a.astype(np.float64), b.astype(np.float64), bias.astype(np.float64)
    mm = np.maximum(A + B + Z, 0) * 2.5
    red = mm.sum(1)
    fcase("fusion_region", m, {"a": a, "b": b, "bias": bias},
          {"m": E(mm), "red": E(red, scale=np.abs(mm).sum(1)), "g": E(np.exp(red), rtol=1e-4)})


# ---------------------------------------------------------------------------
# CLI: errors, --compare, --random-inputs.
# ---------------------------------------------------------------------------

def build_cli():
    T = tt((2, 3), "f32")
    m = func([("alpha", T), ("beta_arg", T)], ["%%r = tg.add %%alpha, %%beta_arg : %s" % T], [("%r", T, "r")])
    good = np.ones((2, 3), np.float32)

    def err_case(name, run, needles):
        def check(rs):
            rr = rs[0]
            errs = []
            if rr.rc != 1:
                errs.append("exit status %d, expected 1 (stderr: %s)" % (rr.rc, rr.stderr.strip()[-200:]))
            if not rr.stderr.strip():
                errs.append("nothing on stderr")
            for nd in needles:
                if nd not in rr.stderr:
                    errs.append("stderr does not mention %r: %s" % (nd, rr.stderr.strip()[-300:]))
            if rr.files:
                errs.append("output files were written: %s" % rr.files)
            return errs
        CASES.append(Case(name, [run], check))

    err_case("error_missing_argument_value", Run(m, {"alpha": good}), ["beta_arg"])
    err_case("error_input_without_path", Run(m, {"beta_arg": good}, raw_inputs=["alpha="]), ["alpha"])
    err_case("error_input_without_equals", Run(m, {"beta_arg": good}, raw_inputs=["alpha"]), ["alpha"])
    err_case("error_unknown_input_name", Run(m, {"alpha": good, "beta_arg": good, "gamma_nope": good}),
             ["gamma_nope"])
    err_case("error_input_given_twice", Run(m, {"alpha": good, "beta_arg": good},
                                            raw_inputs=["alpha=@DIR@/in_alpha.npy"]), ["alpha"])
    err_case("error_wrong_shape", Run(m, {"alpha": np.ones((3, 2), np.float32), "beta_arg": good}), ["alpha"])
    err_case("error_wrong_rank", Run(m, {"alpha": np.ones((6,), np.float32), "beta_arg": good}), ["alpha"])
    err_case("error_wrong_dtype_int64_for_f32", Run(m, {"alpha": np.ones((2, 3), np.int64), "beta_arg": good}),
             ["alpha"])
    err_case("error_wrong_dtype_float64_for_f32",
             Run(m, {"alpha": np.ones((2, 3), np.float64), "beta_arg": good}), ["alpha"])
    err_case("error_corrupt_file", Run(m, {"alpha": b"\x93NUMPY\x01\x00garbage not a header", "beta_arg": good}),
             ["alpha"])
    err_case("error_not_npy_file", Run(m, {"alpha": b"hello world\n" * 10, "beta_arg": good}), ["alpha"])
    import io
    buf = io.BytesIO()
    np.save(buf, good)
    err_case("error_truncated_file", Run(m, {"alpha": buf.getvalue()[:-8], "beta_arg": good}), ["alpha"])
    err_case("error_unreadable_file", Run(m, {"alpha": MISSING, "beta_arg": good}), ["alpha"])
    nan_in = good.copy()
    nan_in[1, 2] = np.nan
    err_case("error_nan_input", Run(m, {"alpha": nan_in, "beta_arg": good}), ["alpha"])
    inf_in = good.copy()
    inf_in[0, 0] = -np.inf
    err_case("error_inf_input", Run(m, {"alpha": good, "beta_arg": inf_in}), ["beta_arg"])
    add_case("nan_input_allowed_with_flag", m, {"alpha": nan_in, "beta_arg": good},
             {"r": chk_exact(nan_in.astype(np.float64) + 1, np.float32)}, NF)
    Ti = tt((3,), "i32")
    mi = func([("ids32", Ti)], ["%%r = tg.neg %%ids32 : %s" % Ti], [("%r", Ti, "r")])
    err_case("error_int64_out_of_i32_range", Run(mi, {"ids32": np.array([1, 2**40, 3], np.int64)}), ["ids32"])
    err_case("error_bool_file_for_f32", Run(m, {"alpha": np.ones((2, 3), bool), "beta_arg": good}), ["alpha"])

    # Runtime errors: exit 1, "error" and the location of the op on stderr.
    t1, t2, t3 = tt((10, 4), "f32"), tt((3,), "i64"), tt((3, 4), "f32")
    me = func([("t", t1), ("ids", t2)], ["%%r = tg.embedding %%t[%%ids] : (%s, %s) -> %s" % (t1, t2, t3)],
              [("%r", t3, "r")])
    table = np.ones((10, 4), np.float32)
    err_case("error_embedding_id_too_large", Run(me, {"t": table, "ids": np.array([0, 10, 3], np.int64)}),
             ["error", "f.mlir", "10"])
    err_case("error_embedding_id_negative", Run(me, {"t": table, "ids": np.array([0, -1, 3], np.int64)}),
             ["error", "f.mlir", "-1"])
    tl, ty = tt((3, 5), "f32"), tt((3,), "i64")
    mc = func([("logits", tl), ("labels", ty, "label")],
              ["%%loss, %%lse = tg.cross_entropy mean %%logits, %%labels : (%s, %s) -> (tensor<f32>, %s)"
               % (tl, ty, tt((3,), "f32"))], [("%loss", "tensor<f32>", "loss")])
    lg = np.zeros((3, 5), np.float32)
    err_case("error_label_too_large", Run(mc, {"logits": lg, "labels": np.array([0, 5, 1], np.int64)}),
             ["error", "f.mlir", "5"])
    err_case("error_label_negative", Run(mc, {"logits": lg, "labels": np.array([0, -1, 1], np.int64)}),
             ["error", "f.mlir", "-1"])
    mci = func([("logits", tl), ("labels", ty, "label")],
               ["%%loss, %%lse = tg.cross_entropy mean %%logits, %%labels ignore_index = -100 : (%s, %s) -> "
                "(tensor<f32>, %s)" % (tl, ty, tt((3,), "f32"))], [("%loss", "tensor<f32>", "loss")])
    err_case("error_label_out_of_range_with_ignore_index",
             Run(mci, {"logits": lg, "labels": np.array([-100, -1, 1], np.int64)}), ["error", "f.mlir", "-1"])
    # The same range checks in the backward ops.
    tdy, tids, ttab = tt((3, 4), "f32"), tt((3,), "i64"), tt((10, 4), "f32")
    meg = func([("dy", tdy), ("ids", tids)],
               ["%%r = tg.embedding_grad %%dy[%%ids] : (%s, %s) -> %s" % (tdy, tids, ttab)], [("%r", ttab, "r")])
    dy = np.ones((3, 4), np.float32)
    err_case("error_embedding_grad_id_too_large", Run(meg, {"dy": dy, "ids": np.array([0, 10, 3], np.int64)}),
             ["error", "f.mlir", "10"])
    err_case("error_embedding_grad_id_negative", Run(meg, {"dy": dy, "ids": np.array([0, -1, 3], np.int64)}),
             ["error", "f.mlir", "-1"])
    tlse = tt((3,), "f32")
    mcg = func([("dloss", "tensor<f32>"), ("logits", tl), ("labels", ty, "label"), ("lse", tlse)],
               ["%%r = tg.cross_entropy_grad mean %%dloss, %%logits, %%labels, %%lse ignore_index = -100 : "
                "(tensor<f32>, %s, %s, %s) -> %s" % (tl, ty, tlse, tl)], [("%r", tl, "r")])
    grad_inputs = {"dloss": np.array(1.0, np.float32), "logits": lg, "lse": np.zeros(3, np.float32)}
    err_case("error_cross_entropy_grad_label_too_large",
             Run(mcg, dict(grad_inputs, labels=np.array([0, 5, 1], np.int64))), ["error", "f.mlir", "5"])
    err_case("error_cross_entropy_grad_label_negative",
             Run(mcg, dict(grad_inputs, labels=np.array([-100, -1, 1], np.int64))), ["error", "f.mlir", "-1"])
    for et, npt in [("i64", np.int64), ("i32", np.int32)]:
        Tn = tt((3,), et)
        md = func([("a", Tn), ("b", Tn)], ["%%r = tg.div %%a, %%b : %s" % Tn], [("%r", Tn, "r")])
        err_case("error_int_division_by_zero_" + et,
                 Run(md, {"a": np.array([1, 2, 3], npt), "b": np.array([1, 0, 1], npt)}), ["error", "f.mlir", "zero"])
    err_case("error_no_entry_function", Run(m, {"alpha": good, "beta_arg": good}, ["--entry", "nope"]), ["nope"])

    # Output names: tg.name, else the result index; '/' becomes '_'.
    # Arguments are also reachable as argN.
    mo = ("func.func @main(%a: tensor<2xf32> {tg.name = \"x/y\"}, %b: tensor<2xi64>)\n"
          "    -> (tensor<2xf32>, tensor<2xf32> {tg.name = \"p/q\"}, tensor<2xi64>) {\n"
          "  %n = tg.neg %a : tensor<2xf32>\n"
          "  return %a, %n, %b : tensor<2xf32>, tensor<2xf32>, tensor<2xi64>\n}\n")
    xa = np.array([1.5, -2.0], np.float32)
    xb = np.array([7, -9], np.int64)
    add_case("cli_output_names_and_argN", mo, {"arg0": xa, "arg1": xb},
             {"0": chk_exact(xa), "p_q": chk_exact(-xa), "2": chk_exact(xb)})

    def pv_check(rs):
        rr = rs[0]
        if rr.rc != 0:
            return [_describe_failure(rr)]
        errs = []
        if "time:" not in rr.stdout:
            errs.append("--time printed no 'time:' line: %r" % rr.stdout[-200:])
        if "1.5" not in rr.stdout or "-2" not in rr.stdout or "-9" not in rr.stdout:
            errs.append("--print-values did not print the values: %r" % rr.stdout[-300:])
        return errs

    CASES.append(Case("cli_print_values_and_time", [Run(mo, {"arg0": xa, "arg1": xb}, ["--print-values", "--time"])],
                      pv_check))

    # --compare
    ma = func([("a", T), ("b", T)], ["%%r = tg.add %%a, %%b : %s" % T], [("%r", T, "r")])
    mb = func([("a", T), ("b", T)], ["%%r = tg.add %%b, %%a : %s" % T], [("%r", T, "r")])
    mcx = func([("a", T), ("b", T)], ["%%r = tg.sub %%a, %%b : %s" % T], [("%r", T, "r")])
    ins = {"a": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.ones((2, 3), np.float32)}

    def cmp_check(expect_rc):
        def check(rs):
            rr = rs[0]
            if rr.rc != expect_rc:
                return ["exit status %d, expected %d: %s %s" % (rr.rc, expect_rc, rr.stdout.strip(), rr.stderr.strip())]
            return []
        return check

    CASES.append(Case("cli_compare_equal", [Run(ma, ins, mlir2=mb)], cmp_check(0)))
    CASES.append(Case("cli_compare_differ", [Run(ma, ins, mlir2=mcx)], cmp_check(1)))
    # The second file must be parsed: one that does not parse is an error.
    CASES.append(Case("cli_compare_second_file_is_parsed", [Run(ma, ins, mlir2="this is not MLIR\n")],
                      cmp_check(1)))

    # --random-inputs: the documented distributions, determinism, and
    # independence of each argument's stream.
    P, X, S = tt((64, 64), "f32"), tt((64, 64), "f32"), tt((8,), "f32")
    L, LG, ID, TB = tt((256,), "i64"), tt((256, 7), "f32"), tt((256,), "i64"), tt((13, 4), "f32")
    mr = func([("p", P, "param"), ("x", X, "input"), ("s", S, "state"), ("lr", "tensor<f32>", "hyper"),
               ("seed", "tensor<i64>", "hyper"), ("logits", LG, "input"), ("labels", L, "label"),
               ("ids", ID, "input"), ("table", TB, "param")],
              ["%%loss, %%lse = tg.cross_entropy mean %%logits, %%labels : (%s, %s) -> (tensor<f32>, %s)"
               % (LG, L, tt((256,), "f32")),
               "%%e = tg.embedding %%table[%%ids] : (%s, %s) -> %s" % (TB, ID, tt((256, 4), "f32"))],
              [("%p", P, "p"), ("%x", X, "x"), ("%s", S, "s"), ("%lr", "tensor<f32>", "lr"),
               ("%seed", "tensor<i64>", "seed"), ("%labels", L, "labels"), ("%ids", ID, "ids"),
               ("%loss", "tensor<f32>", "loss")])
    xfile = np.zeros((64, 64), np.float32)

    def rnd_check(rs):
        for rr in rs:
            if rr.rc != 0:
                return [_describe_failure(rr)]
        o, o2, o3, o4 = (rr.outputs for rr in rs)
        errs = []
        if not abs(o["p"].std() - 0.02) < 0.002 or abs(o["p"].mean()) > 0.002:
            errs.append("param: mean %.4g std %.4g, expected normal(0, 0.02)" % (o["p"].mean(), o["p"].std()))
        if not abs(o["x"].std() - 1) < 0.05 or abs(o["x"].mean()) > 0.05:
            errs.append("input: mean %.4g std %.4g, expected normal(0, 1)" % (o["x"].mean(), o["x"].std()))
        if np.any(o["s"] != 0):
            errs.append("state: not zeros")
        if o["lr"].item() != np.float32(1e-3):
            errs.append("hyper float: %r, expected 1e-3" % o["lr"].item())
        if not 0 <= o["seed"].item() < 2**31:
            errs.append("hyper int: %d, expected in [0, 2^31)" % o["seed"].item())
        if o["labels"].min() < 0 or o["labels"].max() >= 7 or len(np.unique(o["labels"])) != 7:
            errs.append("labels: not uniform over [0, 7): %s" % np.unique(o["labels"]))
        if o["ids"].min() < 0 or o["ids"].max() >= 13 or len(np.unique(o["ids"])) < 10:
            errs.append("embedding ids: not uniform over [0, 13): %s" % np.unique(o["ids"]))
        for k in o:
            if not np.array_equal(o[k], o2[k], equal_nan=o[k].dtype.kind == "f"):
                errs.append("same seed, another run: %s differs" % k)
        if np.array_equal(o["p"], o3["p"]):
            errs.append("another seed gives the same param")
        if not np.array_equal(o["p"], o4["p"]) or not np.array_equal(o["labels"], o4["labels"]):
            errs.append("giving x as a file changed the random values of other arguments")
        if np.any(o4["x"] != 0):
            errs.append("x given as a file was not used")
        return errs

    CASES.append(Case("cli_random_inputs", [Run(mr, {}, ["--random-inputs", "5"]), Run(mr, {}, ["--random-inputs", "5"]),
                                            Run(mr, {}, ["--random-inputs", "6"]),
                                            Run(mr, {"x": xfile}, ["--random-inputs", "5"])], rnd_check))


# ---------------------------------------------------------------------------

def main():
    global TGC, WORK
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tgc", required=True, help="path to the tgc binary")
    ap.add_argument("--work-dir", required=True, help="scratch directory (its oracle-cases/ is replaced)")
    ap.add_argument("--jobs", type=int, default=max(2, os.cpu_count() or 2))
    ap.add_argument("--filter", default="", help="run only cases whose name contains this")
    args = ap.parse_args()
    TGC = os.path.abspath(args.tgc)
    if not os.access(TGC, os.X_OK):
        print("FAIL setup: %s is not an executable" % TGC)
        print("0 passed, 1 failed")
        return 1
    WORK = os.path.join(os.path.abspath(args.work_dir), "oracle-cases")
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)

    start = time.time()
    lines = []
    passed = failed = 0
    for name, err in selftests():
        if args.filter and args.filter not in name:
            continue
        if err:
            lines.append("FAIL %s: %s" % (name, err))
            failed += 1
        else:
            lines.append("PASS %s" % name)
            passed += 1
    for build in (build_elementwise, build_convert, build_precision, build_shape, build_reduce, build_compute,
                  build_backward, build_optimizer, build_dropout, build_fusion, build_cli):
        try:
            build()
        except Exception:  # noqa: BLE001  (an oracle bug: report it, run the rest)
            import traceback
            lines.append("FAIL %s: oracle error: %s" % (build.__name__, traceback.format_exc().strip().splitlines()[-1]))
            failed += 1
    cases = [c for c in CASES if args.filter in c.name]
    names = [c.name for c in cases]
    assert len(set(names)) == len(names), "duplicate case names"

    def work(ic):
        i, c = ic
        try:
            results = [execute(run, os.path.join(WORK, "%03d_%s" % (i, c.name.replace("[", "_").replace("]", "")),
                                                 "run%d" % j)) for j, run in enumerate(c.runs)]
            return c.check(results)
        except Exception:  # noqa: BLE001
            import traceback
            return ["oracle error: %s" % traceback.format_exc().strip().splitlines()[-1]]

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        outcomes = list(pool.map(work, enumerate(cases)))
    for c, errs in zip(cases, outcomes):
        if errs:
            lines.append("FAIL %s: %s" % (c.name, "; ".join(errs)))
            failed += 1
        else:
            lines.append("PASS %s" % c.name)
            passed += 1
    for line in lines:
        print(line)
    sys.stdout.flush()
    sys.stderr.write("(%.1f s, %d tgc runs)\n" % (time.time() - start, sum(len(c.runs) for c in cases)))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
