#!/bin/bash
# run.sh DIR NAME [extra finetune flags...]: finetune on DIR/train.csv, evaluate on DIR/test.csv
d=$1; n=$2; shift 2
cd $d
start=$(date +%s)
GOMAXPROCS=${GMP:-1} /work/main/bin/romae finetune --data train.csv --out $n --data.value_columns flux --data.channel_column band "$@" > $n.log 2>&1
GOMAXPROCS=${GMP:-1} /work/main/bin/romae evaluate --model $n --data test.csv > $n.eval 2>&1
end=$(date +%s)
echo "$d/$n [$*] $((end-start)) s $(grep -o '"accuracy":[0-9.]*' $n.eval | head -1)" >> /tmp/exp/summary.txt
