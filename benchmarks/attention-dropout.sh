#!/usr/bin/env bash
# Attention dropout (GPT-2's attn_pdrop): what it costs when the dropout
# of the probabilities is its own op, and after tg-raise makes each layer
# one tg.attention with `dropout`.
#
# The graph is tgc-zoo's GPT-2 with dropout 0.1 (embeddings, residuals and
# attention probabilities, GPT-2's defaults) and Hugging Face's eager
# attention (scores matmul, scale, causal select, softmax, dropout,
# matmul). AdamW training steps reported by `tgc report`:
#
#   eager      the graph as written: every layer keeps its [B, H, S, S]
#              probabilities (and their dropped copy) for the backward
#   raised     after `tgc-opt --tg-raise`: one causal tg.attention per
#              layer with dropout = 0.1 (the kernels draw the mask where
#              they use it; nothing S x S is kept)
#   fused      tgc-zoo's fused attention with the same dropout (what the
#              raise should reach)
#   no dropout tgc-zoo's fused attention without attention dropout, the
#              residual and embedding dropouts kept (the floor)
#
# Peak and arena are tgc's exact accounting of the planned step; step time
# and MFU are its cost model on DEVICE (a model, not a measurement: the
# Philox draws are integer work it does not count, see TGCost.cpp).
#
#   benchmarks/attention-dropout.sh
#   PRESET=355m SEQ=2048 BATCH=4 benchmarks/attention-dropout.sh
#
# Environment:
#   TGC, TGC_OPT, TGC_ZOO  the binaries (default: build/bin/ of this checkout)
#   PRESET                 tgc-zoo's gpt2 preset (default 124m)
#   SEQ, BATCH             sequence length and batch (default: 1024, 8)
#   RATE                   the dropout rate (default 0.1)
#   DEVICE                 the device modelled (default: H100-SXM)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RATE=${RATE:-0.1}
. "$ROOT/benchmarks/common.sh"
bench_gpt2_attention "$ROOT" "$@"
common+=(--dropout "$RATE")
"$TGC_ZOO" gpt2 "${common[@]}" --attention eager -o "$work/eager.mlir"
"$TGC_ZOO" gpt2 "${common[@]}" --attention fused -o "$work/fused.mlir"
"$TGC_OPT" --tg-raise "$work/eager.mlir" -o "$work/raised.mlir"

# The floor: the fused attention without its dropout (the other dropouts
# stay).
sed -E '/tg\.attention /{s/ dropout = [^ ]+ seed %[a-z0-9_]+ stream = [0-9]+//
  s/, tensor<i64>\) -> \(tensor/) -> (tensor/}' "$work/fused.mlir" \
  >"$work/nodropout.mlir"

dropped=$(bench_raised "$work/raised.mlir" "tg.attention .* causal .*dropout = " "tg.softmax")
grep -q "tg.attention .*dropout = " "$work/nodropout.mlir" &&
  die "the floor still has attention dropout"

echo "GPT-2 $PRESET, seq $SEQ, batch $BATCH, f32 AdamW step on $DEVICE; dropout $RATE"
echo "(embeddings, residuals, and the attention probabilities of $dropped layers)."
echo
bench_report_rows "$TGC" "$DEVICE" "$work" \
  "eager=eager: softmax, dropout as ops" \
  "raised=raised: causal tg.attention, dropout = $RATE" \
  "fused=tgc-zoo fused, dropout = $RATE" \
  "nodropout=no attention dropout (floor)"
