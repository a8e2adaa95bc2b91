#!/bin/bash
# A/B on two more sets, old (HEAD 80b0b6f) and new alternating, the default recipe.
for ds in ArrowHead JapaneseVowels; do for b in old new; do
  rm -rf /tmp/ab2-$b
  /usr/bin/time -f "$ds $b: %e s wall, %U s user" /tmp/romae-$b finetune --data /work/shared/data/uea/${ds}_TRAIN.ts --out /tmp/ab2-$b --train.progress none >/tmp/ab2-$ds-$b.log 2>/tmp/ab2-$ds-$b.time
  tail -1 /tmp/ab2-$ds-$b.time
  python3 -c "import json;r=json.load(open('/tmp/ab2-$b/result.json'));print('  folds seconds', [round(f['seconds'],2) for f in r['fold_results']], 'step_ms', [round(f['step_s']*1000,2) for f in r['fold_results']], 'cv', r['cv']['accuracy'], r['cv']['loss'])"
done; done
