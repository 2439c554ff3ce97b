#!/usr/bin/env bash
# Gradient buckets (tg-bucket-collectives), modelled on the CPU machine (no
# GPU is measured): GPT-2 124M, AdamW, f32, dp=8 ZeRO-1 (ZERO=2 or 3: its
# reduce-scatters) on one node of H100s, one sequence per device, at seq
# 64 (bound by its communication) and seq 1024, for bucket sizes from none
# (one collective per gradient) up. An all-reduce bucket is one all-reduce
# of its gradients laid one after the other; the memory plan has their
# producers write them in place, so the buckets copy nothing. A
# reduce-scatter bucket copies its gradients in, each rank's blocks side by
# side (a concat, as FSDP's flat buffer), and reads each block where it
# lies in the result. ZeRO's parameter all-gathers form buckets too
# (--gather-buckets): each rank's blocks side by side, one all-gather, and
# one multi-tensor kernel copying every parameter out.
#
#   benchmarks/grad-buckets.sh
#   PRECISION=bf16 GATHER=never SIZES=4 benchmarks/grad-buckets.sh
#
# Columns: bucket size (--grad-bucket-mb; 0 is none), the gradient
# all-reduces, reduce-scatters and all-gathers left (the loss's included),
# the modelled step time (two
# streams), communication, exposed communication as scheduled, the
# simulated peak and the memory plan's arena per device.
#
# Environment: TGC, TGC_ZOO (default build/bin/), SIZES (default
# "0 1 4 16 25 64"), DEVICE (default H100-SXM), ZERO (default 1),
# PRECISION (default fp32), GATHER (--gather-buckets, default auto).
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/common.sh
bench_init "$@"
TGC=${TGC:-build/bin/tgc}
TGC_ZOO=${TGC_ZOO:-build/bin/tgc-zoo}
bench_need "$TGC" "$TGC_ZOO"
SIZES=${SIZES:-0 1 4 16 25 64}
DEVICE=${DEVICE:-H100-SXM}
ZERO=${ZERO:-1}
PRECISION=${PRECISION:-fp32}
GATHER=${GATHER:-auto}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

printf '%-5s %6s %11s %15s %11s %9s %9s %10s %9s %9s\n' seq MiB all_reduces reduce_scatters all_gathers step_ms comm_ms exposed_ms peak_GB arena_GB
for seq in 64 1024; do
  "$TGC_ZOO" gpt2 --preset 124m --seq "$seq" --batch 8 -o "$work/model.mlir"
  for size in $SIZES; do
    "$TGC" report "$work/model.mlir" --train --mesh dp=8 --zero "$ZERO" \
      --precision "$PRECISION" --gather-buckets "$GATHER" \
      --grad-bucket-mb "$size" --device "$DEVICE" --json >"$work/report.json"
    python3 - "$work/report.json" "$seq" "$size" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
kinds = r["communication"]["by_kind"]
count = lambda kind: kinds.get(kind, {}).get("count", 0)
print("%-5s %6s %11d %15d %11d %9.3f %9.3f %10.3f %9.3f %9.3f" % (
    sys.argv[2], sys.argv[3], count("all_reduce"), count("reduce_scatter"),
    count("all_gather"),
    1e3 * r["step_time_s"], 1e3 * r["communication_time_s"],
    1e3 * r["exposed_communication_s"], r["peak_bytes"] / 1e9,
    r["arena_bytes"] / 1e9))
PY
  done
done
