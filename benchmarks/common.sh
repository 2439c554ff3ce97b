# Sourced by the benchmark scripts: what they share.
#
#   bench_init "$@"   handles --help (prints the script's header comment) and
#                     refuses arguments (settings are environment variables)
#   bench_need TOOL.. fails unless each tool is built
#   die MESSAGE       prints "SCRIPT: error: MESSAGE" and exits 1
#   bench_gpt2_attention ROOT "$@"
#                     the attention benchmarks' setup: bench_init, TGC,
#                     TGC_OPT, TGC_ZOO (default: ROOT's build/bin/), PRESET
#                     (124m), SEQ (1024), BATCH (8), DEVICE (H100-SXM), a
#                     temporary directory `work` removed on exit, and `common`,
#                     tgc-zoo's gpt2 arguments for them
#   bench_raised FILE RAISED LEFT
#                     prints how many lines of FILE match RAISED (what
#                     tg-raise made); fails unless some do and none match
#                     LEFT (what it should have left none of)
#   bench_report_rows TGC DEVICE WORK VARIANT=NAME...
#                     a Markdown table of `tgc report --train` for each
#                     WORK/VARIANT.mlir: peak, arena, HBM traffic, modelled
#                     step time and MFU on DEVICE, one row named NAME each;
#                     BENCH_COLUMN titles the names' column (attention),
#                     BENCH_REPORT_OPTIONS adds report options (a mesh)

BENCH_SCRIPT=$(basename "${BASH_SOURCE[1]}")

die() {
  echo "$BENCH_SCRIPT: error: $*" >&2
  exit 1
}

bench_init() {
  case "${1:-}" in
    -h | --help)
      awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[-1]}"
      exit 0
      ;;
    "") ;;
    *) die "unexpected argument '$1' (settings are environment variables; see --help)" ;;
  esac
}

bench_need() {
  local tool
  for tool in "$@"; do
    [ -x "$tool" ] || die "$tool is not built (ninja -C build)"
  done
}

bench_report_rows() {
  local tgc=$1 device=$2 work=$3 pair variant name json
  shift 3
  echo "| ${BENCH_COLUMN:-attention} | peak (GiB) | arena (GiB) | HBM traffic (GiB) | step time, modelled (ms) | MFU, modelled |"
  echo "|---|---|---|---|---|---|"
  for pair in "$@"; do
    variant=${pair%%=*} name=${pair#*=} json="$work/$variant.json"
    # shellcheck disable=SC2086
    "$tgc" report "$work/$variant.mlir" --train --device "$device" \
      ${BENCH_REPORT_OPTIONS:-} --json >"$json"
    python3 - "$json" "$name" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
gib = lambda b: "%.2f" % (b / 1073741824)
print("| %s | %s | %s | %s | %.2f | %.1f%% |" % (
    sys.argv[2], gib(r["peak_bytes"]), gib(r["arena_bytes"]),
    gib(r["hbm_bytes"]), r["step_time_s"] * 1000, r["mfu"] * 100))
PY
  done
}

bench_gpt2_attention() {
  local root=$1
  shift
  bench_init "$@"
  TGC=${TGC:-$root/build/bin/tgc}
  TGC_OPT=${TGC_OPT:-$root/build/bin/tgc-opt}
  TGC_ZOO=${TGC_ZOO:-$root/build/bin/tgc-zoo}
  PRESET=${PRESET:-124m}
  SEQ=${SEQ:-1024}
  BATCH=${BATCH:-8}
  DEVICE=${DEVICE:-H100-SXM}
  bench_need "$TGC" "$TGC_OPT" "$TGC_ZOO"
  work=$(mktemp -d)
  # shellcheck disable=SC2064
  trap "rm -rf '$work'" EXIT
  common=(--preset "$PRESET" --seq "$SEQ" --batch "$BATCH" --positions "$SEQ")
}

bench_raised() {
  local file=$1 raised=$2 left=$3 made stayed
  made=$(grep -c "$raised" "$file" || true)
  stayed=$(grep -c "$left" "$file" || true)
  [ "$stayed" = 0 ] && [ "$made" -gt 0 ] ||
    die "tg-raise left $stayed lines matching '$left' and made $made matching '$raised'"
  echo "$made"
}
