#!/usr/bin/env bash
# Mixture-of-experts layers as transformers' batched_mm experts write them
# (Mixtral, Qwen2-MoE exported to ONNX): each (token, expert) pair gathers
# its expert's gate/up and down matrices by the router's top-k ids (an
# embedding of the experts' rows in tg) and multiplies its vector by them.
# What that costs, and what tg-raise's experts pattern makes of it: one
# tg.expert_matmul per product, each pair's vector times its own expert's
# matrix read in place (a grouped GEMM).
#
# The graph: LAYERS MoE feed-forward layers (router softmax, top-k 2,
# weights renormalized, SiLU-gated experts, the k outputs weighted and
# summed, a residual), T = BATCH x SEQ tokens of width HIDDEN, EXPERTS
# experts of intermediate size INTER, an f32 AdamW training step reported
# by `tgc report` as written (gathered) and after `tgc-opt --tg-raise`
# (grouped):
#
#   gathered   per pair a copy of its expert's matrices (2 x T x k x
#              INTER x HIDDEN values), each read for one multiply-add
#   grouped    per pair its own expert's products only (the routed flops),
#              the experts' matrices read where they are
#
# and the grouped step again split over TP devices by the tp preset (each
# expert's gate/up columns and down rows, Megatron's expert tensor
# parallelism; per device, with its all-reduces), and over EP devices by
# data parallelism, without and with --expert-parallel (each device E/EP
# whole experts, the routed rows gathered before them and their sum
# reduce-scattered; without it every device holds every expert and
# all-reduces their gradients).
#
# Peak and arena are tgc's exact accounting of the planned step; step time
# and MFU are its cost model on DEVICE (a model, not a measurement).
#
#   benchmarks/moe-experts.sh
#   HIDDEN=4096 INTER=14336 EXPERTS=8 SEQ=512 BATCH=1 benchmarks/moe-experts.sh
#
# Environment:
#   TGC, TGC_OPT       the binaries (default: build/bin/ of this checkout)
#   LAYERS             MoE layers (default 2)
#   HIDDEN, INTER      model width and expert intermediate size (1024, 3584)
#   EXPERTS            experts, 2 of them per token (8)
#   SEQ, BATCH         tokens per sequence and sequences (512, 2)
#   DEVICE             the device modelled (default: H100-SXM)
#   TP                 devices of the tensor-parallel row (default 8; 1: none)
#   EP                 devices of the data- and expert-parallel rows (default
#                      8; 1: none)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$ROOT/benchmarks/common.sh"
bench_init "$@"
TGC=${TGC:-$ROOT/build/bin/tgc}
TGC_OPT=${TGC_OPT:-$ROOT/build/bin/tgc-opt}
LAYERS=${LAYERS:-2}
HIDDEN=${HIDDEN:-1024}
INTER=${INTER:-3584}
EXPERTS=${EXPERTS:-8}
SEQ=${SEQ:-512}
BATCH=${BATCH:-2}
DEVICE=${DEVICE:-H100-SXM}
TP=${TP:-8}
EP=${EP:-8}
bench_need "$TGC" "$TGC_OPT"
work=$(mktemp -d)
# shellcheck disable=SC2064
trap "rm -rf '$work'" EXIT

python3 "$ROOT/test/tgc/Inputs/moe_graph.py" "$work/gathered.mlir" "$LAYERS" \
  "$HIDDEN" "$INTER" "$EXPERTS" "$((SEQ * BATCH))"
"$TGC_OPT" --tg-raise "$work/gathered.mlir" -o "$work/grouped.mlir"
raised=$(bench_raised "$work/grouped.mlir" "tg.expert_matmul" "tg.embedding")

echo "$LAYERS MoE layers, $((SEQ * BATCH)) tokens of width $HIDDEN, $EXPERTS experts of intermediate size"
echo "$INTER, 2 per token, f32 AdamW step on $DEVICE ($raised of $((2 * LAYERS)) products raised)."
echo
BENCH_COLUMN=experts bench_report_rows "$TGC" "$DEVICE" "$work" \
  "gathered=gathered: a copy of the expert's matrices per pair" \
  "grouped=grouped: each pair's own expert (tg-raise)"
if [ "$TP" -gt 1 ]; then
  # The router's remark (kept whole under tp) is expected; errors are not.
  BENCH_COLUMN=experts BENCH_REPORT_OPTIONS="--mesh tp=$TP" \
    bench_report_rows "$TGC" "$DEVICE" "$work" \
    "grouped=grouped, tp=$TP: per device" 2>"$work/tp.log" | tail -n +3 ||
    { cat "$work/tp.log" >&2; exit 1; }
fi
if [ "$EP" -gt 1 ]; then
  BENCH_COLUMN=experts BENCH_REPORT_OPTIONS="--mesh dp=$EP" \
    bench_report_rows "$TGC" "$DEVICE" "$work" \
    "grouped=grouped, dp=$EP: per device" 2>"$work/dp.log" | tail -n +3 ||
    { cat "$work/dp.log" >&2; exit 1; }
  BENCH_COLUMN=experts \
    BENCH_REPORT_OPTIONS="--mesh dp=$EP --expert-parallel" \
    bench_report_rows "$TGC" "$DEVICE" "$work" \
    "grouped=grouped, dp=$EP --expert-parallel: per device" \
    2>"$work/ep.log" | tail -n +3 || { cat "$work/ep.log" >&2; exit 1; }
fi
