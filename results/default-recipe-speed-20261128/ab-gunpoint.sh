#!/bin/bash
# step_s below is in milliseconds (the script multiplies by 1000 before printing).
# A/B: the default recipe on GunPoint (5 fold models), old (HEAD) and new binaries alternating.
for r in 1 2; do for b in old new; do
  rm -rf /tmp/ab-$b
  /usr/bin/time -f "$b round $r: %e s wall, %U s user" /tmp/romae-$b finetune --data /work/shared/data/uea/GunPoint_TRAIN.ts --out /tmp/ab-$b --train.progress none >/tmp/ab-$b-$r.log 2>/tmp/ab-$b-$r.time
  cat /tmp/ab-$b-$r.time | tail -1
  python3 -c "import json;r=json.load(open('/tmp/ab-$b/result.json'));print('  folds seconds', [round(f['seconds'],2) for f in r['fold_results']], 'step_s', [round(f['step_s']*1000,2) for f in r['fold_results']], 'cv acc', r['cv']['accuracy'], 'cv loss', r['cv']['loss'])"
done; done
