#!/usr/bin/env bash
# Installs what a fresh Debian machine with Go lacks for romae, then builds
# bin/romae and bin/romae-mpi. Safe to re-run: only missing packages are
# installed.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages: OpenBLAS (the optional cgo GEMM back end, exercised by the
# tests), Fashion-MNIST (images experiment), espeak-ng and sox (audio
# experiment's clips), Chromium (the test that renders romae report's HTML
# in a headless browser), Open MPI and pkg-config (data-parallel training,
# bin/romae-mpi; docs/distributed.md), qemu-user (the tests that run romae
# on emulated CPUs: x86-64 without AVX-512, and arm64).
# Arguments name more packages to install the same way (class_check.sh:
# the authors' PyTorch for side-by-side timing).
pkgs=(libopenblas-dev dataset-fashion-mnist espeak-ng sox gcc chromium openmpi-bin libopenmpi-dev pkg-config qemu-user "$@")
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Go 1.26's experimental simd/archsimd package carries the AVX-512/AVX2 GEMM.
export GOEXPERIMENT=simd
go version >&2
mkdir -p bin
go build -o bin/romae ./cmd/romae
# The same commands, able to run as the ranks of an MPI job (mpirun, srun):
# a separate binary, so that bin/romae needs no MPI library to start.
go build -tags mpi -o bin/romae-mpi ./cmd/romae
echo "setup: built bin/romae and bin/romae-mpi" >&2
