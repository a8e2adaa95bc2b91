#!/bin/bash
# Interpolation with --blend auto (new default) vs stored/fit/off, Intel Xeon (SPR), GOMAXPROCS=1, two at a time.
set -u
R=/work/main; B=/tmp/blendrun/romae
cp $R/bin/romae $B
one() {
  X=$1
  out=/tmp/blendrun/$X.txt; : > $out
  for S in 1 2 3; do
    (cd $R && go run ./scripts/holdout -in ../shared/data/uea/${X}_TEST.ts -frac 0.2 -seed $S -observed /tmp/blendrun/${X}_obs$S.ts -hidden /tmp/blendrun/${X}_hid$S.ts) >>$out 2>&1
  done
  GOMAXPROCS=1 $B pretrain --data $R/../shared/data/uea/${X}_TRAIN.ts --out /tmp/blendrun/runs/$X --overwrite 2>&1 | grep -E 'recipe|blend|^\{' >>$out
  for S in 1 2 3; do
    for mode in auto stored fit off; do
      echo "# split $S, --blend $mode" >>$out
      GOMAXPROCS=1 $B evaluate --model /tmp/blendrun/runs/$X --data /tmp/blendrun/${X}_obs$S.ts --hidden /tmp/blendrun/${X}_hid$S.ts --baselines --blend $mode >>$out 2>&1
    done
  done
}
export GOEXPERIMENT=simd
one GunPoint & one JapaneseVowels & wait
one BasicMotions
echo done >> /tmp/blendrun/DONE
