#!/usr/bin/env bash
# The default recipe on UEA/UCR datasets, exactly as a new user runs it:
# `romae finetune --data X_TRAIN.ts` with no hyperparameter flags
# (settings chosen from the data, best epoch on a validation split of the
# training data), then `romae evaluate --baselines` on X_TEST.ts. Prints one
# markdown row per dataset: romae mean ± std over the seeds, 1-NN ED, 1-NN
# DTW (full window) and the majority class, and the wall time.
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

echo "| dataset | romae default recipe (mean ± std, $seeds seeds) | per seed | 1-NN ED | 1-NN DTW | majority | wall time |"
echo "|---|---|---|---|---|---|---|"
for ds in "${datasets[@]}"; do
  start=$(date +%s)
  accs=()
  for seed in $(seq 1 "$seeds"); do
    out="$runs/$ds/seed$seed"
    rm -rf "$out"; mkdir -p "$(dirname "$out")"
    GOMAXPROCS=${PROCS:-2} bin/romae finetune --data "$uea/${ds}_TRAIN.ts" --train.seed "$seed" \
      --out "$out" --train.progress none >"$out.log" 2>&1 || { echo "finetune failed, see $out.log" >&2; exit 1; }
    accs+=("$(bin/romae evaluate --model "$out" --data "$uea/${ds}_TEST.ts" | field accuracy)")
  done
  base=$(bin/romae evaluate --model "$runs/$ds/seed1" --data "$uea/${ds}_TEST.ts" --baselines)
  ed=$(echo "$base" | field '1-NN ED')
  dtw=$(echo "$base" | field '1-NN DTW (full window)')
  maj=$(echo "$base" | field majority)
  stats=$(printf '%s\n' "${accs[@]}" | awk '{s+=$1; q+=$1*$1; n++} END {m=s/n; v=(n>1)?(q-n*m*m)/(n-1):0; if (v<0) v=0; printf "%.4f ± %.4f", m, sqrt(v)}')
  per=$(printf '%.4f ' "${accs[@]}")
  echo "| $ds | $stats | ${per% } | $(printf '%.4f' "$ed") | $(printf '%.4f' "$dtw") | $(printf '%.4f' "$maj") | $(( $(date +%s) - start )) s |"
done
