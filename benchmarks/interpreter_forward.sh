#!/usr/bin/env bash
# Times the CPU reference interpreter (`tgc run`) on the forward pass + loss
# of a small GPT-2, on one core, and prints a Markdown table.
#
#   benchmarks/interpreter_forward.sh            # from anywhere
#   REPEATS=3 TGC=/path/to/tgc benchmarks/interpreter_forward.sh
#
# Environment:
#   TGC           the tgc binary (default: build/bin/tgc of this checkout)
#   PYTHON        a Python 3 interpreter (default: python3)
#   REPEATS       runs per configuration (default: 5)
#   EMULATION_OFF the flag that turns precision emulation off
#                 (default: --precision-emulation=off)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TGC=${TGC:-$ROOT/build/bin/tgc}
PYTHON=${PYTHON:-python3}
REPEATS=${REPEATS:-5}
EMULATION_OFF=${EMULATION_OFF:---precision-emulation=off}
GEN="$ROOT/benchmarks/gen_gpt.py"

# The model: 2 layers, hidden 256, 4 heads of 64, seq 128, batch 4.
MODEL=(--layers 2 --hidden 256 --heads 4 --seq 128 --batch 4)
NAME=gpt2_bench

. "$ROOT/benchmarks/common.sh"
bench_init "$@"

[[ "$REPEATS" =~ ^[1-9][0-9]*$ ]] || die "REPEATS must be a positive integer, not '$REPEATS'"
[[ -x "$TGC" ]] || die "$TGC not found or not executable; build tgc first (cmake --build --preset default) or set TGC"
command -v "$PYTHON" > /dev/null || die "'$PYTHON' not found; set PYTHON to a Python 3 interpreter"

# `tgc run` is the interpreter driver. A tgc without it answers `tgc run
# --help` with the generic help (status 0), so look for the options used here.
run_help=$("$TGC" run --help 2>&1) || true
if grep -q "Unknown subcommand" <<< "$run_help" || ! grep -q -- "--time" <<< "$run_help"; then
  die "'$TGC run' is missing (this tgc has no interpreter driver with --time): build a tgc that has the 'run' subcommand, then run this script again"
fi
for option in --random-inputs "${EMULATION_OFF%%[= ]*}"; do
  grep -q -- "$option" <<< "$run_help" ||
    die "'$TGC run' has no $option option (see '$TGC run --help'; EMULATION_OFF sets the emulation flag)"
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/tgc-interpreter-forward.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# One core: no OpenMP or OpenBLAS worker threads.
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1

ROWS="$WORK/rows.tsv"
: > "$ROWS"
GRAPHS=0

# bench LABEL GRAPH_OPTIONS RUN_OPTIONS: generates the graph, counts its
# parameters and FLOPs, times REPEATS runs and appends a row to $ROWS.
bench() {
  local label=$1 gen_options=$2 run_options=$3
  GRAPHS=$((GRAPHS + 1))
  local graph="$WORK/graph$GRAPHS.mlir"
  # shellcheck disable=SC2086 # the option strings are word lists
  "$PYTHON" "$GEN" "${MODEL[@]}" $gen_options --name "$NAME" -o "$graph" ||
    die "gen_gpt.py failed for '$label'"
  local params flops
  # shellcheck disable=SC2086
  params=$("$PYTHON" "$GEN" "${MODEL[@]}" $gen_options --summary | sed -n 's/^parameters: //p') ||
    die "gen_gpt.py --summary failed for '$label'"
  flops=$("$TGC" report "$graph" --json | "$PYTHON" -c '
import json, sys
report = json.load(sys.stdin)
print(next(f["total"]["flops"] for f in report["functions"] if f["name"] == sys.argv[1]))
' "$NAME") || die "tgc report failed on the '$label' graph"

  local times=() i out seconds
  for ((i = 0; i < REPEATS; i++)); do
    # shellcheck disable=SC2086
    if ! out=$("$TGC" run "$graph" --random-inputs 0 --time $run_options 2>&1); then
      printf '%s\n' "$out" >&2
      die "tgc run failed on the '$label' graph (regenerate it with: $PYTHON $GEN ${MODEL[*]} $gen_options --name $NAME)"
    fi
    seconds=$(sed -n 's/^time: \([0-9.eE+-]*\) s$/\1/p' <<< "$out" | tail -n 1)
    if [[ -z "$seconds" ]]; then
      printf '%s\n' "$out" >&2
      die "tgc run printed no 'time: <seconds> s' line"
    fi
    times+=("$seconds")
  done
  printf '%s\t%s\t%s\t%s\n' "$label" "$params" "$flops" "${times[*]}" >> "$ROWS"
  echo "  done: $label (${times[*]} s)" >&2
}

echo "Timing $REPEATS runs of each configuration on one core..." >&2
bench "f32, vocab 50257" "--vocab 50257" ""
bench "f32, vocab 8192" "--vocab 8192" ""
bench "bf16, emulation on (default), vocab 50257" "--vocab 50257 --precision bf16" ""
bench "bf16, emulation off ($EMULATION_OFF), vocab 50257" "--vocab 50257 --precision bf16" "$EMULATION_OFF"

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2> /dev/null | head -n 1)
rev=$(git -C "$ROOT" rev-parse --short HEAD 2> /dev/null || echo unknown)

"$PYTHON" - "$ROWS" "$REPEATS" "${cpu:-unknown CPU}" "$rev" "${MODEL[*]}" << 'EOF'
import statistics
import sys

rows_file, repeats, cpu, rev, model = sys.argv[1:]
print("GPT-2 forward + loss on the tgc interpreter (`tgc run --random-inputs 0 --time`),")
print("gen_gpt.py %s; one core (OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1),"
      " %s runs each; %s, tgc %s." % (model, repeats, cpu, rev))
print("GFLOP/s = the graph's FLOPs (`tgc report --json`) / the median time.")
print()
print("| config | params | FLOPs | min s | median s | GFLOP/s |")
print("|---|---:|---:|---:|---:|---:|")
with open(rows_file) as f:
    for line in f:
        label, params, flops, times = line.rstrip("\n").split("\t")
        times = [float(t) for t in times.split()]
        median = statistics.median(times)
        rate = "%.3f" % (int(flops) / median / 1e9) if median > 0 else "n/a"
        print("| %s | %s | %.3f G | %.3f | %.3f | %s |" % (
            label, "{:,}".format(int(params)), int(flops) / 1e9, min(times), median, rate))
EOF
