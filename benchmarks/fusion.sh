#!/usr/bin/env bash
# The effect of tg-fuse on the zoo's gpt2 124m bf16 AdamW training step: the
# kernel count, the estimated HBM bytes and the estimated step time (cost
# model, `tgc report --train`) without and with fusion, per phase, and the
# kernels per transformer layer (the difference between a 2-layer and a
# 1-layer model of the same width). Prints Markdown tables.
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

# report LAYERS: the fusion section of `tgc report --train` as
# "unfused_kernels unfused_mb unfused_ms fused_kernels fused_mb fused_ms
#  fwd_u fwd_f bwd_u bwd_f opt_u opt_f".
report() {
  local layers=$1 args=()
  [[ -n $layers ]] && args=(--layers "$layers")
  "$TGC_ZOO" gpt2 --preset 124m "${args[@]}" --seq "$SEQ" --batch "$BATCH" \
    --dropout 0 -o "$WORK/gpt2.mlir"
  "$TGC" report "$WORK/gpt2.mlir" --train --optimizer adamw \
    --precision "$PRECISION" --device "$DEVICE" |
    awk '/^fusion \(tg-fuse/ { on = 1; next }
         on && $1 == "unfused" { u = $2 " " $4 " " $7 }
         on && $1 == "fused" { f = $2 " " $4 " " $7 }
         on && $2 ~ /^[0-9]+$/ && $3 == "->" { p = p " " $2 " " $4 }
         END { print u, f p }'
}

read -r uk umb ums fk fmb fms fwu fwf bwu bwf opu opf < <(report "")
[[ -n ${fk:-} ]] || die "tgc report printed no fusion section"
echo "gpt2 124m, $PRECISION, AdamW, seq $SEQ, batch $BATCH, $DEVICE (cost model estimates)"
echo
echo "| | kernels | HBM bytes (MB) | step time (ms) |"
echo "|---|---:|---:|---:|"
echo "| unfused (--no-fuse) | $uk | $umb | $ums |"
echo "| fused | $fk | $fmb | $fms |"
echo
echo "| phase | kernels unfused | kernels fused |"
echo "|---|---:|---:|"
echo "| forward | $fwu | $fwf |"
echo "| backward | $bwu | $bwf |"
echo "| optimizer | $opu | $opf |"

read -r _ _ _ _ _ _ f1u f1f b1u b1f _ _ < <(report 1)
read -r _ _ _ _ _ _ f2u f2f b2u b2f _ _ < <(report 2)
echo
echo "Kernels per transformer layer (2 layers minus 1 layer):"
echo
echo "| phase | unfused | fused | Megatron-style hand-fused (docs/fusion.md) |"
echo "|---|---:|---:|---:|"
echo "| forward | $((f2u - f1u)) | $((f2f - f1f)) | 10 |"
echo "| backward | $((b2u - b1u)) | $((b2f - b1f)) | 20 |"
