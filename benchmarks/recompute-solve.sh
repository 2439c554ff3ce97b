#!/usr/bin/env bash
# The budgeted recompute solve against the planner's frontier, on the zoo's
# AdamW training steps (f32). For each model, the step as tg-recompute sees
# it in the pipeline (tgc compile --no-fuse --no-schedule --no-memory-plan),
# its frontier (tgc report MODEL --optimizer adamw --recompute-frontier: the
# planner on that same step; every plan of the planner's
# pool that no other beats on both simulated peak and extra time) and, at 10
# budgets from the smallest feasible peak to the peak without recomputation,
# the budgeted solve (tgc-opt --tg-recompute='budget=B explain'):
#
#   solve ms     the solve's extra time (the cost model's; the remark's 3
#                significant digits)
#   frontier ms  the least extra time of a frontier plan whose simulated peak
#                is at most the budget (rounded the same way)
#   ratio        solve / frontier (must be <= 1.00; 1.00 where both are 0)
#   predicted    the planner's peak: the rewritten step scheduled as
#                tg-schedule will order it, before fusion
#   solve s      tg-recompute's wall time (--mlir-timing)
#   plans        the plans simulated by the solve
#
# Then, per model: the smallest feasible peak, the frontier's time, and one
# whole `tgc compile --optimizer adamw --memory-budget B` at the middle
# budget: its wall time, the planner's predicted peak and the compiled step's
# peak (`tgc report` of the output; fusion runs after the planner and
# changes buffers).
#
#   benchmarks/recompute-solve.sh
#   MODELS="gpt2:124m:1024:8" benchmarks/recompute-solve.sh
#
# Environment:
#   TGC, TGC_OPT, TGC_ZOO  the binaries (default: build/bin/ of this checkout)
#   DEVICE                 the device planned for (default: H100-SXM)
#   MODELS                 model:preset:seq:batch list (default: gpt2:124m:1024:8
#                          llama:7b:4096:1 llama:70b:4096:1)
#   BUDGETS                budgets per model (default: 10)
#   COMPILE                0 skips the whole compile (default: 1)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TGC=${TGC:-$ROOT/build/bin/tgc}
TGC_OPT=${TGC_OPT:-$ROOT/build/bin/tgc-opt}
TGC_ZOO=${TGC_ZOO:-$ROOT/build/bin/tgc-zoo}
DEVICE=${DEVICE:-H100-SXM}
MODELS=${MODELS:-gpt2:124m:1024:8 llama:7b:4096:1 llama:70b:4096:1}
BUDGETS=${BUDGETS:-10}
COMPILE=${COMPILE:-1}

. "$ROOT/benchmarks/common.sh"
bench_init "$@"
bench_need "$TGC" "$TGC_OPT" "$TGC_ZOO"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

gib() { awk -v b="$1" 'BEGIN { printf "%.2f", b / 1073741824 }'; }
ms() { awk -v s="$1" 'BEGIN { printf "%.3f", s * 1000 }'; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# solve STEP BUDGET: prints "predicted extra_s plans solve_s" or "infeasible".
solve() {
  local out
  if ! out=$("$TGC_OPT" "$1" --tg-recompute="budget=$2 device=$DEVICE explain" \
      --mlir-print-op-on-diagnostic=false --mlir-timing -o /dev/null 2>&1); then
    echo infeasible
    return
  fi
  echo "$out" | awk '
    /tg-recompute: budget .*activations recomputed/ {
      for (i = 1; i <= NF; i++) {
        if ($i == "->") peak = $(i + 1)
        if ($i == "time" && $(i - 1) == "extra") extra = $(i + 1)
        if ($i == "plans") plans = $(i - 1)
      }
    }
    $NF == "TGRecompute" { t = $1 }
    END { printf "%s %s %s %.2f\n", peak, extra, plans ? plans : 0, t }'
}

echo "| model | budget GiB | solve ms | frontier ms | ratio | predicted GiB | solve s | plans |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
summary=()
for spec in $MODELS; do
  IFS=: read -r model preset seq batch <<<"$spec"
  name="$model $preset"
  "$TGC_ZOO" "$model" --preset "$preset" --seq "$seq" --batch "$batch" -o "$work/graph.mlir"
  step="$work/step.mlir"
  "$TGC" compile "$work/graph.mlir" --optimizer adamw --no-fuse --no-schedule \
    --no-memory-plan --device "$DEVICE" -o "$step"
  start=$(now)
  "$TGC" report "$work/graph.mlir" --optimizer adamw --device "$DEVICE" --recompute-frontier 1000000 |
    awk 'NR > 2 { print $1, $2 }' >"$work/frontier"
  frontier_s=$(since "$start")
  low=$(head -1 "$work/frontier" | cut -d' ' -f1)
  high=$(tail -1 "$work/frontier" | cut -d' ' -f1)
  worst=0
  for ((i = 0; i < BUDGETS; i++)); do
    budget=$(awk -v l="$low" -v h="$high" -v i="$i" -v n="$((BUDGETS - 1))" \
      'BEGIN { printf "%.0f", l + (h - l) * i / (n > 0 ? n : 1) }')
    best=$(awk -v b="$budget" '$1 <= b { print $2 }' "$work/frontier" | sort -g | head -1)
    result=$(solve "$step" "$budget")
    if [[ $result == infeasible ]]; then
      printf "| %s | %s | infeasible | %s | - | - | - | - |\n" "$name" "$(gib "$budget")" "$(ms "$best")"
      worst=inf
      continue
    fi
    read -r peak extra plans t <<<"$result"
    ratio=$(awk -v s="$extra" -v f="$(printf '%.2e' "$best")" \
      'BEGIN { printf "%.2f", (f > 0 ? s / f : (s > 0 ? 1e9 : 1)) }')
    worst=$(awk -v a="$worst" -v b="$ratio" 'BEGIN { print (b > a) ? b : a }')
    printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n" "$name" "$(gib "$budget")" \
      "$(ms "$extra")" "$(ms "$best")" "$ratio" "$(gib "$peak")" "$t" "$plans"
  done
  line="$name: smallest feasible peak $low bytes ($(gib "$low") GiB), without recomputation $high bytes; frontier of $(wc -l <"$work/frontier") plans in ${frontier_s} s; worst ratio $worst"
  if [[ $COMPILE == 1 ]]; then
    budget=$(awk -v l="$low" -v h="$high" 'BEGIN { printf "%.0f", (l + h) / 2 }')
    start=$(now)
    predicted=$("$TGC" compile "$work/graph.mlir" --optimizer adamw --memory-budget "$budget" \
      --device "$DEVICE" --explain -o "$work/compiled.mlir" 2>&1 |
      sed -n 's/.*tg-recompute: budget .* -> \([0-9]*\) bytes.*/\1/p')
    compile_s=$(since "$start")
    final=$("$TGC" report "$work/compiled.mlir" --device "$DEVICE" --json |
      sed -n 's/^  "peak_bytes": \([0-9]*\),/\1/p' | head -1)
    line+="; tgc compile --memory-budget $budget: ${compile_s} s, predicted peak $predicted, compiled step's peak $final ($(awk -v p="$predicted" -v f="$final" 'BEGIN { printf "%+.3f%%", 100 * (f - p) / p }'))"
  fi
  summary+=("$line")
done
for line in "${summary[@]}"; do
  echo
  echo "$line"
done
