#!/usr/bin/env bash
# Attention sinks (GPT-OSS: a logit per head joins each row of scores, its
# probability dropped after the softmax): what they cost written op by op,
# and after tg-raise makes each layer one tg.attention with one more key.
#
# The graph is tgc-zoo's GPT-2 with Hugging Face's eager attention (scores
# matmul, scale, causal select, softmax, matmul), each softmax made a
# softmax of the scores joined to a sink column (a constant logit of 1)
# and sliced back to the keys, as GPT-OSS's eager attention writes it.
# AdamW training steps reported by `tgc report`:
#
#   eager      the graph as written: every layer keeps its [B, H, S, S + 1]
#              probabilities for the backward (and the scores joined)
#   raised     after `tgc-opt --tg-raise`: one causal tg.attention per
#              layer, the sink a zero key in front whose score is the bias
#   no sinks   tgc-zoo's fused attention (the floor)
#
# Peak and arena are tgc's exact accounting of the planned step; step time
# and MFU are its cost model on DEVICE (a model, not a measurement).
#
#   benchmarks/sinks-attention.sh
#   PRESET=355m SEQ=2048 BATCH=4 benchmarks/sinks-attention.sh
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
"$TGC_ZOO" gpt2 "${common[@]}" --attention eager -o "$work/eager-nosinks.mlir"
"$TGC_ZOO" gpt2 "${common[@]}" --attention fused -o "$work/nosinks.mlir"

# `%p = tg.softmax %s dim = 3 : T` becomes the softmax of %s joined to a
# sink column, sliced back to T.
python3 - "$work/eager-nosinks.mlir" "$work/eager.mlir" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
count = 0
def sink(match):
    global count
    count += 1
    indent, result, scores, dims = match.groups()
    b, h, sq, sk = map(int, dims.split("x"))
    t = f"tensor<{dims}xf32>"
    col = f"tensor<{b}x{h}x{sq}x1xf32>"
    wide = f"tensor<{b}x{h}x{sq}x{sk + 1}xf32>"
    return (f"{indent}%sink{count} = tg.constant dense<1.000000e+00> : {col}\n"
            f"{indent}%joined{count} = tg.concat {scores}, %sink{count} dim = 3 : ({t}, {col}) -> {wide}\n"
            f"{indent}%wide{count} = tg.softmax %joined{count} dim = 3 : {wide}\n"
            f"{indent}{result} = tg.slice %wide{count} [0:{b}, 0:{h}, 0:{sq}, 0:{sk}] : {wide} -> {t}")
text = re.sub(r"( +)(%\w+) = tg\.softmax (%\w+) dim = 3 : tensor<(\d+x\d+x\d+x\d+)xf32>",
              sink, text)
if count == 0:
    sys.exit("no softmax of the scores found")
open(sys.argv[2], "w").write(text)
PY
"$TGC_OPT" --tg-raise "$work/eager.mlir" -o "$work/raised.mlir"

raised=$(bench_raised "$work/raised.mlir" "tg.attention .* causal" "tg.softmax")

echo "GPT-2 $PRESET, seq $SEQ, batch $BATCH, f32 AdamW step on $DEVICE; a sink logit per row"
echo "of every layer's scores ($raised layers)."
echo
bench_report_rows "$TGC" "$DEVICE" "$work" \
  "eager=eager: sinks joined, softmax, slice as ops" \
  "raised=raised: causal tg.attention, the sink one more key" \
  "nosinks=no sinks: tg.attention (floor)"
