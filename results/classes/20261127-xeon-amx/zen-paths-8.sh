#!/bin/bash
# rounds; each: old31, HEAD zen caches, HEAD native; all with VDPBF16PS for bf16
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
