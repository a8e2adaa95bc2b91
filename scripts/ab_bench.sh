#!/bin/bash
# ab_bench.sh OUT ROUNDS BIN_A BIN_B [BIN …]: `romae bench` on two or more
# binaries (or wrapper scripts that set an environment and exec one),
# alternated round by round with the order flipped every round, so a
# noisy machine's slow minutes fall on all of them. Each run times
# fine-tuning, inference and pre-training in fp32 (--steps 4, or
# $AB_STEPS). OUT gets one line per binary, round and workload: binary
# round workload median_s cpu_median_s; then the summary: per workload
# each binary's median and its paired speed-up over BIN_A (BIN_A's time /
# its time, same round), with the range and how many rounds it was faster.
#
#   GOEXPERIMENT=simd go build -o /tmp/new ./cmd/romae
#   git stash; GOEXPERIMENT=simd go build -o /tmp/old ./cmd/romae; git stash pop
#   scripts/ab_bench.sh /tmp/ab.txt 6 /tmp/old /tmp/new
set -euo pipefail
[ $# -ge 4 ] || { sed -n 2,14p "$0"; exit 2; }
out=$1 rounds=$2
shift 2
: >"$out"
for r in $(seq 1 "$rounds"); do
	bins=("$@")
	if ((r % 2 == 0)); then
		for ((i = 0, j = ${#bins[@]} - 1; i < j; i++, j--)); do t=${bins[i]} bins[i]=${bins[j]} bins[j]=$t; done
	fi
	for b in "${bins[@]}"; do
		"$b" bench --workload finetune,infer,pretrain --precision fp32 --steps "${AB_STEPS:-4}" 2>/dev/null |
			python3 -c 'import json,sys
for l in sys.stdin:
    d=json.loads(l); print(sys.argv[1], sys.argv[2], d["workload"], d["median_s"], d["cpu_median_s"])' "$b" "$r" >>"$out"
	done
	echo "round $r of $rounds done" >&2
done
python3 - "$out" "$1" <<'PY' | tee -a "$out"
import collections, statistics, sys
d = collections.defaultdict(dict)
for l in open(sys.argv[1]):
    b, r, w, s, _ = l.split()
    d[(w, b)][int(r)] = float(s)
base = sys.argv[2]
print()
for w in ("finetune", "infer", "pretrain"):
    for b in dict.fromkeys(b for (x, b) in d if x == w):
        v, a = d[(w, b)], d[(w, base)]
        r = [a[i] / v[i] for i in v if i in a]
        print("%-9s %-30s median %.3f s  speed-up over %s: median %.3f (%.2f-%.2f), faster in %d of %d"
              % (w, b, statistics.median(v.values()), base, statistics.median(r), min(r), max(r), sum(x > 1 for x in r), len(r)))
PY
