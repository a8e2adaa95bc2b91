#!/usr/bin/env bash
# Everything issue 14 asks to measure on a machine class, in one run, for the
# machine it runs on (docs/performance.md, "Where each class stands"):
#
#   bash scripts/class_check.sh [OUT]     # OUT: results/classes/DATE-CPU
#
#  1. the CPU (lscpu) and what romae chose on it (`romae version`);
#  2. the tensor package's tests: every product shape class on each back end
#     this CPU runs, AMX on its real tiles where the CPU has them (else the
#     skip says why), the self-check that guards AMX's first use, CPUID
#     against /proc/cpuinfo, and no legacy-SSE code after AVX-512 code;
#  3. speed: scripts/side_by_side.py, the authors' PyTorch and romae fp32 and
#     bf16 alternating, 3 rounds (ROUNDS=n to change), ratios per round;
#  4. quality with the bf16 kernel this CPU chose against fp32, same binary
#     and seeds: pendulum (quick budget, 2 seeds) and BasicMotions (quick,
#     3 seeds), the issue's two checks.
#
# Writes OUT/summary.md (the CPU, the kernels, both tables) and the raw
# outputs beside it. About 30 minutes on 2 cores. Installs what is missing
# (scripts/setup.sh, with the anchor's Debian packages).
set -euo pipefail
cd "$(dirname "$0")/.."
export GOEXPERIMENT=simd
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
out=${1:-results/classes/$(date +%Y%m%d)-$(echo "$cpu" | tr -cs 'A-Za-z0-9' '-' | sed 's/-$//')}
rounds=${ROUNDS:-3}
mkdir -p "$out"

# The anchor's packages (../shared/anchors/README.md) besides romae's own.
bash scripts/setup.sh python3-torch python3-numpy libopenblas0-pthread

echo "class_check: 1/4 CPU and kernels" >&2
lscpu >"$out/lscpu.txt"
bin/romae version >"$out/version.txt"
git describe --always --dirty >"$out/commit.txt" 2>/dev/null || echo unknown >"$out/commit.txt"

echo "class_check: 2/4 the tensor package's tests" >&2
# -v so that a skipped AMX test's reason is in the file.
if go test ./tensor -count=1 -v >"$out/kernel-tests.txt" 2>&1; then
  tests=passed
else
  tests="FAILED (see kernel-tests.txt)"
fi

echo "class_check: 3/4 side by side with the authors' PyTorch ($rounds rounds)" >&2
/usr/bin/python3 scripts/side_by_side.py --romae bin/romae --rounds "$rounds" --steps 4 \
  --out "$out/side-by-side.jsonl" >"$out/side-by-side.txt"

echo "class_check: 4/4 quality, fp32 against bf16" >&2
# A CPU without AVX512_BF16 or AMX (AVX2 only) has no bf16 kernel: romae
# refuses the precision, and the summary says so instead of comparing.
precs="fp32 bf16"
if ! refused=$(bin/romae bench --workload infer --precision bf16 --batch-size 1 --tokens 2 --steps 1 --warmup 0 2>&1 >/dev/null); then
  precs=fp32
  echo "$refused" >"$out/bf16-refused.txt"
fi
for prec in $precs; do
  ROMAE_PRECISION=$prec bin/romae experiment pendulum --budget quick --out "$out/quality-$prec" >"$out/quality-$prec.log" 2>&1
  ROMAE_PRECISION=$prec bin/romae experiment uea --budget quick --data testdata/BasicMotions_TRAIN.ts \
    --out "$out/quality-$prec" >>"$out/quality-$prec.log" 2>&1
done

/usr/bin/python3 - "$out" "$cpu" "$tests" <<'EOF'
import json, os, re, sys
out, cpu, tests = sys.argv[1:4]
version = open(os.path.join(out, "version.txt")).read()
commit = open(os.path.join(out, "commit.txt")).read().strip()
ls = dict(l.split(":", 1) for l in open(os.path.join(out, "lscpu.txt")) if ":" in l)
cpu += f" (family {ls.get('CPU family', '?').strip()}, model {ls.get('Model', '?').strip()}, {ls.get('CPU(s)', '?').strip()} CPUs)"
kt = open(os.path.join(out, "kernel-tests.txt")).read()
# go test -v prints a test's log lines (a skip's reason) before its verdict.
amx = re.search(r"=== RUN   TestAMXGemm\n(?:\s+\S+\.go:\d+: (.*)\n)?(?:.*\n)*?--- (PASS|SKIP|FAIL): TestAMXGemm ", kt)
rows = []
refusedf = os.path.join(out, "bf16-refused.txt")
refused = open(refusedf).read().strip() if os.path.exists(refusedf) else ""
for exp in ("pendulum", "uea-BasicMotions") if not refused else ():
    r = {}
    for prec in ("fp32", "bf16"):
        with open(os.path.join(out, f"quality-{prec}", exp, "results.json")) as f:
            res = json.load(f)
        r[prec] = res["rows"][0] | {"seconds": res["seconds"]}
    f, b = r["fp32"], r["bf16"]
    diffs = [y - x for x, y in zip(f["values"], b["values"])]
    rows.append(f"| {f['setting']} | {f['metric']} | {f['mean']:.4g} ± {f['std']:.2g} | {b['mean']:.4g} ± {b['std']:.2g} | "
                + " / ".join(f"{d:+.3g}" for d in diffs) + f" | {f['seconds']:.0f} / {b['seconds']:.0f} |")
with open(os.path.join(out, "summary.md"), "w") as s:
    s.write(f"# Machine class check: {cpu}\n\n")
    s.write(f"Commit {commit}. `romae version`:\n\n```\n" + version.strip() + "\n```\n\n")
    s.write(f"The tensor package's tests (`go test ./tensor -v`, kernel-tests.txt): {tests}. ")
    if amx:
        s.write(f"TestAMXGemm: {amx.group(2)}" + (f" ({amx.group(1)})" if amx.group(1) else "") + ".")
    s.write("\n\n")
    s.write("## Speed, side by side with the authors' PyTorch\n\n```\n")
    s.write(open(os.path.join(out, "side-by-side.txt")).read().strip() + "\n```\n\n")
    s.write("## Quality: bf16 products against fp32, same binary and seeds\n\n")
    if refused:
        s.write(f"Not compared: romae refuses bf16 on this CPU ({refused}); fp32 results are in quality-fp32.\n")
    else:
        s.write("| setting | metric | fp32 mean ± std | bf16 mean ± std | bf16 − fp32 per seed | wall s, fp32 / bf16 |\n|---|---|---|---|---|---|\n")
        s.write("\n".join(rows) + "\n")
print(open(os.path.join(out, "summary.md")).read())
EOF
