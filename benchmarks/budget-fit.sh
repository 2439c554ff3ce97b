#!/usr/bin/env bash
# `tgc compile --memory-budget B` near the step's own peak: the recompute
# planner predicts the scheduled step's peak, tg-fuse then changes buffers,
# so the compiled step's peak is not the prediction. tgc compile plans
# again when the compiled step overshoots the budget (the planner's target
# tightened) or leaves more than 0.1% of it free having recomputed (the
# target loosened); docs/recompute.md. For each budget: the kept plan's
# target and recomputed activations (its --explain summary), the compiled
# step's peak and modelled step time (tgc report of the output) and the
# compile's wall time; with TGC_BEFORE, the same for another tgc binary
# (a build of an earlier commit) beside it.
#
#   benchmarks/budget-fit.sh                  # Llama 7B, seq 4096, batch 1
#   TGC_BEFORE=/tmp/tgc-old BUDGETS="110e9 120e9" benchmarks/budget-fit.sh
#
# Environment:
#   TGC, TGC_ZOO   the binaries (default: build/bin/ of this checkout)
#   TGC_BEFORE     another tgc to compare with (default: none)
#   MODEL, PRESET  the zoo model (llama, 7b); SEQ, BATCH (4096, 1)
#   BUDGETS        budgets in bytes, awk numbers (default: 110e9 115e9
#                  119e9 120e9 122e9 124e9)
#   DEVICE         the device planned for (default: H100-SXM)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$ROOT/benchmarks/common.sh"
bench_init "$@"
TGC=${TGC:-$ROOT/build/bin/tgc}
TGC_ZOO=${TGC_ZOO:-$ROOT/build/bin/tgc-zoo}
TGC_BEFORE=${TGC_BEFORE:-}
MODEL=${MODEL:-llama}
PRESET=${PRESET:-7b}
SEQ=${SEQ:-4096}
BATCH=${BATCH:-1}
BUDGETS=${BUDGETS:-110e9 115e9 119e9 120e9 122e9 124e9}
DEVICE=${DEVICE:-H100-SXM}
bench_need "$TGC" "$TGC_ZOO"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$TGC_ZOO" "$MODEL" --preset "$PRESET" --seq "$SEQ" --batch "$BATCH" \
  -o "$work/model.mlir"

# report TGC FILE: "peak step_time_s" of a compiled step.
report() {
  "$1" report "$2" --json | awk -F'[:,]' '
    /^  "peak_bytes"/ { peak = $2 + 0 }
    /^  "step_time_s"/ { time = $2 + 0 }
    END { printf "%.0f %.6f\n", peak, time }'
}

# row TGC BUDGET: "target recomputed peak step_ms compile_s".
row() {
  local start end summary
  start=$(date +%s.%N)
  summary=$("$1" compile "$work/model.mlir" --optimizer adamw \
    --device "$DEVICE" --memory-budget "$2" --explain -o "$work/step.mlir" \
    2>&1 | grep 'tg-recompute: budget' | tail -1)
  end=$(date +%s.%N)
  read -r peak time < <(report "$1" "$work/step.mlir")
  echo "$summary" | awk -v peak="$peak" -v time="$time" \
    -v seconds="$(awk "BEGIN { print $end - $start }")" '{
      for (i = 1; i <= NF; i++) {
        if ($i == "budget") target = $(i + 1)
        if ($i == "of" && $(i + 2) == "activations") recomputed = $(i - 1)
      }
      printf "%.3f %s %.3f %.3f %.2f", target / 1e9, recomputed, peak / 1e9,
             time * 1e3, seconds }'
}

"$TGC" compile "$work/model.mlir" --optimizer adamw --device "$DEVICE" \
  -o "$work/plain.mlir"
read -r plainPeak plainTime < <(report "$TGC" "$work/plain.mlir")
printf '%s %s, seq %s, batch %s, AdamW f32 on %s: compiled without a budget %.3f GB, %.3f ms\n\n' \
  "$MODEL" "$PRESET" "$SEQ" "$BATCH" "$DEVICE" \
  "$(awk "BEGIN { print $plainPeak / 1e9 }")" \
  "$(awk "BEGIN { print $plainTime * 1e3 }")"
header="| budget GB | target GB | recomputed | peak GB | step ms | compile s |"
rule="|---:|---:|---:|---:|---:|---:|"
if [[ -n "$TGC_BEFORE" ]]; then
  header="$header before: target GB | recomputed | peak GB | step ms | compile s |"
  rule="$rule---:|---:|---:|---:|---:|"
fi
echo "$header"
echo "$rule"
for budget in $BUDGETS; do
  bytes=$(awk "BEGIN { printf \"%.0f\", $budget }")
  line="| $(awk "BEGIN { print $bytes / 1e9 }") | $(row "$TGC" "$bytes" | tr ' ' '|' | sed 's/|/ | /g') |"
  if [[ -n "$TGC_BEFORE" ]]; then
    line="$line $(row "$TGC_BEFORE" "$bytes" | sed 's/ / | /g') |"
  fi
  echo "$line"
done
