#!/usr/bin/env bash
# tg-recompute on the zoo's AdamW training steps: for each model, the
# simulated peak and extra (recompute) time of the baselines none, full (keep
# only each layer's input), sqrt (keep every sqrt(n)-th layer input) and
# selective (Megatron's: the attention core, a fused tg.attention or the
# scores, softmax and dropout), then
# the DP at budgets from the smallest feasible peak to the peak without
# recomputation, and at selective's peak (how close the DP gets to
# selective's memory, at what fraction of its extra time), with the solve
# time (tg-recompute's wall time in --mlir-timing: the planner, every
# simulation and the rewrite). The DP is never worse than a baseline at the
# same or a larger peak: it falls back to a baseline whose simulated peak
# fits when that is cheaper. "recomputed" counts the candidate ops (forward
# ops whose results the backward reads) that run again.
#
# A model is model:preset, or model:preset:eager for attention written as
# separate ops (tgc-zoo --attention eager, with attention dropout 0.1): the
# graph Megatron's selective recomputation was designed for; with the
# default fused tg.attention, selective recomputes the attention op.
#
#   benchmarks/recompute.sh      # gpt2 124m (fused, eager), gpt2 1.5b, llama 7b
#   MODELS="llama:70b" SEQ=4096 benchmarks/recompute.sh
#
# Environment:
#   TGC, TGC_OPT, TGC_ZOO  the binaries (default: build/bin/ of this checkout)
#   DEVICE                 the device planned for (default: H100-SXM)
#   MODELS                 model:preset[:eager] list (default: gpt2:124m
#                          gpt2:124m:eager gpt2:1.5b llama:7b)
#   SEQ, BATCH             sequence length and batch (default: 1024, 8)
#   STEPS                  DP budgets per model (default: 5)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TGC=${TGC:-$ROOT/build/bin/tgc}
TGC_OPT=${TGC_OPT:-$ROOT/build/bin/tgc-opt}
TGC_ZOO=${TGC_ZOO:-$ROOT/build/bin/tgc-zoo}
DEVICE=${DEVICE:-H100-SXM}
MODELS=${MODELS:-gpt2:124m gpt2:124m:eager gpt2:1.5b llama:7b}
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

summary=()
echo "| model | strategy | budget GiB | peak GiB | extra time ms | recomputed | solve s |"
echo "|---|---|---:|---:|---:|---:|---:|"
for spec in $MODELS; do
  IFS=: read -r model preset form <<<"$spec"
  step="$work/$model-$preset.mlir"
  zoo=()
  [[ $form == eager ]] && zoo=(--attention eager --dropout 0.1)
  "$TGC_ZOO" "$model" --preset "$preset" --seq "$SEQ" --batch "$BATCH" "${zoo[@]}" \
    -o "$work/graph.mlir"
  "$TGC" compile "$work/graph.mlir" --optimizer adamw --no-fuse --no-schedule --no-memory-plan \
    --device "$DEVICE" -o "$step"
  name="$model $preset${form:+ $form}"
  declare -A peaks=() extras=() counts=()
  for strategy in none sqrt full selective; do
    read -r peak extra n c t < <(run "$step" "strategy=$strategy")
    peaks[$strategy]=$peak
    extras[$strategy]=$extra
    counts[$strategy]=$n
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
  # The DP at selective's peak, when selective recomputes anything.
  if [[ ${counts[selective]} != 0 ]]; then
    read -r peak extra n c t < <(run "$step" "budget=${peaks[selective]}")
    printf "| %s | dp at selective's peak | %s | %s | %.3f | %s/%s | %s |\n" "$name" \
      "$(gib "${peaks[selective]}")" "$(gib "$peak")" \
      "$(awk -v e="$extra" 'BEGIN { print e * 1000 }')" "$n" "$c" "$t"
    summary+=("$name: at selective's peak ($(gib "${peaks[selective]}") GiB) the DP peaks at $(gib "$peak") GiB for $(awk -v d="$extra" -v s="${extras[selective]}" 'BEGIN { printf "%.2f", d / s }') of selective's extra time ($(awk -v e="$extra" 'BEGIN { printf "%.3f", e * 1000 }') against $(awk -v e="${extras[selective]}" 'BEGIN { printf "%.3f", e * 1000 }') ms), recomputing $n ops against selective's ${counts[selective]}")
  fi
done
for line in "${summary[@]}"; do
  echo
  echo "$line"
done
