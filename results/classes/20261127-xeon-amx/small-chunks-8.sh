#!/bin/bash
# As run on 2026-11-27 (docs/performance.md, "an eighth session"), from the
# repository root with bin/romae at 1eaf392: RoMAE-small with the CPU's own
# chunk choices ("X=1" sets nothing), with q|k|v in chunks (3M) and with the
# row-wise part in chunks too (64M).
cd "$(dirname "$0")/../../.."
for r in 1 2 3; do
 for e in "X=1" "ROMAE_CACHES=48K,3M" "ROMAE_CACHES=48K,64M"; do
  env $e bin/romae bench --size small --workload infer,finetune --precision fp32,bf16 --steps 3 | python3 -c "
import sys,json
for l in sys.stdin:
    d=json.loads(l); print('$r $e', d['workload'], d['precision'], '%.3f'%d['median_s'], d['k_block'])"
 done
done
