#!/usr/bin/env bash
# tg-recompute on the zoo's AdamW training steps: for each model, the
# simulated peak and extra (recompute) time of the baselines none, full (keep
# only each block's input) and sqrt (keep every sqrt(n)-th block input), then
# the DP at budgets from the smallest feasible peak to the peak without
# recomputation, with the solve time (tg-recompute's wall time in
# --mlir-timing: the planner, every simulation and the rewrite).
# The DP is never worse than a baseline at the same or a larger peak: it
# falls back to a baseline whose simulated peak fits when that is cheaper.
#
#   benchmarks/recompute.sh                  # gpt2 124m, gpt2 1.5b, llama 7b
#   MODELS="llama:70b" SEQ=4096 benchmarks/recompute.sh
#
# Environment:
#   TGC, TGC_OPT, TGC_ZOO  the binaries (default: build/bin/ of this checkout)
#   DEVICE                 the device planned for (default: H100-SXM)
#   MODELS                 model:preset list (default: gpt2:124m gpt2:1.5b llama:7b)
#   SEQ, BATCH             sequence length and batch (default: 1024, 8)
#   STEPS                  DP budgets per model (default: 5)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TGC=${TGC:-$ROOT/build/bin/tgc}
TGC_OPT=${TGC_OPT:-$ROOT/build/bin/tgc-opt}
TGC_ZOO=${TGC_ZOO:-$ROOT/build/bin/tgc-zoo}
DEVICE=${DEVICE:-H100-SXM}
MODELS=${MODELS:-gpt2:124m gpt2:1.5b llama:7b}
SEQ=${SEQ:-1024}
BATCH=${BATCH:-8}
STEPS=${STEPS:-5}

. "$ROOT/benchmarks/common.sh"
bench_init "$@"
bench_need "$TGC" "$TGC_OPT" "$TGC_ZOO"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# run STEP OPTIONS: prints "peak extra_s recomputed candidates solve_s" (the
# solve time is tg-recompute's own, from --mlir-timing) or "infeasible
# min_peak".
run() {
  local out
  if out=$("$TGC_OPT" "$1" --tg-recompute="$2 device=$DEVICE explain" \
      --mlir-print-op-on-diagnostic=false --mlir-timing -o /dev/null 2>&1); then
    echo "$out" | awk '
      /tg-recompute: .*activations recomputed/ {
        for (i = 1; i <= NF; i++) {
          if ($i == "->") peak = $(i + 1)
          if ($i == "of") { n = $(i - 1); c = $(i + 1) }
          if ($i == "time") extra = $(i + 1)
        }
      }
      $NF == "TGRecompute" { t = $1 }
      END { printf "%s %s %s %s %.3f\n", peak, extra, n, c, t }'
  else
    echo "$out" | sed -n 's/.*smallest feasible peak \([0-9]*\) bytes.*/infeasible \1/p' | head -1
  fi
}

gib() { awk -v b="$1" 'BEGIN { printf "%.2f", b / 1073741824 }'; }

echo "| model | strategy | budget GiB | peak GiB | extra time ms | recomputed | solve s |"
echo "|---|---|---:|---:|---:|---:|---:|"
for spec in $MODELS; do
  model=${spec%%:*}
  preset=${spec#*:}
  step="$work/$model-$preset.mlir"
  "$TGC_ZOO" "$model" --preset "$preset" --seq "$SEQ" --batch "$BATCH" -o "$work/graph.mlir"
  "$TGC" compile "$work/graph.mlir" --optimizer adamw --no-schedule --no-memory-plan \
    --device "$DEVICE" -o "$step"
  name="$model $preset"
  declare -A peaks=()
  for strategy in none sqrt full; do
    read -r peak extra n c t < <(run "$step" "strategy=$strategy")
    peaks[$strategy]=$peak
    printf "| %s | %s | - | %s | %.3f | %s/%s | %s |\n" "$name" "$strategy" \
      "$(gib "$peak")" "$(awk -v e="$extra" 'BEGIN { print e * 1000 }')" "$n" "$c" "$t"
  done
  low=${peaks[full]}
  [ "${peaks[sqrt]}" -lt "$low" ] && low=${peaks[sqrt]}
  high=${peaks[none]}
  for ((i = 0; i <= STEPS; i++)); do
    budget=$(awk -v l="$low" -v h="$high" -v i="$i" -v n="$STEPS" \
      'BEGIN { printf "%.0f", l + (h - l) * i / n }')
    result=$(run "$step" "budget=$budget")
    if [[ $result == infeasible* ]]; then
      printf "| %s | dp | %s | infeasible (min %s) | - | - | - |\n" "$name" \
        "$(gib "$budget")" "$(gib "${result#infeasible }")"
      continue
    fi
    read -r peak extra n c t <<<"$result"
    printf "| %s | dp | %s | %s | %.3f | %s/%s | %s |\n" "$name" "$(gib "$budget")" \
      "$(gib "$peak")" "$(awk -v e="$extra" 'BEGIN { print e * 1000 }')" "$n" "$c" "$t"
  done
done
