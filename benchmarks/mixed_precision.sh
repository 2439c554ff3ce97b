#!/usr/bin/env bash
# Trains the tiny GPT-2 on the synthetic copy task under every precision
# policy (same seed, interpreter with precision emulation) and prints, as a
# Markdown table, the final loss against fp32's, the skipped steps, and the
# persistent bytes per parameter of GPT-2 124M's AdamW step under the same
# policy. The goals: bf16 and fp16 within 2% of fp32, fp8 within 5%.
#
#   benchmarks/mixed_precision.sh          # from anywhere
#   STEPS=400 benchmarks/mixed_precision.sh
#
# Environment:
#   TGC, TGC_ZOO   the binaries (default: build/bin/ of this checkout)
#   STEPS          training steps (default: 200)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TGC=${TGC:-$ROOT/build/bin/tgc}
TGC_ZOO=${TGC_ZOO:-$ROOT/build/bin/tgc-zoo}
STEPS=${STEPS:-200}

case "${1:-}" in
  -h | --help)
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"
    exit 0
    ;;
  "") ;;
  *)
    echo "usage: $0 [--help]" >&2
    exit 2
    ;;
esac

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
"$TGC_ZOO" gpt2 --preset tiny --seq 16 --batch 4 --dropout 0 -o "$WORK/tiny.mlir"
"$TGC_ZOO" gpt2 --preset 124m --seq 1024 --batch 1 --dropout 0 -o "$WORK/124m.mlir"

echo "| policy | final loss ($STEPS steps) | vs fp32 | skipped steps | train time (s) | GPT-2 124M bytes/param |"
echo "|---|---|---|---|---|---|"
reference=""
for policy in fp32 bf16 fp16 fp8; do
  out=$("$TGC" train "$WORK/tiny.mlir" --steps "$STEPS" --lr 3e-3 \
    --log-every "$STEPS" --precision "$policy")
  summary=$(grep '^trained' <<<"$out")
  loss=${summary##*-> }
  seconds=$(sed -E 's/.* in ([0-9.]+) s:.*/\1/' <<<"$summary")
  skipped=$(grep -oE '^[0-9]+ step\(s\) skipped' <<<"$out" | cut -d' ' -f1 || true)
  bytes=$("$TGC" report "$WORK/124m.mlir" --train --precision "$policy" |
    awk '/^persistent training memory/ { table = 1 }
         table && $1 == "total" { print $NF; table = 0 }')
  if [[ -z $reference ]]; then
    reference=$loss
    relative=""
  else
    relative=$(awk -v a="$loss" -v b="$reference" 'BEGIN { printf "%+.2f%%", 100 * (a - b) / b }')
  fi
  echo "| $policy | $loss | $relative | ${skipped:-0} | $seconds | $bytes |"
done
