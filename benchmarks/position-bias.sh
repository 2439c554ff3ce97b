#!/usr/bin/env bash
# A trained position bias (T5's relative attention bias): what its
# gradient costs. tg.attention takes the bias; autodiff gives it
# tg.attention_bias_grad, which forms each score where it needs it (before
# it, the gradient was composed from tg ops: the [B, H, S, S] scores,
# probabilities, dP and dS of every layer materialized in the backward).
#
# The graph (written here, T5-like): LAYERS layers of multi-head attention
# (HEADS heads of 64) over x [BATCH, SEQ, 64 * HEADS], q, k, v and output
# projections, a residual, each layer with the same trained bias
# [1, HEADS, SEQ, SEQ] (T5 shares one per stack), loss = sum(x * c).
# AdamW f32 training steps reported by `tgc report --train` on DEVICE, for
# each binary in TGCS (default: this checkout's build/bin/tgc; give an
# older build's too to compare): peak and arena are tgc's exact accounting
# of the planned step, step time and MFU its cost model (not a
# measurement).
#
#   benchmarks/position-bias.sh
#   TGCS="old/build/bin/tgc build/bin/tgc" SEQ=1024 benchmarks/position-bias.sh
#
# Environment:
#   TGCS          the tgc binaries to compare (default: build/bin/tgc)
#   LAYERS, HEADS the model (default 6, 12)
#   SEQ, BATCH    sequence length and batch (default 512, 8)
#   DEVICE        the device modelled (default: H100-SXM)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$ROOT/benchmarks/common.sh"
bench_init "$@"
TGCS=${TGCS:-$ROOT/build/bin/tgc}
LAYERS=${LAYERS:-6}
HEADS=${HEADS:-12}
SEQ=${SEQ:-512}
BATCH=${BATCH:-8}
DEVICE=${DEVICE:-H100-SXM}
# shellcheck disable=SC2086
bench_need $TGCS

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 - "$work/model.mlir" "$LAYERS" "$HEADS" "$SEQ" "$BATCH" <<'PY'
import sys
path, layers, heads, seq, batch = sys.argv[1], *map(int, sys.argv[2:])
d = 64
h = heads * d
t = lambda *s: "tensor<%sxf32>" % "x".join(map(str, s))
args = ['%%x: %s {tg.role = "input", tg.name = "x"}' % t(batch, seq, h),
        '%%c: %s {tg.role = "input", tg.name = "c"}' % t(batch, seq, h),
        '%%pb: %s {tg.role = "param", tg.name = "position_bias"}' % t(1, heads, seq, seq)]
body = []
x = "%x"
for l in range(layers):
    for w in "qkvo":
        args.append('%%w%s%d: %s {tg.role = "param", tg.name = "l%d.%s"}' % (w, l, t(h, h), l, w))
    heads_of = {}
    for w in "qkv":
        body.append("%%%s%d = tg.matmul %s, %%w%s%d : (%s, %s) -> %s" % (w, l, x, w, l, t(batch, seq, h), t(h, h), t(batch, seq, h)))
        body.append("%%%s%dr = tg.reshape %%%s%d : %s -> %s" % (w, l, w, l, t(batch, seq, h), t(batch, seq, heads, d)))
        body.append("%%%s%dt = tg.transpose %%%s%dr perm = [0, 2, 1, 3] : %s -> %s" % (w, l, w, l, t(batch, seq, heads, d), t(batch, heads, seq, d)))
    body.append("%%a%d, %%lse%d = tg.attention %%q%dt, %%k%dt, %%v%dt bias %%pb scale = 1.000000e+00 : (%s, %s, %s, %s) -> (%s, %s)" % (
        l, l, l, l, l, t(batch, heads, seq, d), t(batch, heads, seq, d), t(batch, heads, seq, d), t(1, heads, seq, seq), t(batch, heads, seq, d), t(batch, heads, seq)))
    body.append("%%a%dt = tg.transpose %%a%d perm = [0, 2, 1, 3] : %s -> %s" % (l, l, t(batch, heads, seq, d), t(batch, seq, heads, d)))
    body.append("%%a%dr = tg.reshape %%a%dt : %s -> %s" % (l, l, t(batch, seq, heads, d), t(batch, seq, h)))
    body.append("%%o%d = tg.matmul %%a%dr, %%wo%d : (%s, %s) -> %s" % (l, l, l, t(batch, seq, h), t(h, h), t(batch, seq, h)))
    body.append("%%x%d = tg.add %s, %%o%d : %s" % (l, x, l, t(batch, seq, h)))
    x = "%%x%d" % l
body.append("%%w = tg.mul %s, %%c : %s" % (x, t(batch, seq, h)))
body.append("%%loss = tg.reduce sum %%w dims = [0, 1, 2] : %s -> tensor<f32>" % t(batch, seq, h))
with open(path, "w") as f:
    f.write("func.func @main(%s) -> (tensor<f32> {tg.role = \"loss\"}) {\n" % ",\n    ".join(args))
    f.write("".join("  %s\n" % line for line in body))
    f.write("  return %loss : tensor<f32>\n}\n")
PY

echo "$LAYERS layers of $HEADS heads of 64, seq $SEQ, batch $BATCH, one trained"
echo "position bias [1, $HEADS, $SEQ, $SEQ]; f32 AdamW step on $DEVICE."
echo
echo "| tgc | bias gradient | peak (GiB) | arena (GiB) | HBM traffic (GiB) | step time, modelled (ms) | MFU, modelled |"
echo "|---|---|---|---|---|---|---|"
for tgc in $TGCS; do
  "$tgc" compile "$work/model.mlir" --train -o "$work/step.mlir"
  if grep -q "tg.attention_bias_grad" "$work/step.mlir"; then
    form="tg.attention_bias_grad"
  else
    form="composed ($(grep -c 'tg.exp ' "$work/step.mlir") exp)"
  fi
  "$tgc" report "$work/model.mlir" --train --device "$DEVICE" --json >"$work/r.json"
  python3 - "$work/r.json" "$tgc" "$form" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
gib = lambda b: "%.2f" % (b / 1073741824)
print("| %s | %s | %s | %s | %s | %.2f | %.1f%% |" % (
    sys.argv[2], sys.argv[3], gib(r["peak_bytes"]), gib(r["arena_bytes"]),
    gib(r["hbm_bytes"]), r["step_time_s"] * 1000, r["mfu"] * 100))
PY
done
