#!/usr/bin/env bash
# Installs what ranc needs on a fresh Debian 12 machine with the CUDA toolkit at
# /usr/local/cuda, then configures and builds a Release build in ./build.
#   scripts/setup.sh            # install + build
#   RANC_SKIP_INSTALL=1 scripts/setup.sh   # build only
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${RANC_SKIP_INSTALL:-0}" != 1 ]; then
  # Clang 22's libTooling for the template indexer (tools/template_indexer): the newest
  # Debian 12 has, and the only one there whose CUDA headers parse with CUDA 13.
  pkgs=(cmake ninja-build g++ libfmt-dev libgtest-dev libbenchmark-dev sqlite3 libsqlite3-dev
        libxxhash-dev libcli11-dev libclang-cpp22-dev libclang-22-dev llvm-22-dev)
  missing=()
  for p in "${pkgs[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
  fi
  # TPC-H data generator (a port of dbgen) for examples, tests and benchmarks.
  command -v tpchgen-cli >/dev/null 2>&1 || python3 -m pip install --quiet tpchgen-cli
fi

if [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "setup: the CUDA toolkit is expected at /usr/local/cuda (nvcc, NVRTC, CUB)" >&2
  exit 1
fi

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc
cmake --build build -j "${RANC_JOBS:-$(nproc)}"
