import numpy as np, sys, os
out = sys.argv[1]
def write(name, X, y, classes):
    with open(os.path.join(out, name), "w") as f:
        f.write(f"@problemName {name}\n@timeStamps false\n@univariate true\n@equalLength true\n@seriesLength {X.shape[1]}\n@classLabel true {' '.join(classes)}\n@data\n")
        for x, c in zip(X, y):
            f.write(",".join(f"{v:.5g}" for v in x) + f":{classes[c]}\n")
def both(name, gen, ntr, nte, seed):
    r = np.random.default_rng(seed)
    for split, n in (("TRAIN", ntr), ("TEST", nte)):
        X, y = gen(r, n)
        write(f"{name}_{split}.ts", X, y, ["a", "b"])
def long(r, n):
    L = 2000; y = r.integers(0, 2, n); X = r.normal(0, 1, (n, L))
    t = np.arange(60)
    for i in range(n):
        s = r.integers(0, L - 60)
        period = 8 if y[i] else 20
        X[i, s:s+60] += 2 * np.sin(2*np.pi*t/period)
    return X, y
def short5(r, n):
    y = r.integers(0, 2, n); t = np.arange(5) - 2.0
    a = r.normal(0, 1, n); b = r.normal(0, 1, n); c = np.where(y == 1, 0.3, -0.3)
    X = a[:, None] + b[:, None]*t + c[:, None]*t*t + r.normal(0, 0.4, (n, 5))
    return X, y
def spike(r, n):
    L = 100; y = r.integers(0, 2, n); X = r.normal(0, 1, (n, L))
    for i in range(n):
        if y[i]: X[i, r.integers(0, L)] += 4
    return X, y
def imbalance(r, n):
    L = 60; y = (r.random(n) < 0.1).astype(int); X = r.normal(0, 0.5, (n, L)); t = np.arange(L)
    for i in range(n):
        ph = r.random()*2*np.pi
        X[i] += np.sin(2*np.pi*t/(12 if y[i] else 20) + ph)
    return X, y
both("long", long, 200, 300, 1)
both("short5", short5, 300, 500, 2)
both("spike", spike, 300, 500, 3)
both("imbalance", imbalance, 300, 500, 4)
