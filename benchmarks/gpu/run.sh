#!/usr/bin/env bash
# Runs on a GPU machine what benchmarks/gpu/prepare.sh built:
#   1. the GPU checks (what the `REQUIRES: cuda` tests ask): 20 steps of tiny
#      gpt2 (tiled and reference attention, without the CUDA graph, without
#      cuBLASLt's epilogues, eager attention, bf16), tiny
#      llama, Hugging Face's Mistral export (its sliding window an attention
#      bias; tiled and reference attention) and tiny gpt2 on a mesh of one
#      (NCCL) against the interpreter's losses and final parameters;
#   3. gpt2 124m (seq 1024, bf16 AdamW): ms/step, tokens/s and peak memory
#      (with and without cuBLASLt's epilogues),
#      the slowest ops against the cost model (train --profile and
#      kernel_profile.py);
#   2. compute-sanitizer's memcheck on one step of each tiny trainer;
#   4. PyTorch eager and torch.compile on the same model and step as 3.
#
#   benchmarks/gpu/run.sh [BUNDLE (default .gpu)] [PARTS (default 1234)]
#
# Prints everything; files go to $OUT when set (the profile, the logs).
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
bundle=$(realpath "${1:-.gpu}")
parts=${2:-1234}
out=${OUT:-$(mktemp -d)}
work=$(mktemp -d)
failed=0
# prepare.sh packs the trainers (a device run carries at most 64 MiB).
if [ -f "$bundle/bundle.tar.gz" ]; then
  mkdir "$work/bundle"
  tar -C "$work/bundle" -xzf "$bundle/bundle.tar.gz" || exit 1
  bundle=$work/bundle
fi

# The CUDA libraries the trainers link: the toolkit's, else PyTorch's wheels.
dirs=/usr/local/cuda/lib64:/usr/local/cuda/lib:/usr/local/cuda/targets/x86_64-linux/lib
if site=$(python3 -c 'import nvidia, os; print(os.path.dirname(list(nvidia.__path__)[0]))' 2>/dev/null); then
  for d in "$site"/nvidia/*/lib "$site"/nvidia/cu13/lib; do
    [ -d "$d" ] && dirs=$dirs:$d
  done
fi
export LD_LIBRARY_PATH=$dirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
if ldd "$bundle/gpt2-tiny/train" | grep "not found"; then
  echo "error: the trainers' libraries are missing here"
  exit 1
fi

# check NAME REFERENCE RTOL PTOL [ENV...]: 20 steps against the interpreter.
check() {
  local name=$1 reference=$2 rtol=$3 ptol=$4
  shift 4
  local dir=$work/$name-$#
  mkdir -p "$dir"
  local launch=()
  grep -q '"mesh"' "$bundle/$name/step.json" && launch=(--nproc 1)
  # An export's trainer starts from the export's weights.
  [ -f "$bundle/$name/params.safetensors" ] &&
    launch+=(--params "$bundle/$name/params.safetensors")
  echo "== $name ${*:-} (20 steps against the interpreter)"
  if ! (cd "$dir" && env "$@" timeout 180 "$bundle/$name/train" "${launch[@]}" \
      --steps 20 --seed 0 --log-every 1 --save final.safetensors >log 2>&1); then
    cat "$dir/log"; failed=1; return
  fi
  tail -1 "$dir/log"
  python3 test/tgc/Inputs/same_step_losses.py "$bundle/$reference/reference.log" \
    "$rtol" "$dir/log" || failed=1
  python3 benchmarks/gpu/compare_params.py \
    "$bundle/$reference/reference.safetensors" "$dir/final.safetensors" \
    "$ptol" || failed=1
}

if [[ $parts == *1* ]]; then
  check gpt2-tiny gpt2-tiny 1e-4 1e-4
  check gpt2-tiny gpt2-tiny 1e-4 1e-4 TGC_ATTENTION=reference
  check gpt2-tiny gpt2-tiny 1e-4 1e-4 TGC_CUDA_GRAPH=0
  check gpt2-tiny gpt2-tiny 1e-4 1e-4 TGC_GEMM_EPILOGUE=0
  check gpt2-tiny-eager gpt2-tiny-eager 1e-4 1e-4
  check gpt2-tiny-dropout gpt2-tiny-dropout 1e-4 1e-4
  check gpt2-tiny-dropout gpt2-tiny-dropout 1e-4 1e-4 TGC_ATTENTION=reference
  check llama-tiny llama-tiny 1e-4 1e-4
  check mistral-window mistral-window 1e-4 1e-4
  check mistral-window mistral-window 1e-4 1e-4 TGC_ATTENTION=reference
  check gemma2-softcap gemma2-softcap 1e-4 1e-4
  check gemma2-softcap gemma2-softcap 1e-4 1e-4 TGC_ATTENTION=reference
  check gpt2-tiny-dp1 gpt2-tiny 1e-4 1e-4
  check gpt2-tiny-bf16 gpt2-tiny-bf16 1e-2 1e-2
fi

big=$bundle/gpt2-124m-bf16
batch=$(python3 -c "import json; a=json.load(open('$big/step.json'))['arguments']; print([x for x in a if x['name']=='input_ids'][0]['shape'][0])" 2>/dev/null || echo 16)
if [[ $parts == *3* ]]; then
  echo "== tgc gpt2 124m bf16 AdamW, seq 1024, batch $batch: 6 steps"
  (cd "$work" && timeout 150 "$big/train" --steps 6 --seed 0 --log-every 1 2>&1 | tee "$out/tgc-124m.log")
  echo "== the same without cuBLASLt epilogues (TGC_GEMM_EPILOGUE=0): 6 steps"
  (cd "$work" && TGC_GEMM_EPILOGUE=0 timeout 150 "$big/train" --steps 6 \
    --seed 0 --log-every 1 2>&1 | tail -2)
  echo "== the same, 3 steps with every kernel timed"
  (cd "$work" && timeout 120 "$big/train" --steps 3 --seed 0 --log-every 1 \
    --profile "$out/profile-124m.json" 2>&1 | tail -14)
  [ -f "$out/profile-124m.json" ] &&
    python3 benchmarks/kernel_profile.py "$big/step.json" "$out/profile-124m.json" --top 12
fi
if [[ $parts == *2* ]]; then
  for name in gpt2-tiny llama-tiny gpt2-tiny-bf16 gpt2-tiny-dropout mistral-window gemma2-softcap; do
    launch=()
    grep -q '"mesh"' "$bundle/$name/step.json" && launch=(--nproc 1)
    [ -f "$bundle/$name/params.safetensors" ] &&
      launch+=(--params "$bundle/$name/params.safetensors")
    echo "== compute-sanitizer memcheck: $name, one step"
    (cd "$work" && timeout 75 compute-sanitizer --tool memcheck \
      --error-exitcode 9 --print-limit 5 "$bundle/$name/train" "${launch[@]}" \
      --steps 1 --seed 0 2>&1 | tail -4) || failed=1
  done
fi
if [[ $parts == *4* ]]; then
  echo "== PyTorch eager, the same model and step"
  timeout 200 python3 benchmarks/gpu/torch_gpt2.py --batch "$batch" --steps 20
  echo "== torch.compile"
  timeout 300 python3 benchmarks/gpu/torch_gpt2.py --batch "$batch" --steps 20 --compile
fi
echo "== done (failed=$failed)"
exit $failed
