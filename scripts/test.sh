#!/usr/bin/env bash
# Installs what is missing, then runs the whole test suite: once with the
# default back ends (pure-Go AVX-512/AVX2 GEMM and gonum), once more for the
# packages that use the OpenBLAS back end through cgo, once more for the
# numeric packages and fold models side by side under -race, the numeric
# packages under other classes' cache sizes, on
# emulated CPUs without AVX-512
# (qemu-user) and in the portable build (no GOEXPERIMENT=simd: gonum and
# scalar float32 paths only). The data-parallel end-to-end tests run
# `mpirun -np 2` (Open MPI, installed by setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export GOEXPERIMENT=simd
go vet ./...
go test -count=1 ./...
go test -count=1 -tags openblas ./tensor/ ./model/
if command -v mpirun >/dev/null; then
  go vet -tags mpi ./dist/ ./cmd/romae/
  go test -count=1 -tags mpi ./dist/
  go test -count=1 -tags mpi -run '^TestMPI' ./cmd/romae/
else
  echo "test: mpirun not found, skipping the MPI data-parallel tests (apt-get install openmpi-bin libopenmpi-dev)" >&2
fi
# The numeric packages and the server under the race detector, which also turns on
# checkptr (unsafe views, masked partial vector loads/stores). -short: the
# products shrink to shapes that still split over the workers and block (the
# full ones ran above), as the race detector makes each access ~10x dearer.
go test -count=1 -race -short ./tensor/ ./nn/ ./rope/ ./optim/ ./model/ ./serve/
# Fold models training side by side (data.fold_jobs, train.FitFolds) share
# the pool and the scratch buffers: the same under the race detector.
go test -count=1 -race -run 'TestFoldJobsSameModels' ./cmd/romae/
go test -count=1 -race -run 'TestFitFolds|TestFoldJobs' ./train/
go test -count=1 -race ./internal/linelog/
# The numeric packages under other machine classes' cache sizes
# (ROMAE_CACHES), which set the k blocks and the chunk-or-layer choices: a
# Zen 4's or Zen 5's 1 MiB L2 and a 256 KiB one, so a test that holds only
# with this machine's blocks fails here, not on the next class (a fixed
# k = 384 in TestPackBRows32 did, wherever the block is 256).
for caches in 32K,1M 32K,256K; do
  ROMAE_CACHES=$caches go test -count=1 -short ./tensor/ ./nn/ ./rope/ ./model/
done
# The numeric packages on an emulated CPU without AVX-512 (qemu-user,
# installed by setup.sh): a Haswell, AVX2+FMA, where the avx2 back end and
# the AVX2 paths run, and any AVX-512 instruction among them would be SIGILL.
# (Natively, GODEBUG=cpu.avx512f=off runs them fast on an AVX-512 box but
# cannot catch that.) An SSE-only Nehalem runs romae end to end in
# cmd/romae's TestRunsWithoutAVX512.
if command -v qemu-x86_64 >/dev/null && [ "$(uname -m)" = x86_64 ]; then
  ROMAE_EMULATED_CPU=1 go test -count=1 -short -exec "qemu-x86_64 -cpu Haswell,-pcid,-x2apic,-tsc-deadline,-hle,-invpcid,-rtm" \
    ./tensor/ ./nn/ ./rope/ ./optim/ ./model/
else
  echo "test: qemu-x86_64 not found, skipping the emulated-CPU tests (apt-get install qemu-user)" >&2
fi
GOEXPERIMENT= go vet ./...
GOEXPERIMENT= go test -count=1 ./tensor/... ./nn/ ./rope/ ./model/
