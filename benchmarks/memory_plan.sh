#!/usr/bin/env bash
# Builds the AdamW training step of every zoo model preset and prints, as a
# Markdown table, the simulated peak before and after tg-schedule and the
# arena tg-memory-plan allocates against its lower bound (the peak of live
# 256-byte-aligned bytes). The goal: arena within 5% of the peak.
#
#   benchmarks/memory_plan.sh              # from anywhere
#   DEVICE=A100-80GB benchmarks/memory_plan.sh
#
# Environment:
#   TGC, TGC_OPT, TGC_ZOO  the binaries (default: build/bin/ of this checkout)
#   DEVICE                 the device planned for (default: H100-SXM)
#   SEQ, BATCH             sequence length and batch (default: 1024, 1)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TGC=${TGC:-$ROOT/build/bin/tgc}
TGC_OPT=${TGC_OPT:-$ROOT/build/bin/tgc-opt}
TGC_ZOO=${TGC_ZOO:-$ROOT/build/bin/tgc-zoo}
DEVICE=${DEVICE:-H100-SXM}
SEQ=${SEQ:-1024}
BATCH=${BATCH:-1}

. "$ROOT/benchmarks/common.sh"
bench_init "$@"
bench_need "$TGC" "$TGC_OPT" "$TGC_ZOO"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

gib() { awk -v b="$1" 'BEGIN { printf "%.3f", b / 1073741824 }'; }

echo "AdamW training steps, seq $SEQ, batch $BATCH, fp32, dropout as in the preset, on $DEVICE."
echo "Peaks as tg-schedule sees them (without the GEMM library's workspace);"
echo "arena and bound include it (tg-memory-plan plans it)."
echo
echo "| model | ops | peak before tg-schedule (GiB) | peak after (GiB) | change | arena (GiB) | lower bound (GiB) | arena / bound |"
echo "|---|---|---|---|---|---|---|---|"
for model in "mlp" "gpt2 tiny" "gpt2 124m" "gpt2 355m" "gpt2 774m" "gpt2 1.5b" \
  "llama tiny" "llama 7b" "llama 13b" "llama 70b"; do
  set -- $model
  name=$1
  preset=${2:-}
  args=("$name")
  if [ -n "$preset" ]; then
    args+=(--preset "$preset")
  fi
  if [ "$name" != mlp ]; then
    args+=(--seq "$SEQ" --batch "$BATCH")
  fi
  "$TGC_ZOO" "${args[@]}" -o "$work/model.mlir"
  "$TGC" compile "$work/model.mlir" --optimizer adamw --no-schedule \
    --no-memory-plan -o "$work/step.mlir"
  "$TGC_OPT" "$work/step.mlir" \
    --pass-pipeline="builtin.module(func.func(tg-schedule{explain},tg-memory-plan{explain device=$DEVICE}))" \
    -o "$work/planned.mlir" 2> "$work/remarks.txt"
  ops=$(grep -c '= tg\.' "$work/planned.mlir" || true)
  read -r before after < <(sed -n 's/.*simulated peak \([0-9]*\) -> \([0-9]*\) bytes.*/\1 \2/p' "$work/remarks.txt")
  read -r arena bound < <(sed -n 's/.*arena \([0-9]*\) bytes, simulated peak [0-9]* bytes (\([0-9]*\) with.*/\1 \2/p' "$work/remarks.txt")
  change=$(awk -v a="$before" -v b="$after" 'BEGIN { printf "%+.2f%%", 100 * (b - a) / a }')
  ratio=$(awk -v a="$arena" -v b="$bound" 'BEGIN { printf "%.4f", a / b }')
  echo "| $model | $ops | $(gib "$before") | $(gib "$after") | $change | $(gib "$arena") | $(gib "$bound") | $ratio |"
done
