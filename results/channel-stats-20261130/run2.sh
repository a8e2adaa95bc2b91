#!/bin/bash
# run2.sh DIR NAME TRAIN TEST [extra finetune flags...]
d=$1; n=$2; tr=$3; te=$4; shift 4
mkdir -p $d; cd $d
start=$(date +%s)
GOMAXPROCS=${GMP:-1} /work/main/bin/romae finetune --data $tr --out $n "$@" > $n.log 2>&1
GOMAXPROCS=${GMP:-1} /work/main/bin/romae evaluate --model $n --data $te > $n.eval 2>&1
end=$(date +%s)
echo "$d/$n [$*] $((end-start)) s $(grep -o '"accuracy":[0-9.]*' $n.eval | head -1)" >> /tmp/exp/summary.txt
