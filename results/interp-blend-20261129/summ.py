# Summarise run.sh's X.txt files (run in its work directory): per set, mean ± std over the splits
# of the new default (--blend auto), the romae before it, the model alone (--blend off, splits
# 1-3), linear and spline interpolation; how many splits each blend beats linear interpolation on;
# the per-split numbers on stderr.
import json, statistics as st, sys

def ms(v):
    return f"{st.mean(v):.3g} ± {st.stdev(v):.2g}" if len(v) > 1 else (f"{v[0]:.3g}" if v else "–")

print("| dataset | romae now | romae before | model alone | linear | spline | now < linear | before < linear | now < before |")
print("|---|---|---|---|---|---|---|---|---|")
for X in ["BasicMotions", "GunPoint", "JapaneseVowels", "ItalyPowerDemand", "ArrowHead", "PickupGestureWiimoteZ"]:
    try:
        lines = open(f"{X}.txt").read().splitlines()
    except OSError:
        continue
    res, key = {}, None
    for l in lines:
        if l.startswith("# "):
            p = l[2:].replace(",", "").split()
            key = (p[0], int(p[2]), p[-1])  # (new|old, split, mode)
        elif l.startswith("{") and key:
            d = json.loads(l)
            res[key] = d["interp_mse"]
            res[("linear", key[1], "")] = d["baselines"]["linear_mse"]
            res[("spline", key[1], "")] = d["baselines"]["spline_mse"]
            key = None
    splits = sorted({k[1] for k in res if (("new", k[1], "auto") in res and ("old", k[1], "auto") in res)})
    if not splits:
        continue
    col = lambda who, mode: [res[(who, s, mode)] for s in splits if (who, s, mode) in res]
    new, old, off, lin, spl = col("new", "auto"), col("old", "auto"), col("new", "off"), col("linear", ""), col("spline", "")
    n = len(splits)
    print(f"| {X} | {ms(new)} | {ms(old)} | {ms(off)} | {ms(lin)} | {ms(spl)} | "
          f"{sum(a < b for a, b in zip(new, lin))}/{n} | {sum(a < b for a, b in zip(old, lin))}/{n} | {sum(a < b for a, b in zip(new, old))}/{n} |")
    for s, a, b, c in zip(splits, new, old, lin):
        print(f"{X} split {s}: now {a:.4g} before {b:.4g} linear {c:.4g}  now/linear {a / c:.3f} before/linear {b / c:.3f}", file=sys.stderr)
