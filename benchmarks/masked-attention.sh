#!/usr/bin/env bash
# Padded-batch training: what a run-time attention mask costs before and
# after tg-raise turns the masked softmax into one tg.attention with a bias.
#
# The graph is tgc-zoo's GPT-2 with Hugging Face's eager attention (scores
# matmul, scale, causal select, softmax, matmul), plus what a padded batch
# adds: a per-token mask argument `attention_mask` [B, S] (f32, 0 or
# finfo.min, as Hugging Face builds it) added to every layer's scores after
# the causal select (of f32's lowest value) and before the softmax. Three
# AdamW training steps are reported by `tgc report`:
#
#   eager       the graph as written: every layer keeps its [B, H, S, S]
#               scores and probabilities for the backward
#   raised      after `tgc-opt --tg-raise`: one tg.attention per layer,
#               the causal mask and the padding mask summed into its f32
#               bias [B, 1, S, S] (one for all layers), read in place
#   raised, -inf  the same with a causal select of -inf: the causal flag
#               and the padding mask alone as the bias [B, 1, 1, S]
#   no mask     tgc-zoo's fused attention without the mask (the floor)
#
# Peak and arena are tgc's exact accounting of the planned step; step time
# and MFU are its cost model on DEVICE (a model, not a measurement).
#
#   benchmarks/masked-attention.sh
#   PRESET=355m SEQ=2048 BATCH=4 benchmarks/masked-attention.sh
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
"$TGC_ZOO" gpt2 "${common[@]}" --attention eager -o "$work/eager-nomask.mlir"
"$TGC_ZOO" gpt2 "${common[@]}" --attention fused -o "$work/nomask.mlir"

# The padded batch's mask: a new argument, broadcast to each softmax's
# scores and added to them; the causal select hides with f32's lowest
# value, as Hugging Face's GPT-2 does today (tgc-zoo writes the -1e4 of its
# older releases, which with a run-time mask added tg-raise leaves alone:
# a hidden score would be -1e4 plus the mask, which no bias gives).

python3 - "$work/eager-nomask.mlir" "$work/eager.mlir" "$work/eager-inf.mlir" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
header = re.search(r"func\.func @\w+\((%arg0: tensor<(\d+)x(\d+)xi64> \{[^}]*\})", text)
batch, seq = header.group(2), header.group(3)
mask_type = f"tensor<{batch}x{seq}xf32>"
text = text.replace(header.group(1), header.group(1) +
                    f', %attention_mask: {mask_type} {{tg.name = "attention_mask", tg.role = "input"}}', 1)
count = 0
def add_mask(match):
    global count
    count += 1
    indent, result, operand, scores = match.groups()
    return (f"{indent}%mask{count} = tg.broadcast_in_dim %attention_mask dims = [0, 3] : {mask_type} -> {scores}\n"
            f"{indent}%masked{count} = tg.add {operand}, %mask{count} : {scores}\n"
            f"{indent}{result} = tg.softmax %masked{count} dim = 3 : {scores}")
text = re.sub(r"( +)(%\w+) = tg\.softmax (%\w+) dim = 3 : (tensor<[^>]+>)", add_mask, text)
open(sys.argv[3], "w").write(text.replace("dense<-1.000000e+04> : tensor<f32>", "dense<0xFF800000> : tensor<f32>"))
text = text.replace("dense<-1.000000e+04> : tensor<f32>", "dense<-3.40282347E+38> : tensor<f32>")
if count == 0:
    sys.exit("no softmax over the keys found")
open(sys.argv[2], "w").write(text)
EOF
"$TGC_OPT" --tg-raise "$work/eager.mlir" -o "$work/raised.mlir"
"$TGC_OPT" --tg-raise "$work/eager-inf.mlir" -o "$work/raised-inf.mlir"

biased=$(bench_raised "$work/raised.mlir" "tg.attention .* bias " "tg.softmax")

echo "GPT-2 $PRESET, seq $SEQ, batch $BATCH, f32 AdamW step on $DEVICE; a run-time padding mask"
echo "added to every layer's scores ($biased layers)."
echo
bench_report_rows "$TGC" "$DEVICE" "$work" \
  "eager=eager: masked softmax as ops" \
  "raised=raised: tg.attention + bias [B, 1, S, S]" \
  "raised-inf=raised, causal select of -inf: causal tg.attention + bias [B, 1, 1, S]" \
  "nomask=no mask: tg.attention (floor)"
