#!/usr/bin/env bash
# The ZeRO paper's memory table from `tgc report --train --json`: per-device
# model states per parameter (`bytes_per_param`: the device's persistent
# training bytes over the model's parameter count) for mixed-precision AdamW
# (bf16; K = 12 bytes of optimizer state), plain data parallelism and ZeRO
# 1, 2 and 3, against the paper's formulas: 16, 4 + 12/N, 2 + 14/N, 16/N.
#
#   benchmarks/zero-memory.sh        # gpt2 124m and llama 7b, dp=8 and dp=64
#   DEVICES="6" benchmarks/zero-memory.sh   # dp=6: LLaMA's dimensions padded
#
# Environment: TGC, TGC_ZOO (default build/bin/), MODELS (model:preset list),
# DEVICES (dp sizes; default "8 64").
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/common.sh
bench_init "$@"
TGC=${TGC:-build/bin/tgc}
TGC_ZOO=${TGC_ZOO:-build/bin/tgc-zoo}
bench_need "$TGC" "$TGC_ZOO"
MODELS=${MODELS:-gpt2:124m llama:7b}
DEVICES=${DEVICES:-8 64}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

printf '%-12s %5s %6s %12s %12s %8s\n' model dp zero bytes/param paper diff%
for spec in $MODELS; do
  IFS=: read -r model preset <<<"$spec"
  for n in $DEVICES; do
    # One sequence per device: the batch is the dp size.
    "$TGC_ZOO" "$model" --preset "$preset" --seq 128 --batch "$n" --dropout 0 \
      -o "$work/model.mlir" 2>/dev/null || "$TGC_ZOO" "$model" --preset "$preset" \
      --seq 128 --batch "$n" -o "$work/model.mlir"
    for zero in 0 1 2 3; do
      # ZeRO's remarks (a padded parameter) are kept out of the table.
      "$TGC" report "$work/model.mlir" --train --precision bf16 --mesh "dp=$n" \
        --zero "$zero" --no-fuse --json >"$work/report.json" \
        2>"$work/remarks" || { cat "$work/remarks" >&2; exit 1; }
      python3 - "$work/report.json" "$model:$preset" "$n" "$zero" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
model, n, zero = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
measured = report["bytes_per_param"]
paper = [16, 4 + 12 / n, 2 + 14 / n, 16 / n][zero]
print("%-12s %5d %6d %12.4f %12.4f %8.2f" % (model, n, zero, measured, paper,
                                             100 * (measured - paper) / paper))
PY
    done
  done
done
