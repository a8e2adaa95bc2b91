#!/usr/bin/env bash
# The main job on built-in data: pre-train a RoMAE on BasicMotions (UEA,
# 6-axis motion sensors) without labels, fine-tune a classifier from it
# (the best epoch chosen on a validation split of the training data: the
# test set is only read by evaluate), evaluate on the test set beside the
# 1-NN baselines and interpolate unobserved times.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
run=${RUNS:-runs}/basicmotions
set -x
bin/romae pretrain --config examples/basicmotions.yaml --train.out "$run/pretrain"
bin/romae finetune --config examples/basicmotions.yaml --from "$run/pretrain" \
  --train.optimizer sgd --train.lr 0.01 --train.epochs 30 --train.out "$run/finetune"
bin/romae evaluate --model "$run/finetune" --data testdata/BasicMotions_TEST.ts --baselines
bin/romae interpolate --model "$run/pretrain" --data testdata/BasicMotions_TEST.ts \
  --at 0.5:9.5:1 --out "$run/interpolated.csv"
{ set +x; } 2>/dev/null
echo "interpolated values at unobserved half-steps: $run/interpolated.csv ($(wc -l <"$run/interpolated.csv") lines)"
