#!/bin/bash
# Interpolation on the six UEA sets: the blend fitted on tokens hidden no two neighbours in time
# (10%, 6 draws) with weights per bin of |spline - linear| (this commit) against the romae before
# it (20% hidden at random, 3 draws, one pair of weights per value).
# Each set: X_TEST split six ways (20% of each series' steps hidden, scripts/holdout seeds 1-6),
# `romae pretrain --data X_TRAIN.ts` with the defaults at GOMAXPROCS=1, then `evaluate --hidden
# --baselines` with --blend auto (and off on splits 1-3). OLD is the binary before the change, run on its own
# pre-training of the same file (the weights are the same: only the stored blend differs).
# usage: run.sh NEW_BINARY OLD_BINARY OLD_RUNS_DIR WORK_DIR
set -u
R=$(cd "$(dirname "$0")/../.." && pwd); NEW=$1; OLD=$2; OLDRUNS=$3; W=$4
mkdir -p $W/runs
one() {
  X=$1; out=$W/$X.txt; : > $out
  for S in 1 2 3 4 5 6; do
    (cd $R && go run ./scripts/holdout -in ../shared/data/uea/${X}_TEST.ts -frac 0.2 -seed $S -observed $W/${X}_obs$S.ts -hidden $W/${X}_hid$S.ts) >>$out 2>&1
  done
  if [ ! -f $OLDRUNS/$X/best.safetensors ]; then
    GOMAXPROCS=1 $OLD pretrain --data $R/../shared/data/uea/${X}_TRAIN.ts --out $OLDRUNS/$X --overwrite >/dev/null 2>&1
  fi
  /usr/bin/time -f "pretrain wall %e s" env GOMAXPROCS=1 $NEW pretrain --data $R/../shared/data/uea/${X}_TRAIN.ts --out $W/runs/$X --overwrite 2>&1 | grep -E 'recipe|blend|wall|^\{' >>$out
  for S in 1 2 3 4 5 6; do
    modes=auto; [ $S -le 3 ] && modes="auto off"
    for mode in $modes; do
      echo "# new, split $S, --blend $mode" >>$out
      GOMAXPROCS=1 $NEW evaluate --model $W/runs/$X --data $W/${X}_obs$S.ts --hidden $W/${X}_hid$S.ts --baselines --blend $mode >>$out 2>&1
    done
    echo "# old, split $S, --blend auto" >>$out
    GOMAXPROCS=1 $OLD evaluate --model $OLDRUNS/$X --data $W/${X}_obs$S.ts --hidden $W/${X}_hid$S.ts --baselines --blend auto >>$out 2>&1
  done
}
export GOEXPERIMENT=simd
(one ItalyPowerDemand; one ArrowHead; one GunPoint) &
(one JapaneseVowels; one PickupGestureWiimoteZ; one BasicMotions) &
wait
echo done > $W/DONE
