#!/bin/bash
# A/B: the default recipe with its fold models one after the other (--data.fold_jobs 1)
# and side by side (the default: one per core, here 2), the same binary, alternating.
for ds in GunPoint ArrowHead JapaneseVowels; do for j in 1 0; do
  rm -rf /tmp/ab3
  /usr/bin/time -f "$ds fold_jobs $j: %e s wall, %U s user" /tmp/romae-fj2 finetune --data /work/shared/data/uea/${ds}_TRAIN.ts --out /tmp/ab3 --train.progress none --data.fold_jobs $j >/tmp/ab3-$ds-$j.log 2>/tmp/ab3-$ds-$j.time
  tail -1 /tmp/ab3-$ds-$j.time
  python3 -c "import json;r=json.load(open('/tmp/ab3/result.json'));print('  fold_jobs', r['fold_jobs'], 'wall_seconds', round(r['wall_seconds'],1), 'step_ms', [round(f['step_s']*1000,2) for f in r['fold_results']], 'cv', r['cv']['accuracy'], r['cv']['loss'])"
done; done
