#!/usr/bin/env bash
# Where gradients and dropouts are reduced or gathered under a mesh, modelled
# on the CPU machine (no GPU is measured): GPT-2 124M, seq 1024, bf16 mixed
# precision, AdamW, one node of H100s.
#
#   benchmarks/reduce-once.sh
#
# Two tables, from `tgc report --train --json`:
#   micro-batches  dp=8, 4 micro-batches of 8 sequences per device: ZeRO-1
#                  with gradient buckets of 4 MiB and without, ZeRO-2.
#                  ZeRO-1 sums each device's micro-batch gradients in f32
#                  and all-reduces the sum once; ZeRO-2 reduce-scatters each
#                  micro-batch's bf16 gradient (not in buckets at this size:
#                  --scatter-buckets auto), so that each device holds only
#                  its block of the sum (docs/sharding.md, "Overlap").
#   dropout        tp=2 and tp=4 with sequence parallelism, dropout 0.1, 8
#                  sequences: the residual dropouts split on the sequence
#                  draw their part of the whole mask where they are
#                  (docs/sharding.md, "What is not done yet").
# Columns: bytes each device sends, the collectives' modelled time, the part
# of it exposed as scheduled, the modelled step time (two streams) and the
# simulated peak per device.
#
# Environment: TGC, TGC_ZOO (default build/bin/), DEVICE (default H100-SXM).
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/common.sh
bench_init "$@"
TGC=${TGC:-build/bin/tgc}
TGC_ZOO=${TGC_ZOO:-build/bin/tgc-zoo}
bench_need "$TGC" "$TGC_ZOO"
DEVICE=${DEVICE:-H100-SXM}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

row() {
  local label=$1 model=$2
  shift 2
  "$TGC" report "$model" --train --precision bf16 --device "$DEVICE" --json \
    "$@" 2>/dev/null >"$work/report.json" || die "tgc report $label failed"
  python3 - "$label" "$work/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[2]))
print("| %s | %.2f GB | %.3f ms | %.3f ms | %.3f ms | %.2f GB |" % (
    sys.argv[1], r["communication_bytes"] / 1e9,
    r["communication_time_s"] * 1e3, r["exposed_communication_s"] * 1e3,
    r["step_time_s"] * 1e3, r["peak_bytes"] / 1e9))
PY
}

"$TGC_ZOO" gpt2 --preset 124m --seq 1024 --batch 64 --dropout 0 \
  -o "$work/micro.mlir"
echo "| dp=8, bf16, 4 micro-batches | sent per device | communication | exposed | step | peak |"
echo "|---|---|---|---|---|---|"
row "ZeRO-1, 4 MiB buckets" "$work/micro.mlir" --mesh dp=8 --zero 1 \
  --micro-batches 4
row "ZeRO-1, no buckets" "$work/micro.mlir" --mesh dp=8 --zero 1 \
  --micro-batches 4 --grad-bucket-mb 0
row "ZeRO-2" "$work/micro.mlir" --mesh dp=8 --zero 2 --micro-batches 4
echo

"$TGC_ZOO" gpt2 --preset 124m --seq 1024 --batch 8 --dropout 0.1 \
  -o "$work/dropout.mlir"
echo "| dropout 0.1, sequence parallel | sent per device | communication | exposed | step | peak |"
echo "|---|---|---|---|---|---|"
for tp in 2 4; do
  row "tp=$tp" "$work/dropout.mlir" --mesh "tp=$tp" --sequence-parallel
done
