#!/usr/bin/env bash
# Builds, on a machine without a GPU, what benchmarks/gpu/run.sh runs on one:
# the CUDA runtime and the generated trainers for sm_90 (H100/H200), and the
# interpreter's losses and final parameters they are compared with.
#
#   benchmarks/gpu/prepare.sh [OUT_DIR (default .gpu)]
#
# Needs tgc built (build/bin) and nvcc with cuBLAS and NCCL. The GPU machine
# needs only the CUDA libraries: the bundle holds executables, step.json
# files and reference outputs (no parameters files: each trainer makes the
# initial values `tgc train --seed 0` starts from), packed into
# OUT_DIR/bundle.tar.gz (a device run carries at most 64 MiB; unpacked, the
# trainers are more), which run.sh unpacks.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
out=$(realpath -m "${1:-.gpu}")
bin=$root/build/bin
gpu=${TGC_GPU:-H200}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rm -rf "$out"
mkdir -p "$out"
stage=$work/bundle

echo "== the CUDA runtime (sm_90)"
cmake -S runtime -B "$work/rt" -G Ninja -DTGC_RUNTIME_CUDA=ON \
  -DTGC_RUNTIME_TESTS=OFF -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null
cmake --build "$work/rt" -j2 >/dev/null

# project NAME ZOO_ARGS COMPILE_ARGS [REFERENCE_TRAIN_ARGS]: emits, builds
# and, with reference args, records `tgc train`'s losses and parameters.
project() {
  local name=$1 zoo=$2 options=$3 reference=${4:-}
  echo "== $name"
  # shellcheck disable=SC2086
  "$bin/tgc-zoo" $zoo -o "$work/$name.mlir"
  # shellcheck disable=SC2086
  "$bin/tgc" compile "$work/$name.mlir" --train $options --device "$gpu" \
    --emit cuda -o "$work/$name"
  cmake -S "$work/$name" -B "$work/$name/build" -G Ninja \
    -DTGCRuntime_DIR="$work/rt" -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null
  cmake --build "$work/$name/build" >/dev/null
  mkdir -p "$stage/$name"
  cp "$work/$name/build/train" "$work/$name/step.json" "$stage/$name/"
  if [ -n "$reference" ]; then
    # shellcheck disable=SC2086
    "$bin/tgc" train "$work/$name.mlir" $reference --seed 0 --log-every 1 \
      --save "$stage/$name/reference.safetensors" >"$stage/$name/reference.log"
  fi
}

# onnx_project NAME MODEL: the same for an ONNX export, whose trainer
# starts from the export's weights (its params.safetensors, in the bundle).
onnx_project() {
  local name=$1 model=$2
  echo "== $name"
  "$bin/tgc" compile "$model" --train --device "$gpu" --emit cuda \
    -o "$work/$name" 2>/dev/null
  cmake -S "$work/$name" -B "$work/$name/build" -G Ninja \
    -DTGCRuntime_DIR="$work/rt" -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null
  cmake --build "$work/$name/build" >/dev/null
  mkdir -p "$stage/$name"
  cp "$work/$name/build/train" "$work/$name/step.json" \
    "$work/$name/params.safetensors" "$stage/$name/"
  "$bin/tgc" train "$model" --steps 20 --seed 0 --log-every 1 \
    --save "$stage/$name/reference.safetensors" >"$stage/$name/reference.log" \
    2>/dev/null
}

tiny_gpt2="gpt2 --preset tiny --seq 16 --batch 4 --dropout 0"
tiny_llama="llama --preset tiny --seq 16 --batch 4"
project gpt2-tiny "$tiny_gpt2" "" "--steps 20"
project gpt2-tiny-dp1 "$tiny_gpt2" "--mesh dp=1" ""
project gpt2-tiny-eager "$tiny_gpt2 --attention eager" "" "--steps 20"
# Attention dropout (and the residual ones): each layer's tg.attention
# draws its probabilities' Philox mask in the tiled kernels.
project gpt2-tiny-dropout "gpt2 --preset tiny --seq 16 --batch 4 --dropout 0.1" \
  "" "--steps 20"
project gpt2-tiny-bf16 "$tiny_gpt2" "--precision bf16" \
  "--precision bf16 --steps 20"
project llama-tiny "$tiny_llama" "" "--steps 20"
# Attention with a bias: Mistral's sliding window (-inf on the hidden keys).
onnx_project mistral-window test/Import/hf/mistral/mistral-ts-sdpa.onnx
# Attention with a soft cap: Gemma 2 (softcap, and a sliding-window bias on
# its first layer).
onnx_project gemma2-softcap test/Import/hf/gemma2/gemma2-ts-loss.onnx
project gpt2-124m-bf16 "gpt2 --preset 124m --seq 1024 --batch ${TGC_BATCH:-16}" \
  "--optimizer adamw --precision bf16" ""
tar -C "$stage" -czf "$out/bundle.tar.gz" .
du -sh "$stage" "$out/bundle.tar.gz"
