#!/usr/bin/env bash
# Soft-capped attention (Gemma 2's attention logit soft-capping,
# `c * tanh(s / c)` on the scaled scores before the mask): what the cap
# costs when it is written op by op, and after tg-raise makes each layer
# one tg.attention with `softcap`.
#
# The graph is tgc-zoo's GPT-2 with Hugging Face's eager attention (scores
# matmul, scale, causal select, softmax, matmul), with Gemma 2's cap
# (c = 50, a divide, a tanh and a multiply, as its eager attention writes
# it) inserted between the scale and the causal select. AdamW training
# steps reported by `tgc report`:
#
#   eager      the graph as written: every layer keeps its [B, H, S, S]
#              capped scores and probabilities for the backward (and the
#              tanh's output for the cap's gradient)
#   raised     after `tgc-opt --tg-raise`: one causal tg.attention per
#              layer with softcap = 50 (the tiled kernels cap each score as
#              they form it; nothing S x S is kept)
#   no cap     tgc-zoo's fused attention without the cap (the floor)
#
# Peak and arena are tgc's exact accounting of the planned step; step time
# and MFU are its cost model on DEVICE (a model, not a measurement: the
# cap's tanh is one transcendental more per score in each pass).
#
#   benchmarks/softcap-attention.sh
#   PRESET=355m SEQ=2048 BATCH=4 benchmarks/softcap-attention.sh
#
# Environment:
#   TGC, TGC_OPT, TGC_ZOO  the binaries (default: build/bin/ of this checkout)
#   PRESET                 tgc-zoo's gpt2 preset (default 124m)
#   SEQ, BATCH             sequence length and batch (default: 1024, 8)
#   DEVICE                 the device modelled (default: H100-SXM)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$ROOT/benchmarks/common.sh"
bench_gpt2_attention "$ROOT" "$@"
"$TGC_ZOO" gpt2 "${common[@]}" --attention eager -o "$work/eager-nocap.mlir"
"$TGC_ZOO" gpt2 "${common[@]}" --attention fused -o "$work/nocap.mlir"

# The cap on the scores the causal select reads: `%s = tg.select %m, %x,
# %fill` becomes a select of 50 * tanh(%x / 50).
python3 - "$work/eager-nocap.mlir" "$work/eager.mlir" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
count = 0
def cap(match):
    global count
    count += 1
    indent, result, mask, scores, fill, types, scores_type = match.groups()
    c = f"%cap{count}"
    return (f"{indent}{c} = tg.constant dense<5.000000e+01> : {scores_type}\n"
            f"{indent}%capdiv{count} = tg.div {scores}, {c} : {scores_type}\n"
            f"{indent}%captanh{count} = tg.tanh %capdiv{count} : {scores_type}\n"
            f"{indent}%capped{count} = tg.mul %captanh{count}, {c} : {scores_type}\n"
            f"{indent}{result} = tg.select {mask}, %capped{count}, {fill} : {types}")
text = re.sub(r"( +)(%\w+) = tg\.select (%\w+), (%\w+), (%\w+) : "
              r"(tensor<[^>]+xi1>, (tensor<[^>]+>))", cap, text)
if count == 0:
    sys.exit("no causal select of the scores found")
open(sys.argv[2], "w").write(text)
PY
"$TGC_OPT" --tg-raise "$work/eager.mlir" -o "$work/raised.mlir"

capped=$(bench_raised "$work/raised.mlir" \
  "tg.attention .* causal .*softcap = 5.000000e+01" "tg.softmax\|tg.tanh")

echo "GPT-2 $PRESET, seq $SEQ, batch $BATCH, f32 AdamW step on $DEVICE; Gemma 2's soft cap (50)"
echo "on every layer's scores ($capped layers)."
echo
bench_report_rows "$TGC" "$DEVICE" "$work" \
  "eager=eager: capped, masked softmax as ops" \
  "raised=raised: causal tg.attention, softcap = 50" \
  "nocap=no cap: tg.attention (floor)"
