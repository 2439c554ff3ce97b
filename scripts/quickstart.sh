#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds tgc, and runs the main job on the
# bundled example: the report of examples/mlp.mlir, and its compiled form.
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
