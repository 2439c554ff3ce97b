#!/usr/bin/env bash
# Host memory of the generated trainer's ranks: the largest rank's peak
# resident set (getrusage of `train --nproc N`'s children) for one step of a
# partitioned gpt2 on the host target, started from --seed (--init random),
# from the project's params.safetensors (--init imported) and from a
# `--save` checkpoint of parameters and AdamW's moments (--resume FILE),
# each rank reading only its blocks of the files' whole values; and one
# step that ends writing that checkpoint (--save FILE: rank 0 puts each
# tensor together and writes it before the next). On the
# host target the "device" arena is host memory too, so the figure is the
# arena plus what the trainer keeps on the host (and the pages of the
# mapped file it touched).
#
#   benchmarks/rank-host-memory.sh                 # gpt2 124m, dp=2 ZeRO-3
#   MESH="dp=4" ZERO=1 NPROC=4 benchmarks/rank-host-memory.sh
#
# Environment: TGC, TGC_ZOO (default build/bin/), RUNTIME (default
# build/runtime), PRESET (124m), SEQ (64), BATCH (2), MESH (dp=2),
# ZERO (3), NPROC (2).
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/common.sh
bench_init "$@"
TGC=${TGC:-build/bin/tgc}
TGC_ZOO=${TGC_ZOO:-build/bin/tgc-zoo}
RUNTIME=${RUNTIME:-$PWD/build/runtime}
bench_need "$TGC" "$TGC_ZOO"
PRESET=${PRESET:-124m} SEQ=${SEQ:-64} BATCH=${BATCH:-2}
MESH=${MESH:-dp=2} ZERO=${ZERO:-3} NPROC=${NPROC:-2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$TGC_ZOO" gpt2 --preset "$PRESET" --seq "$SEQ" --batch "$BATCH" --dropout 0 \
  -o "$work/model.mlir"
"$TGC" compile "$work/model.mlir" --train --mesh "$MESH" --zero "$ZERO" \
  --emit cuda -o "$work/project" > /dev/null
cmake -S "$work/project" -B "$work/build" -G Ninja -DTGC_TARGET=host \
  -DTGCRuntime_DIR="$RUNTIME" > /dev/null
cmake --build "$work/build" > /dev/null
params=$(stat -c %s "$work/project/params.safetensors")

peak() {
  # ru_maxrss of the waited children: the largest rank's peak, KiB.
  python3 - "$@" <<'PY'
import resource, subprocess, sys, os
env = dict(os.environ, TGC_COMM_TIMEOUT="600")
subprocess.run(sys.argv[1:], check=True, env=env, stdout=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
}

printf 'gpt2 %s, seq %s, batch %s, --mesh %s --zero %s: params.safetensors %.0f MiB\n' \
  "$PRESET" "$SEQ" "$BATCH" "$MESH" "$ZERO" "$(awk "BEGIN { print $params / 1048576 }")"
printf '%-34s %16s\n' start "largest rank MiB"
for init in random imported; do
  kib=$(peak "$work/build/train" --nproc "$NPROC" --steps 1 --init "$init")
  printf '%-34s %16.0f\n' "--init $init" "$(awk "BEGIN { print $kib / 1024 }")"
done
kib=$(peak "$work/build/train" --nproc "$NPROC" --steps 1 --init random \
  --save "$work/checkpoint.safetensors")
printf '%-34s %16.0f\n' "--init random --save FILE" \
  "$(awk "BEGIN { print $kib / 1024 }")"
kib=$(peak "$work/build/train" --nproc "$NPROC" --steps 1 \
  --resume "$work/checkpoint.safetensors")
printf '%-34s %16.0f\n' "--resume FILE ($(($(stat -c %s \
  "$work/checkpoint.safetensors") / 1048576)) MiB)" \
  "$(awk "BEGIN { print $kib / 1024 }")"
