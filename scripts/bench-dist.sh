#!/usr/bin/env bash
# Data-parallel throughput on this machine (docs/distributed.md): one
# process with 2 threads against 2 MPI ranks with 1 thread each, at the same
# global batch, alternated ROUNDS times so both see the same background
# load; then the gradient allreduce alone at the sizes of RoMAE-tiny,
# small and base.
#
#   bash scripts/bench-dist.sh            # ROUNDS=3 STEPS=8 SIZE=tiny BATCH=32 TOKENS=200
#
# The workload is `romae bench`'s pre-training step (RoMAE-tiny encoder,
# tiny-shallow decoder, no dropout, 32 series × 200 steps × 2 values, mask
# 0.75) run by `romae pretrain` on generated data. Step times are the
# medians of result.json's step_s (validation and checkpoints excluded);
# wait_s is rank 0's median wait for rank 1 at the end of a step (load
# imbalance), allreduce_s its median gradient allreduce, which starts with
# the ranks in step.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3} STEPS=${STEPS:-8} SIZE=${SIZE:-tiny} BATCH=${BATCH:-32} TOKENS=${TOKENS:-200}
bash scripts/setup.sh
export GOEXPERIMENT=simd OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One epoch of STEPS batches: 2-channel noisy sines, long-format CSV.
awk -v n=$((BATCH * STEPS)) -v T="$TOKENS" 'BEGIN {
  srand(7); print "id,time,channel,value"
  for (i = 0; i < n; i++) for (t = 0; t < T; t++) for (c = 0; c < 2; c++)
    printf "s%d,%d,c%d,%.4f\n", i, t, c, sin(t / (5 + i % 7) + c) + 0.1 * (rand() - 0.5)
}' >"$tmp/data.csv"
args=(pretrain --data.train "$tmp/data.csv" --data.series_patch 1 --data.val_fraction 0
  --model.size "$SIZE" --model.decoder_size tiny-shallow
  --model.hidden_dropout 0 --model.attn_dropout 0 --model.drop_path 0
  --train.batch_size "$BATCH" --train.epochs 1 --train.max_steps "$STEPS" --train.progress none)

field() { grep -o "\"$1\": *[0-9.e+-]*" "$2" | sed 's/.*: *//'; }
echo "cpu: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) vCPUs; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "workload: pretrain $SIZE, global batch $BATCH × $TOKENS tokens, median of $STEPS steps per run"
printf '%-6s %-12s %-12s %-18s %-11s %-13s\n' round 1x2_step_s 2x1_step_s 2x1_rel_throughput 2x1_wait_s 2x1_allreduce_s
for r in $(seq "$ROUNDS"); do
  GOMAXPROCS=2 bin/romae "${args[@]}" --train.out "$tmp/one" >/dev/null 2>"$tmp/one.log" || { cat "$tmp/one.log"; exit 1; }
  mpirun -np 2 --oversubscribe --bind-to none -x GOMAXPROCS=1 bin/romae-mpi "${args[@]}" --train.out "$tmp/two" \
    >/dev/null 2>"$tmp/two.log" || { cat "$tmp/two.log"; exit 1; }
  one=$(field step_s "$tmp/one/result.json") two=$(field step_s "$tmp/two/result.json")
  printf '%-6s %-12s %-12s %-18s %-11s %-13s\n' "$r" "$one" "$two" \
    "$(awk -v a="$one" -v b="$two" 'BEGIN { printf "%.3f", a / b }')" \
    "$(field wait_s "$tmp/two/result.json")" "$(field allreduce_s "$tmp/two/result.json")"
done
echo "2x1_rel_throughput = 1x2_step_s / 2x1_step_s (target ≥ 0.90)"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

echo "gradient allreduce alone, 2 ranks (10 calls each):"
go test -tags mpi -c -o "$tmp/dist.test" ./dist
# Rank 0 reports; rank 1 only takes part.
mpirun -np 2 --oversubscribe --bind-to none bash -c '
  if [ "$OMPI_COMM_WORLD_RANK" = 0 ]; then exec "$0" "$@"; else exec "$0" "$@" >/dev/null; fi' \
  "$tmp/dist.test" -test.run '^$' -test.bench Allreduce -test.benchtime 10x | grep '^BenchmarkAllreduce'
