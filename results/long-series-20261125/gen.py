# The long-series probe of docs/defaults.md ("Very long series"): 20 training and
# 20 test series of 200 000 steps, two classes (a 50 or 60 cycle sine over the
# series under N(0, 0.5²) noise), written as UEA .ts files. Run with Debian's
# python3-numpy: python3 gen.py → Long_TRAIN.ts, Long_TEST.ts (26 MB each).
import numpy as np
rng = np.random.default_rng(1)
for split, n in [("TRAIN", 20), ("TEST", 20)]:
    with open(f"Long_{split}.ts", "w") as f:
        f.write("@problemName Long\n@timeStamps false\n@missing false\n@univariate true\n"
                "@equalLength true\n@seriesLength 200000\n@classLabel true a b\n@data\n")
        for i in range(n):
            c = i % 2
            t = np.arange(200000) / 200000
            x = np.sin(2 * np.pi * (50 + 10 * c) * t) + rng.normal(0, 0.5, 200000)
            f.write(",".join(f"{v:.3f}" for v in x) + ":" + "ab"[c] + "\n")
