#!/usr/bin/env bash
# Coverage-guided fuzzing of the MLIR front end and the ONNX importer with
# libFuzzer, ASan and UBSan (docs/fuzzing.md). Outside CI: CI replays the
# corpus and the crash inputs kept in test/fuzz/ (ctest fuzz-replay-*).
#
#   scripts/fuzz.sh [mlir|onnx|both] [SECONDS]   (default: both, 600 s each)
#
# Builds build-fuzz/ with clang 22 (installed from Debian if missing), then
# runs each target (both at once) for SECONDS of wall time on one core each,
# growing
# build-fuzz/corpus-KIND from test/fuzz/corpus/KIND. Crash inputs land in
# build-fuzz/crashes-KIND/; after a fix, copy each into
# test/fuzz/crashes/KIND/ so that ctest replays it. To fold new coverage
# into the checked-in corpus:
#   build-fuzz/bin/tgc-fuzz-KIND -merge=1 test/fuzz/corpus/KIND build-fuzz/corpus-KIND
set -euo pipefail
cd "$(dirname "$0")/.."
which_targets=${1:-both}
seconds=${2:-600}

if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
missing=()
for p in clang-22 libclang-rt-22-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
./scripts/install-deps.sh

cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
  -DTGC_LIBFUZZER=ON -DTGC_ENABLE_TESTS=OFF -DTGC_CHECK_LAYERING=OFF >/dev/null
cmake --build build-fuzz -j2 --target tgc-fuzz-mlir tgc-fuzz-onnx

case "$which_targets" in
  both) kinds="mlir onnx" ;;
  mlir|onnx) kinds=$which_targets ;;
  *) echo "usage: $0 [mlir|onnx|both] [SECONDS]" >&2; exit 2 ;;
esac
# Each target runs in libFuzzer's fork mode on one core, so that a crash,
# a timeout or an out-of-memory is saved and the campaign goes on.
# -rss_limit_mb: the fuzzers run only small functions (FuzzRun.h), so more
# is a leak or a runaway; -timeout: a slower input is a hang (issue class 8).
# Both targets run at once; each one's log, with its CPU time at the end,
# is build-fuzz/KIND.log.
# The fork mode starts each job from the binary's path: copies keep a
# rebuild during a campaign from changing the fuzzer under it.
mkdir -p build-fuzz/run
for kind in $kinds; do
  mkdir -p build-fuzz/corpus-$kind build-fuzz/crashes-$kind
  cp build-fuzz/bin/tgc-fuzz-$kind build-fuzz/run/
  /usr/bin/time -f "$kind: %U s user, %S s system, %e s wall, %M KiB peak" \
    build-fuzz/run/tgc-fuzz-$kind -fork=1 -ignore_crashes=1 -ignore_timeouts=1 \
    -ignore_ooms=1 -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 \
    -max_len=65536 -detect_leaks=0 -print_final_stats=1 \
    -artifact_prefix=build-fuzz/crashes-$kind/ \
    build-fuzz/corpus-$kind test/fuzz/corpus/$kind >build-fuzz/$kind.log 2>&1 &
done
wait
for kind in $kinds; do
  grep -E "^#[0-9]+.*(DONE|pulse)|crash|timeout|oom|$kind: " build-fuzz/$kind.log | tail -n 6
  echo "$kind: $(ls build-fuzz/crashes-$kind | wc -l) artifacts in build-fuzz/crashes-$kind"
done
