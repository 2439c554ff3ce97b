#!/usr/bin/env bash
# Installs everything tgc needs to build and test on Debian 12, from Debian's packages.
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi

PKGS=(
  # Toolchain and build tools.
  g++ cmake ninja-build ccache git python3
  # LLVM/MLIR 22: libraries, mlir-tblgen, FileCheck/lit/not.
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  # C++ unit tests.
  libgtest-dev
  # JSON for reports (nlohmann/json, header-only).
  nlohmann-json3-dev
  # BLAS for the interpreter's matmuls.
  libopenblas-dev
  # Gloo: the generated host runtime's collectives between ranks (TCP).
  libgloo-dev
  # numpy, for the tests that check the interpreter against an independent
  # implementation and read/write .npy files (used through /usr/bin/python3).
  python3-numpy
  # The ONNX importer: the ONNX protobuf schema (onnx_proto) and protobuf;
  # the ONNX backend test data for the conformance runner.
  libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata
  # rsvg-convert, to check that the memory timeline SVG renders.
  librsvg2-bin
)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all packages present"
fi
