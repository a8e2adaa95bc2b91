#!/usr/bin/env bash
# Builds bin/romae and runs it on every hostile input found while fuzzing
# (cmd/romae/hostile_test.go generates them) under `ulimit -v 4000000` and a
# 30 s deadline each: every run must end with exit status 1 and a one-line
# error (or, where one exists, a correct answer) — no panic, no
# out-of-memory crash, no hang.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOEXPERIMENT=simd
go build -o bin/romae ./cmd/romae
ROMAE_BIN="$PWD/bin/romae" go test -count=1 -run '^TestHostileInputsCLI$' -v ./cmd/romae/ | grep -E '^\s+(--- |hostile_test)|^(ok|FAIL|PASS)'
