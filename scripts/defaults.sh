#!/usr/bin/env bash
# The default recipe on UEA/UCR datasets, exactly as a new user runs it:
# `romae finetune --data X_TRAIN.ts` with no hyperparameter flags
# (settings chosen from the data, best epoch on a validation split of the
# training data), then `romae evaluate --baselines` on X_TEST.ts. Prints one
# markdown row per dataset: romae mean ± std over the seeds, 1-NN ED, 1-NN
# DTW (full window) and the majority class (for regression targets, the test
# MSE and the same 1-NN methods as regressors beside the training mean), and
# the wall time.
#
#   bash scripts/defaults.sh [SEEDS] [DATASET ...]     # default: 3 seeds, the six shared sets
#
# Data come from ../shared/data/uea (override with UEA=DIR); runs go to
# ${RUNS:-runs}/defaults. Each training run uses GOMAXPROCS=${PROCS:-2}.
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=${1:-3}
shift || true
datasets=("$@")
[ ${#datasets[@]} -gt 0 ] || datasets=(GunPoint ItalyPowerDemand ArrowHead PickupGestureWiimoteZ BasicMotions JapaneseVowels)
uea=${UEA:-../shared/data/uea}
runs=${RUNS:-runs}/defaults
[ -x bin/romae ] || bash scripts/setup.sh >&2

field() { grep -o "\"$1\":[-0-9.e]*" | head -1 | cut -d: -f2; }

# One table per kind of task: classifiers (accuracy, higher is better) and
# regressors (test MSE in target units, lower is better).
header=""
for ds in "${datasets[@]}"; do
  start=$(date +%s)
  scores=()
  for seed in $(seq 1 "$seeds"); do
    out="$runs/$ds/seed$seed"
    rm -rf "$out"; mkdir -p "$(dirname "$out")"
    GOMAXPROCS=${PROCS:-2} bin/romae finetune --data "$uea/${ds}_TRAIN.ts" --train.seed "$seed" \
      --out "$out" --train.progress none >"$out.log" 2>&1 || { echo "finetune failed, see $out.log" >&2; exit 1; }
    ev=$(bin/romae evaluate --model "$out" --data "$uea/${ds}_TEST.ts")
    if echo "$ev" | grep -q '"accuracy"'; then kind=classify; scores+=("$(echo "$ev" | field accuracy)")
    else kind=regress; scores+=("$(echo "$ev" | field mse)"); fi
  done
  base=$(bin/romae evaluate --model "$runs/$ds/seed1" --data "$uea/${ds}_TEST.ts" --baselines)
  if [ "$kind" = classify ]; then
    cols=("1-NN ED" "1-NN DTW (full window)" majority) f=%.4f
    [ "$header" = classify ] || { header=classify
      echo "| dataset | romae default recipe (mean ± std, $seeds seeds) | per seed | 1-NN ED | 1-NN DTW | majority | wall time |"
      echo "|---|---|---|---|---|---|---|"; }
  else
    cols=(1nn_ed_mse 1nn_dtw_mse training_mean_mse) f=%.4g
    [ "$header" = regress ] || { header=regress
      echo "| dataset | romae default recipe, test MSE (mean ± std, $seeds seeds) | per seed | 1-NN ED | 1-NN DTW | training mean | wall time |"
      echo "|---|---|---|---|---|---|---|"; }
  fi
  row=""
  for c in "${cols[@]}"; do row+="$(printf "$f" "$(echo "$base" | field "$c")") | "; done
  stats=$(printf '%s\n' "${scores[@]}" | awk -v f="$f" '{s+=$1; q+=$1*$1; n++} END {m=s/n; v=(n>1)?(q-n*m*m)/(n-1):0; if (v<0) v=0; printf f " ± " f, m, sqrt(v)}')
  per=$(printf "$f " "${scores[@]}")
  echo "| $ds | $stats | ${per% } | $row$(( $(date +%s) - start )) s |"
done
