# Transient light curves with a bursty cadence (a check that a time-unit rule
# for irregular data does not break non-periodic data): 3 classes by fall time
# (Bazin: rise 3 d, fall 8, 20 or 50 d), peak flux 1000-5000, colour r/g 0.6-1.4
# (class-independent), two bands, nights every 1-6 days with 1-3 observations an
# hour apart, 40-120 days observed, peak somewhere inside, noise N(0, 100^2).
import random, math
random.seed(11)
def bazin(t, t0, trise, tfall):
    return math.exp(-(t-t0)/tfall)/(1+math.exp(-(t-t0)/trise))
def gen(fn, n):
    with open(fn, 'w') as f:
        f.write("id,time,band,flux,label\n")
        for i in range(n):
            c = random.randrange(3)
            tfall = [8.0, 20.0, 50.0][c]
            span = random.uniform(40, 120)
            tpk = random.uniform(0.1, 0.6)*span
            A = random.uniform(1000, 5000); col = random.uniform(0.6, 1.4)
            start = 60000 + random.uniform(0, 300)
            t = 0.0
            while t < span:
                for k in range(random.randint(1, 3)):
                    tt = t + k/24 + random.uniform(0, 0.01)
                    band = random.choice("gr")
                    a = A*(col if band == "r" else 1)
                    v = a*bazin(tt, tpk, 3.0, tfall) + random.gauss(0, 100)
                    f.write(f"s{i},{start+tt:.5f},{band},{v:.3f},c{c}\n")
                t += random.uniform(1, 6)
gen("train.csv", 240); gen("test.csv", 240)
