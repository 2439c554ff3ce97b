#!/usr/bin/env bash
# One pipeline, one truth: for each model and each set of options, the peak,
# the arena and bytes per parameter that `tgc report MODEL --train OPTIONS`
# prints, those of `tgc report` on the step `tgc compile MODEL --train
# OPTIONS` wrote (a compiled step is reported as it is), and the step's own
# tg.arena_size; "same" when all agree. With the wall time of the compile
# and of each report. Options: none, --recompute full, a budget halfway
# between the smallest feasible peak (the recompute frontier's first point)
# and the unbudgeted peak, and --precision bf16.
#
#   benchmarks/one-truth.sh    # gpt2 124m, llama 4 layers, llama 7b
#   MODELS="llama:70b" benchmarks/one-truth.sh
#
# Environment:
#   TGC, TGC_ZOO  the binaries (default: build/bin/ of this checkout)
#   MODELS        model:preset[:layers] list (default: gpt2:124m
#                 llama:7b:4 llama:7b)
#   SEQ, BATCH    sequence length and batch (default: 1024 and 8 for gpt2,
#                 4096 and 1 for llama)
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/common.sh
bench_init "$@"
TGC=${TGC:-build/bin/tgc}
TGC_ZOO=${TGC_ZOO:-build/bin/tgc-zoo}
bench_need "$TGC" "$TGC_ZOO"
MODELS=${MODELS:-gpt2:124m llama:7b:4 llama:7b}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

seconds() { python3 -c 'import sys,time; print("%.2f" % (time.time() - float(sys.argv[1])))' "$1"; }
now() { python3 -c 'import time; print(time.time())'; }
field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

printf '%-14s %-26s %16s %16s %16s %9s %5s %8s %8s %8s\n' model options report_peak compiled_peak arena bytes/par same compile_s report_s step_report_s
for spec in $MODELS; do
  IFS=: read -r model preset layers <<<"$spec"
  if [ "$model" = gpt2 ]; then seq=${SEQ:-1024} batch=${BATCH:-8}; else seq=${SEQ:-4096} batch=${BATCH:-1}; fi
  zoo=(--preset "$preset" --seq "$seq" --batch "$batch")
  [ -n "$layers" ] && zoo+=(--layers "$layers")
  "$TGC_ZOO" "$model" "${zoo[@]}" -o "$work/m.mlir"
  lowest=$("$TGC" report "$work/m.mlir" --train --recompute-frontier 1 | awk 'NR == 3 { print $1 }')
  highest=$("$TGC" report "$work/m.mlir" --train --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["peak_bytes"])')
  budget=$(( (lowest + highest) / 2 ))
  for options in "" "--recompute full" "--memory-budget $budget" "--precision bf16"; do
    t=$(now); "$TGC" compile "$work/m.mlir" --train $options -o "$work/s.mlir"; compile=$(seconds "$t")
    t=$(now); "$TGC" report "$work/m.mlir" --train $options --json >"$work/a.json"; report=$(seconds "$t")
    t=$(now); "$TGC" report "$work/s.mlir" --json >"$work/b.json"; stepreport=$(seconds "$t")
    arena=$(grep -o 'tg.arena_size = [0-9]*' "$work/s.mlir" | head -1 | awk '{ print $3 }')
    a=$(field "$work/a.json" peak_bytes) b=$(field "$work/b.json" peak_bytes)
    aa=$(field "$work/a.json" arena_bytes) ba=$(field "$work/b.json" arena_bytes)
    bpp=$(field "$work/a.json" bytes_per_param)
    same=no
    [ "$a" = "$b" ] && [ "$aa" = "$ba" ] && [ "$aa" = "$arena" ] && same=yes
    printf '%-14s %-26s %16s %16s %16s %9.4f %5s %8s %8s %8s\n' "$spec" "${options:-none}" "$a" "$b" "$arena" "$bpp" "$same" "$compile" "$report" "$stepreport"
  done
done
