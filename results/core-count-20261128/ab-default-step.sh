D=${D:-/work/shared/data/uea/GunPoint_TRAIN.ts}
for r in 1 2 3; do for b in "$@"; do
rm -rf /tmp/ab-$b; /tmp/romae-$b finetune --data $D --data.folds 2 --data.fold_jobs 1 --train.epochs ${EP:-300} --out /tmp/ab-$b --train.progress none > /tmp/ab-$b.log 2>&1
python3 -c "
import json;r=json.load(open('/tmp/ab-$b/result.json'));print('$b', [ round(f['step_s']*1000,2) for f in r['fold_results']], round(r.get('wall_seconds'),2), r['cv']['loss'])"
done; done
