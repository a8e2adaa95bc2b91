# The periodic light curves of ../defaults-periodic-20261129/gen.py with each object at its own
# brightness 10^U(1,4) (r band 1.6 times g), amplitude 0.2-0.5 and noise 0.15 of it
# (docs/defaults.md, "Series on scales orders of magnitude apart").
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
            bright = 10**random.uniform(1, 4); amp = random.uniform(0.2, 0.5) * bright
            ph = random.uniform(0, 2*math.pi)
            for t in ts:
                band = random.choice("gr")
                base = bright * (1.0 if band == "g" else 1.6)
                v = base + amp*math.sin(2*math.pi*t/per + ph) + random.gauss(0, 0.15*bright)
                f.write(f"s{i},{t0+t:.4f},{band},{v:.3f},c{c}\n")
gen("train.csv", 240); gen("test.csv", 240)
