#!/usr/bin/env bash
# The generated trainer on the host target (the CPU): ms/step and tokens/s
# of `train --data synthetic-copy` for gpt2 configurations compiled with
# `tgc compile --train --optimizer adamw --emit cuda` and built with
# -DTGC_TARGET=host, beside PyTorch eager on the same model and step on the
# same CPU (benchmarks/gpu/torch_gpt2.py --device cpu) when TORCH_PYTHON
# names a Python with torch (f32 only). One run each, so compare the ratios
# of runs made together, not the times of runs made apart.
#
#   benchmarks/host-step.sh
#   TORCH_PYTHON=/path/to/venv/bin/python benchmarks/host-step.sh
#   TGC=old/tgc RUNTIME=old/runtime benchmarks/host-step.sh    # "before"
#   PRECISION=bf16 benchmarks/host-step.sh
#
# Environment: TGC, TGC_ZOO (default build/bin/), RUNTIME (default
# build/runtime), STEPS (10), TORCH_PYTHON (unset: no PyTorch column),
# CONFIGS (space-separated LAYERSxHIDDENxHEADS:VOCAB:SEQ:BATCH, default
# "4x256x4:8192:128:8 12x768x12:50257:128:4"), PRECISION (f32, or bf16:
# tgc compile --precision bf16, no PyTorch column), and TGC_HOST_WORKERS
# for train (default: every CPU).
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/common.sh
bench_init "$@"
TGC=${TGC:-build/bin/tgc}
TGC_ZOO=${TGC_ZOO:-build/bin/tgc-zoo}
RUNTIME=${RUNTIME:-$PWD/build/runtime}
bench_need "$TGC" "$TGC_ZOO"
STEPS=${STEPS:-10}
CONFIGS=${CONFIGS:-"4x256x4:8192:128:8 12x768x12:50257:128:4"}
PRECISION=${PRECISION:-f32}
case "$PRECISION" in
  f32 | bf16) ;;
  *) die "PRECISION is f32 or bf16, not '$PRECISION'" ;;
esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "| gpt2 layers x hidden x heads, vocab | seq x batch | tgc host ms/step ($PRECISION) | tokens/s | PyTorch eager ms/step | tgc / PyTorch |"
echo "|---|---|---:|---:|---:|---:|"
for config in $CONFIGS; do
  IFS=: read -r shape vocab seq batch <<<"$config"
  IFS=x read -r layers hidden heads <<<"$shape"
  dir="$work/$layers-$hidden-$heads-$vocab-$seq-$batch"
  mkdir -p "$dir"
  "$TGC_ZOO" gpt2 --layers "$layers" --hidden "$hidden" --heads "$heads" \
    --vocab "$vocab" --seq "$seq" --batch "$batch" --dropout 0 \
    -o "$dir/model.mlir"
  "$TGC" compile "$dir/model.mlir" --train --optimizer adamw \
    --precision "$PRECISION" --emit cuda -o "$dir/project" >/dev/null
  cmake -S "$dir/project" -B "$dir/build" -G Ninja -DTGC_TARGET=host \
    -DTGCRuntime_DIR="$RUNTIME" >/dev/null
  cmake --build "$dir/build" >/dev/null
  line=$("$dir/build/train" --steps "$STEPS" --seed 0 --data synthetic-copy |
    grep '^trained')
  ms=$(sed -E 's/.* ([0-9.]+) ms\/step.*/\1/' <<<"$line")
  tokens=$(sed -E 's/.* ([0-9]+) tokens\/s.*/\1/' <<<"$line")
  torch_ms=- ratio=-
  if [ -n "${TORCH_PYTHON:-}" ] && [ "$PRECISION" = f32 ]; then
    torch_ms=$("$TORCH_PYTHON" benchmarks/gpu/torch_gpt2.py --device cpu \
      --precision f32 --layers "$layers" --hidden "$hidden" --heads "$heads" \
      --vocab "$vocab" --seq "$seq" --batch "$batch" --steps "$STEPS" \
      --warmup 2 | sed -E 's/.*: ([0-9.]+) ms\/step.*/\1/')
    ratio=$(awk "BEGIN { printf \"%.2f\", $ms / $torch_ms }")
  fi
  echo "| $layers x $hidden x $heads, $vocab | $seq x $batch | $ms | $tokens | $torch_ms | $ratio |"
done
