#!/usr/bin/env bash
# Communication overlapping compute, as the cost model sees it (modelled on
# the CPU machine; no GPU is measured): for each configuration, the modelled
# step time on two streams, the communication, the part of it exposed if
# nothing overlaps (all of it), in the memory order alone (--no-overlap) and
# as tg-schedule overlaps it, the model FLOP utilization and tokens/s per GPU.
#
#   benchmarks/overlap.sh          # gpt2 1.5b ZeRO-1 and llama 8b ZeRO-3, 8xH100
#
# Configurations (tgc-zoo model, options, tgc report options, tokens/step):
#   gpt2-1.5b   llm.c's GPT-2 XL run: seq 1024, 16 sequences per GPU per
#               micro-batch, 8 micro-batches: 1,048,576 tokens per step;
#               bf16, AdamW, dp=8 ZeRO-1
#   llama-8b    Llama 3 8B's shape (hidden 4096, 32 layers, 32 heads, 8 kv
#               heads, intermediate 14336, vocab 128256) at seq 8192, one
#               sequence per GPU; bf16, AdamW, dp=8 ZeRO-3 (FSDP)
#
# Environment: TGC, TGC_ZOO (default build/bin/), CONFIGS (names above;
# default both), DEVICE (default H100-SXM).
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/common.sh
bench_init "$@"
TGC=${TGC:-build/bin/tgc}
TGC_ZOO=${TGC_ZOO:-build/bin/tgc-zoo}
bench_need "$TGC" "$TGC_ZOO"
CONFIGS=${CONFIGS:-gpt2-1.5b llama-8b}
DEVICE=${DEVICE:-H100-SXM}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

declare -A ZOO REPORT TOKENS
ZOO[gpt2-1.5b]="gpt2 --preset 1.5b --seq 1024 --batch 128"
REPORT[gpt2-1.5b]="--mesh dp=8 --zero 1 --precision bf16 --micro-batches 8"
TOKENS[gpt2-1.5b]=$((1024 * 128 * 8))
ZOO[llama-8b]="llama --preset 7b --hidden 4096 --layers 32 --heads 32 --kv-heads 8 --intermediate 14336 --vocab 128256 --rope-theta 500000 --seq 8192 --batch 8"
REPORT[llama-8b]="--mesh dp=8 --zero 3 --precision bf16"
TOKENS[llama-8b]=$((8192 * 8))

printf '%-10s %-10s %9s %9s %9s %10s %9s %9s %6s %11s %8s %6s\n' config order \
  step_s no_ovl_s comm_s exp_no_ovl exposed_s exp_share mfu tok/s/GPU peak_GB time
for config in $CONFIGS; do
  [ -n "${ZOO[$config]:-}" ] || die "unknown configuration '$config'"
  # shellcheck disable=SC2086
  "$TGC_ZOO" ${ZOO[$config]} -o "$work/model.mlir"
  for order in memory overlapped; do
    flags=${REPORT[$config]}
    [ "$order" = memory ] && flags="$flags --no-overlap"
    start=$(date +%s)
    # shellcheck disable=SC2086
    "$TGC" report "$work/model.mlir" --train $flags --device "$DEVICE" --json \
      >"$work/report.json"
    seconds=$(($(date +%s) - start))
    python3 - "$work/report.json" "$config" "$order" "${TOKENS[$config]}" \
      "$seconds" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
config, order, tokens, seconds = sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
devices = r["mesh"]["devices"]
step = r["step_time_s"]
exposed = r["exposed_communication_s"]
print("%-10s %-10s %9.4f %9.4f %9.4f %10.4f %9.4f %8.1f%% %5.1f%% %11.0f %8.1f %5ss" % (
    config, order, step, r["step_time_no_overlap_s"], r["communication_time_s"],
    r["exposed_communication_no_overlap_s"], exposed, 100 * exposed / step,
    100 * r["mfu"], tokens / step / devices, r["peak_bytes"] / 1e9, seconds))
PY
  done
done
