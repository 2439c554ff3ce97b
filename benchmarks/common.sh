# Sourced by the benchmark scripts: what they share.
#
#   bench_init "$@"   handles --help (prints the script's header comment) and
#                     refuses arguments (settings are environment variables)
#   bench_need TOOL.. fails unless each tool is built
#   die MESSAGE       prints "SCRIPT: error: MESSAGE" and exits 1

BENCH_SCRIPT=$(basename "${BASH_SOURCE[1]}")

die() {
  echo "$BENCH_SCRIPT: error: $*" >&2
  exit 1
}

bench_init() {
  case "${1:-}" in
    -h | --help)
      awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[1]}"
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
