#!/bin/bash
# As run on 2026-11-27 (docs/performance.md, "an eighth session"): R rounds,
# each stop 31's binary, this code with a Zen 4's caches, this code with the
# CPU's own; bf16 on VDPBF16PS throughout. The binaries, built beforehand:
#   git worktree add /tmp/old31 4af113d && (cd /tmp/old31 && GOEXPERIMENT=simd go build -o /tmp/romae31 ./cmd/romae)
#   GOEXPERIMENT=simd go build -o /tmp/romaeHEAD ./cmd/romae   # at 1eaf392
R=${1:-3}
for r in $(seq $R); do
  for cfg in old31 headzen headnative; do
    case $cfg in
      old31) bin=/tmp/romae31; env="";;
      headzen) bin=/tmp/romaeHEAD; env="ROMAE_CACHES=32K,1M";;
      headnative) bin=/tmp/romaeHEAD; env="";;
    esac
    env $env ROMAE_GEMM=avx512-bf16 $bin bench --workload pretrain,finetune,infer --precision fp32,bf16 --steps 4 2>/dev/null | python3 -c "
import sys,json
for l in sys.stdin:
    d=json.loads(l); print('$r $cfg', d['workload'], d['precision'], '%.3f'%d['median_s'], d['kernel'][:12], d['k_block'])
"
  done
done
