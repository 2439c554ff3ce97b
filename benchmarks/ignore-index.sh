#!/usr/bin/env bash
# A mean loss with an ignore_index under data parallelism, modelled on the
# CPU machine (no GPU is measured): GPT-2 124M whose loss ignores the label
# -100, as every PyTorch export writes it, at 8 sequences of 1024 per device
# on dp=8 (one node of H100s), bf16 mixed precision, AdamW.
#
#   benchmarks/ignore-index.sh
#
# Two steps of the same training step, through the same passes:
#   whole tokens   the loss as one op: its tokens stay whole on every device
#                  (the restriction of a mean over the tokens that are not
#                  ignored), so the logits are all-gathered; what tgc did
#                  before tg-shard-annotate rewrote such losses. The dp
#                  preset's annotations are written by hand (the batch split
#                  of input_ids and labels) and the step goes through
#                  tg-shard-propagate, tg-partition, tg-fuse, tg-schedule
#                  and tg-memory-plan.
#   sum / count    tg-shard-annotate's rewrite (the summed loss over the
#                  whole batch's count of counted tokens), then the same
#                  passes: what `tgc compile --mesh dp=8` builds.
# Columns: the modelled step time (two streams), communication, exposed
# communication as scheduled, MFU, and the simulated peak per device.
#
# Environment: TGC, TGC_OPT, TGC_ZOO (default build/bin/), DEVICE (default
# H100-SXM).
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/common.sh
bench_init "$@"
TGC=${TGC:-build/bin/tgc}
TGC_OPT=${TGC_OPT:-build/bin/tgc-opt}
TGC_ZOO=${TGC_ZOO:-build/bin/tgc-zoo}
bench_need "$TGC" "$TGC_OPT" "$TGC_ZOO"
DEVICE=${DEVICE:-H100-SXM}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$TGC_ZOO" gpt2 --preset 124m --seq 1024 --batch 64 --dropout 0 -o "$work/model.mlir"
sed -i 's/tg.cross_entropy mean \([^:]*\) :/tg.cross_entropy mean \1 ignore_index = -100 :/' \
  "$work/model.mlir"
grep -q 'ignore_index = -100' "$work/model.mlir" || die "the loss was not found"
"$TGC" compile "$work/model.mlir" --train --precision bf16 --device "$DEVICE" \
  --no-fuse --no-schedule --no-memory-plan -o "$work/train.mlir"
rest="--tg-shard-propagate --tg-partition --tg-fuse --tg-schedule --tg-memory-plan"

# Whole tokens: the dp preset by hand, without the rewrite.
python3 - "$work/train.mlir" "$work/whole.mlir" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
split = 'tg.sharding = #tg.sharding<@mesh, [{"dp"}, {}], priority = 1>'
for name, role in (("input_ids", "input"), ("labels", "label")):
    old = '{tg.name = "%s", tg.role = "%s"}' % (name, role)
    if old not in text:
        sys.exit("ignore-index.sh: argument '%s' not found" % name)
    text = text.replace(old, '{tg.name = "%s", tg.role = "%s", %s}' % (name, role, split), 1)
end = text.index("\n", text.index("module attributes"))
text = text[:end + 1] + '  shard.grid @mesh(shape = 8) {tg.mesh_axes = ["dp"]}\n' + text[end + 1:]
open(sys.argv[2], "w").write(text)
PY
# shellcheck disable=SC2086
"$TGC_OPT" "$work/whole.mlir" $rest -o "$work/whole.step.mlir"
# shellcheck disable=SC2086
"$TGC_OPT" "$work/train.mlir" --tg-shard-annotate='mesh=dp=8' $rest \
  -o "$work/count.step.mlir"

printf '%-13s %9s %9s %10s %6s %8s %s\n' loss step_ms comm_ms exposed_ms mfu peak_GB \
  "gathers of the logits"
for variant in whole count; do
  "$TGC" report "$work/$variant.step.mlir" --json >"$work/$variant.json"
  gathers=$(grep -c 'shard.all_gather .*x50257x' "$work/$variant.step.mlir" || true)
  python3 - "$work/$variant.json" "$variant" "$gathers" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
name = {"whole": "whole tokens", "count": "sum / count"}[sys.argv[2]]
c = r["communication"]
print("%-13s %9.2f %9.2f %10.2f %5.1f%% %8.2f %s" % (
    name, r["step_time_s"] * 1e3, c["time_s"] * 1e3,
    r["exposed_communication_s"] * 1e3, r["mfu"] * 100,
    r["peak_bytes"] / 1e9, sys.argv[3]))
PY
done
