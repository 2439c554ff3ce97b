#!/usr/bin/env bash
# The effect of tg-fuse on the zoo's gpt2 124m bf16 AdamW training step: the
# kernel count, the optimizer's kernels, the estimated HBM bytes and step
# time (cost model, `tgc report --train`) and the simulated peak of the
# scheduled step, unfused, fused with each optimizer update its own kernel
# (--no-fuse-optimizer) and fused by default (multi-tensor buckets by
# gradient readiness), per phase, and the kernels per transformer layer (the
# difference between a 2-layer and a 1-layer model of the same width).
# Prints Markdown tables.
#
#   benchmarks/fusion.sh              # from anywhere
#   SEQ=128 BATCH=1 benchmarks/fusion.sh
#
# Environment:
#   TGC, TGC_ZOO  the binaries (default: build/bin/ of this checkout)
#   DEVICE        the device estimated for (default: H100-SXM)
#   SEQ, BATCH    sequence length and batch (default: 1024, 8)
#   PRECISION     the precision policy (default: bf16)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TGC=${TGC:-$ROOT/build/bin/tgc}
TGC_ZOO=${TGC_ZOO:-$ROOT/build/bin/tgc-zoo}
DEVICE=${DEVICE:-H100-SXM}
SEQ=${SEQ:-1024}
BATCH=${BATCH:-8}
PRECISION=${PRECISION:-bf16}

. "$ROOT/benchmarks/common.sh"
bench_init "$@"
bench_need "$TGC" "$TGC_ZOO"

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# report LAYERS [FLAGS...]: from `tgc report --train` with FLAGS, as
# "unfused_kernels unfused_mb unfused_ms fused_kernels fused_mb fused_ms
#  fwd_u fwd_f bwd_u bwd_f opt_u opt_f peak_bytes" (the fused figures and the
# peak are those of the step as FLAGS compile it).
report() {
  local layers=$1 args=()
  shift
  [[ -n $layers ]] && args=(--layers "$layers")
  "$TGC_ZOO" gpt2 --preset 124m "${args[@]}" --seq "$SEQ" --batch "$BATCH" \
    --dropout 0 -o "$WORK/gpt2.mlir"
  "$TGC" report "$WORK/gpt2.mlir" --train --optimizer adamw \
    --precision "$PRECISION" --device "$DEVICE" "$@" |
    awk '/^summary:/ { for (i = 1; i < NF; ++i) if ($i == "peak") peak = $(i + 1) }
         /^fusion \(tg-fuse/ { on = 1; next }
         on && $1 == "unfused" { u = $2 " " $4 " " $7 }
         on && $1 == "fused" { f = $2 " " $4 " " $7 }
         on && $2 ~ /^[0-9]+$/ && $3 == "->" { p = p " " $2 " " $4 }
         END { print u, f p, peak }'
}

# The unfused step's peak (--no-fuse prints no fusion section).
unfused_peak() {
  "$TGC_ZOO" gpt2 --preset 124m --seq "$SEQ" --batch "$BATCH" --dropout 0 \
    -o "$WORK/gpt2.mlir"
  "$TGC" report "$WORK/gpt2.mlir" --train --optimizer adamw \
    --precision "$PRECISION" --device "$DEVICE" --no-fuse |
    awk '/^summary:/ { for (i = 1; i < NF; ++i) if ($i == "peak") print $(i + 1) }'
}

gb() { awk -v b="$1" 'BEGIN { printf "%.3f", b / 1e9 }'; }

read -r uk umb ums fk fmb fms fwu fwf bwu bwf opu opf peak < <(report "")
[[ -n ${fk:-} ]] || die "tgc report printed no fusion section"
read -r _ _ _ nk nmb nms _ nfw _ nbw _ nop npeak < <(report "" --no-fuse-optimizer)
[[ -n ${nk:-} ]] || die "tgc report --no-fuse-optimizer printed no fusion section"
upeak=$(unfused_peak)
[[ -n $upeak ]] || die "tgc report --no-fuse printed no peak"
echo "gpt2 124m, $PRECISION, AdamW, seq $SEQ, batch $BATCH, $DEVICE (cost model estimates;"
echo "peak: simulated, of the scheduled step)"
echo
echo "| | kernels | optimizer kernels | HBM bytes (MB) | step time (ms) | peak (GB) |"
echo "|---|---:|---:|---:|---:|---:|"
echo "| unfused (--no-fuse) | $uk | $opu | $umb | $ums | $(gb "$upeak") |"
echo "| fused, --no-fuse-optimizer | $nk | $nop | $nmb | $nms | $(gb "$npeak") |"
echo "| fused (default) | $fk | $opf | $fmb | $fms | $(gb "$peak") |"
echo
echo "| phase | kernels unfused | fused, --no-fuse-optimizer | fused (default) |"
echo "|---|---:|---:|---:|"
echo "| forward | $fwu | $nfw | $fwf |"
echo "| backward | $bwu | $nbw | $bwf |"
echo "| optimizer | $opu | $nop | $opf |"
echo
echo "Default against --no-fuse-optimizer: kernels $(awk -v a="$fk" -v b="$nk" 'BEGIN { printf "%.2fx", b / a }') fewer,"
echo "peak $( ((peak <= npeak)) && echo "not raised ($peak <= $npeak bytes)" || echo "RAISED ($npeak -> $peak bytes)")."

read -r _ _ _ _ _ _ f1u f1f b1u b1f _ _ _ < <(report 1)
read -r _ _ _ _ _ _ f2u f2f b2u b2f _ _ _ < <(report 2)
echo
echo "Kernels per transformer layer (2 layers minus 1 layer):"
echo
echo "| phase | unfused | fused | Megatron-style hand-fused (docs/fusion.md) |"
echo "|---|---:|---:|---:|"
echo "| forward | $((f2u - f1u)) | $((f2f - f1f)) | 10 |"
echo "| backward | $((b2u - b1u)) | $((b2f - b1f)) | 20 |"
