#!/bin/bash
# two at a time, GOMAXPROCS=1 each, data.fold_jobs 1
R=/work/main/bin/romae
U=/work/shared/data/uea
run() { # name train seed pool
  local name=$1 tr=$2 seed=$3 pool=$4 out=/tmp/s60/pool/out-$1-$4-s$3
  local t0=$(date +%s)
  GOMAXPROCS=1 $R finetune --data $tr --train.seed $seed --model.pool $pool --data.fold_jobs 1 --out $out > $out.log 2>&1
  echo "$name pool=$pool seed=$seed rc=$? $(( $(date +%s)-t0 ))s" >> /tmp/s60/pool/done.txt
}
run spike /tmp/s60/pool/spike_TRAIN.ts 1 mean &
run spike /tmp/s60/pool/spike_TRAIN.ts 1 meanmax &
wait
for s in 1 2 3; do
  run ArrowHead $U/ArrowHead_TRAIN.ts $s mean &
  run ArrowHead $U/ArrowHead_TRAIN.ts $s meanmax &
  wait
done
for d in GunPoint ItalyPowerDemand BasicMotions JapaneseVowels PickupGestureWiimoteZ; do
  run $d $U/${d}_TRAIN.ts 1 mean &
  run $d $U/${d}_TRAIN.ts 1 meanmax &
  wait
done
# then, for three seeds on two more sets (runs3.sh in the session):
for d in GunPoint ItalyPowerDemand; do for s in 2 3; do
  run $d $U/${d}_TRAIN.ts $s mean &
  run $d $U/${d}_TRAIN.ts $s meanmax &
  wait
done; done
