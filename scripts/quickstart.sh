#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds tgc, and runs the main job on the
# bundled examples: the report of examples/mlp.mlir and its compiled form,
# then the generated trainer of examples/gpt2-tiny.mlir built for the CPU and
# run for 100 steps with a validation loss.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
cmake --preset default
cmake --build --preset default

echo
echo "== tgc report examples/mlp.mlir --train"
build/bin/tgc report examples/mlp.mlir --train
build/bin/tgc compile examples/mlp.mlir -o build/mlp.opt.mlir
echo
echo "== tgc compile examples/mlp.mlir -o build/mlp.opt.mlir: done"

# The generated project (kernels, runtime, trainer) for the host target,
# trained on a token file whose next token follows from the current one (a
# cycle through the 128 ids in a fixed random order), and measured on
# held-out windows of the same cycle.
project=build/quickstart/gpt2-tiny
echo
echo "== tgc compile examples/gpt2-tiny.mlir --train --emit cuda --evaluation -o $project"
rm -rf build/quickstart
mkdir -p build/quickstart
build/bin/tgc compile examples/gpt2-tiny.mlir --train --emit cuda --evaluation \
  -o "$project"
cmake -S "$project" -B "$project/build" -G Ninja -DTGC_TARGET=host \
  -DTGCRuntime_DIR="$PWD/build/runtime" > /dev/null
cmake --build "$project/build" > /dev/null
python3 - build/quickstart <<'PY'
import random, struct, sys
order = list(range(128))
random.Random(0).shuffle(order)
following = {order[i]: order[(i + 1) % 128] for i in range(128)}
for name, start, count in (("train.bin", 0, 8192), ("val.bin", 5, 1024)):
    token, ids = order[start], []
    for _ in range(count):
        ids.append(token)
        token = following[token]
    with open(sys.argv[1] + "/" + name, "wb") as f:
        f.write(struct.pack("<%dH" % count, *ids))
PY
echo "== $project/build/train --data train.bin --val-data val.bin (the CPU)"
"$project/build/train" --steps 100 --seed 0 --lr 1e-2 --log-every 25 \
  --data build/quickstart/train.bin --val-data build/quickstart/val.bin \
  --val-every 50
