#!/usr/bin/env bash
# `tgc plan` on the issue's two cases, with the wall time of each search:
# llama 70b (seq 4096, global batch 1024 sequences) on 64 H100s, and gpt2
# 1.5b (seq 1024, global batch 1024 sequences, llm.c's 1M tokens) on 8.
#
#   benchmarks/plan.sh
#
# Environment: TGC, TGC_ZOO (default build/bin/); TGC_PLAN_THREADS (default:
# one per physical core) sets tgc plan's worker threads.
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/common.sh
bench_init "$@"
TGC=${TGC:-build/bin/tgc}
TGC_ZOO=${TGC_ZOO:-build/bin/tgc-zoo}
bench_need "$TGC" "$TGC_ZOO"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

run() {
  local name=$1 devices=$2 batch=$3
  shift 3
  "$TGC_ZOO" "$@" --batch 1 -o "$work/$name.mlir"
  echo "== $name on $devices x H100-SXM, global batch $batch"
  local start=$EPOCHREALTIME
  # A plan that finds nothing prints why; the wall time still counts.
  "$TGC" plan "$work/$name.mlir" --devices "$devices" --global-batch "$batch" \
    --device H100-SXM --explain || echo "(tgc plan exited with status $?)"
  awk -v s="$start" -v e="$EPOCHREALTIME" 'BEGIN { printf "wall time: %.1f s\n\n", e - s }'
}
run llama-70b 64 1024 llama --preset 70b --seq 4096
run gpt2-1.5b 8 1024 gpt2 --preset 1.5b --seq 1024
