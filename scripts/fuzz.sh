#!/usr/bin/env bash
# Runs every Go fuzz target of the repository for DURATION (default 2m)
# each, one after another with one worker (the targets share the machine
# with other work), and prints per target the executions run and any new
# failing inputs (written by go test to PKG/testdata/fuzz/TARGET/, where
# they become regression seeds of the ordinary go test run).
#
#   scripts/fuzz.sh [DURATION] [TARGET_REGEXP]
#
# DURATION is a go test -fuzztime value (30s, 2m, or a count such as
# 100000x). Minimisation of new interesting inputs is capped at 10
# executions, so the time goes to fuzzing. GOMAXPROCS defaults to 1.
set -uo pipefail
cd "$(dirname "$0")/.."
export GOEXPERIMENT=simd
export GOMAXPROCS="${GOMAXPROCS:-1}"
duration="${1:-2m}"
only="${2:-.}"
logdir="$(mktemp -d)"
printf '%-28s %-14s %12s %9s  %s\n' target package execs seconds result
total_fail=0
start_all=$(date +%s)
while IFS= read -r line; do
	file="${line%%:*}"
	target="$(sed -E 's/.*func (Fuzz[A-Za-z0-9_]+).*/\1/' <<<"$line")"
	[[ "$target" =~ $only ]] || continue
	pkg="./$(dirname "$file")/"
	log="$logdir/$target.log"
	before=$(ls "$(dirname "$file")/testdata/fuzz/$target" 2>/dev/null | wc -l)
	t0=$(date +%s)
	go test -run '^$' -fuzz "^${target}\$" -fuzztime "$duration" -fuzzminimizetime 10x -parallel 1 "$pkg" >"$log" 2>&1
	rc=$?
	t1=$(date +%s)
	execs=$(grep -oE 'execs: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+')
	after=$(ls "$(dirname "$file")/testdata/fuzz/$target" 2>/dev/null | wc -l)
	if [[ $rc -eq 0 ]]; then
		result="ok, 0 findings"
	else
		result="FAIL: $((after - before)) new finding(s), see $log"
		total_fail=$((total_fail + 1))
	fi
	printf '%-28s %-14s %12s %9s  %s\n' "$target" "$pkg" "${execs:-?}" "$((t1 - t0))" "$result"
done < <(grep -rn --include='*_fuzz_test.go' -E '^func Fuzz[A-Za-z0-9_]+\(f \*testing\.F\)' . | sed 's|^\./||' | sort)
echo "total: $(( $(date +%s) - start_all )) s, $total_fail target(s) with findings; logs in $logdir"
[[ $total_fail -eq 0 ]]
