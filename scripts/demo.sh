#!/usr/bin/env bash
# The main job on built-in data: pre-train a RoMAE on BasicMotions (UEA,
# 6-axis motion sensors) without labels, fine-tune classifiers from it with
# the default recipe (five fold models, each validated on the fifth of the
# training series it does not train on, and their ensemble: the test set is
# only read by evaluate), evaluate on the test set beside the
# 1-NN baselines, interpolate unobserved times and write each run's HTML
# report. Re-running replaces the earlier demo runs (--overwrite).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
run=${RUNS:-runs}/basicmotions
set -x
bin/romae pretrain --config examples/basicmotions.yaml --out "$run/pretrain" --overwrite
bin/romae finetune --model "$run/pretrain" --data testdata/BasicMotions_TRAIN.ts \
  --out "$run/finetune" --overwrite
bin/romae evaluate --model "$run/finetune" --data testdata/BasicMotions_TEST.ts --baselines
bin/romae interpolate --model "$run/pretrain" --data testdata/BasicMotions_TEST.ts \
  --at 0.5:9.5:1 --out "$run/interpolated.csv"
bin/romae report --run "$run/pretrain"
bin/romae report --run "$run/finetune"
{ set +x; } 2>/dev/null
echo "interpolated values at unobserved half-steps: $run/interpolated.csv ($(wc -l <"$run/interpolated.csv") lines)"
