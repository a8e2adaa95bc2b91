# Periodic light curves sampled near their period (docs/defaults.md,
# "Periods near the sampling spacing"): 3 classes by period (3, 5 or 8
# days), one sinusoid of random amplitude (500-2000) and phase, two bands
# (g, r) observed alternately at random, offsets 5000 and 8000, noise
# N(0, 300^2), 15-70 observations over 60 days starting at MJD 59000-59500.
#   python3 gen.py   -> train.csv, test.csv (240 series each)
import random, math
random.seed(7)
def gen(fn, n):
    with open(fn, 'w') as f:
        f.write("id,time,band,flux,label\n")
        for i in range(n):
            c = random.randrange(3)
            per = [3.0, 5.0, 8.0][c]
            t0 = 59000 + random.uniform(0, 500)
            m = random.randint(15, 70)
            ts = sorted(random.uniform(0, 60) for _ in range(m))
            amp = random.uniform(0.5, 2.0) * 1000
            ph = random.uniform(0, 2*math.pi)
            for t in ts:
                band = random.choice("gr")
                base = 5000 if band == "g" else 8000
                v = base + amp*math.sin(2*math.pi*t/per + ph) + random.gauss(0, 300)
                f.write(f"s{i},{t0+t:.4f},{band},{v:.3f},c{c}\n")
gen("train.csv", 240); gen("test.csv", 240)
