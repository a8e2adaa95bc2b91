#!/usr/bin/env bash
# Soak test of romae serve (not in CI): fine-tunes a small classifier on
# BasicMotions, serves it as its own process on a loopback port, measures
# its saturated throughput (20 s closed loop), then holds half of that as
# open-loop Poisson load for SOAK_DURATION (default 10m), and prints the
# server's RSS and goroutines at the start and the end of the soak (from
# its /metrics), with the latencies and errors of both phases.
#
#   bash scripts/soak.sh                 # 10 minutes
#   SOAK_DURATION=3m bash scripts/soak.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export GOEXPERIMENT=simd
DURATION=${SOAK_DURATION:-10m}
go build -o bin/romae ./cmd/romae

work=$(mktemp -d)
server=""
cleanup() {
	if [ -n "$server" ] && kill -0 "$server" 2>/dev/null; then
		kill -TERM "$server"
		wait "$server" || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

echo "soak: fine-tuning a tiny-shallow classifier on BasicMotions (2 epochs)" >&2
bin/romae finetune --data.train testdata/BasicMotions_TRAIN.ts --model.size tiny-shallow \
	--train.epochs 2 --train.batch_size 8 --train.progress none --train.out "$work/run" >/dev/null

bin/romae serve --model "$work/run" --addr 127.0.0.1:0 --log-format json 2>"$work/serve.log" &
server=$!
addr=""
for _ in $(seq 600); do
	addr=$(grep -o '"msg":"listening","addr":"[^"]*"' "$work/serve.log" | sed 's/.*"addr":"//; s/"$//' || true)
	[ -n "$addr" ] && break
	sleep 0.1
done
[ -n "$addr" ] || { echo "soak: romae serve did not start" >&2; cat "$work/serve.log" >&2; exit 1; }
echo "soak: romae serve (pid $server) on $addr; $DURATION at half the saturated throughput" >&2

# BasicMotions series have 100 steps: requests of one 100-token sample.
bin/romae bench --workload serve --serve-url "http://$addr" --serve-phases closed,soak \
	--serve-duration 20s --serve-soak "$DURATION" --serve-max-requests 100000000 --batch-size 32 --tokens 100 | tee "$work/soak.jsonl"

kill -TERM "$server"
wait "$server"
server=""
echo "soak: romae serve exited 0 after SIGTERM" >&2
grep -c '"level":"ERROR"' "$work/serve.log" | sed 's/^/soak: error lines in the server log: /' >&2 || true
