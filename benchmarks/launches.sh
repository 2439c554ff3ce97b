#!/usr/bin/env bash
# What a generated training step launches (tgc compile --emit cuda), counted
# in its step.cu, against the kernels the cost model counts (tgc report
# --train): kernel launches, GEMM calls (of which one cuBLASLt call with its
# epilogue), attention calls, and the launches when every epilogue call
# declines (TGC_GEMM_EPILOGUE=0, or a shape cuBLASLt has no kernel for).
# bf16 AdamW; the zoo's tiny gpt2 (seq 16, batch 4) and gpt2 124m (seq
# 1024, batch 8). Prints a Markdown table. No GPU is needed: this counts
# calls in the source, it does not time them.
#
#   benchmarks/launches.sh
#
# Environment:
#   TGC, TGC_ZOO  the binaries (default: build/bin/ of this checkout)
#   DEVICE        the device estimated for (default: H100-SXM)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TGC=${TGC:-$ROOT/build/bin/tgc}
TGC_ZOO=${TGC_ZOO:-$ROOT/build/bin/tgc-zoo}
DEVICE=${DEVICE:-H100-SXM}

. "$ROOT/benchmarks/common.sh"
bench_init "$@"
bench_need "$TGC" "$TGC_ZOO"

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

echo "| model | kernel launches | GEMM calls | with epilogue | attention calls | launches if epilogues decline | cost model's kernels |"
echo "|---|---|---|---|---|---|---|"
row() {
  local name=$1
  shift
  "$TGC_ZOO" "$@" -o "$WORK/$name.mlir"
  "$TGC" compile "$WORK/$name.mlir" --train --precision bf16 \
    --device "$DEVICE" --emit cuda -o "$WORK/$name" >/dev/null
  local report
  report=$("$TGC" report "$WORK/$name.mlir" --train --precision bf16 \
    --device "$DEVICE" --json)
  python3 - "$WORK/$name/step.cu" "$name" "$report" <<'EOF'
import json, re, sys
source = open(sys.argv[1]).read()
# The step's calls at its top level; a declined epilogue's fallback is
# indented inside its `if`.
top = lambda call: len(re.findall(r"^  " + call + r"\(", source, re.M))
inner = lambda call: len(re.findall(r"^      " + call + r"\(", source, re.M))
launches, gemms = top("TGC_LAUNCH"), top("gemm")
epilogues = top("  if \(!gemmEpilogue")
attention = top("attention") + top("attentionGrad")
declined = launches + inner("TGC_LAUNCH")
kernels = json.loads(sys.argv[3])["kernels"]
print(f"| {sys.argv[2]} | {launches} | {gemms + epilogues} | {epilogues} | "
      f"{attention} | {declined} | {kernels} |")
EOF
}
row "gpt2 tiny" gpt2 --preset tiny --seq 16 --batch 4
row "gpt2 124m" gpt2 --preset 124m --seq 1024 --batch 8
