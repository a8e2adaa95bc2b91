# "bright, by hand": each series of ../bright/{train,test}.csv (gen_bright.py) standardised per band in the file.
# per-series, per-band standardisation of ../bright/{train,test}.csv
import csv, collections, statistics as st, sys
for fn in ["train.csv", "test.csv"]:
    rows = list(csv.DictReader(open("../bright/"+fn)))
    g = collections.defaultdict(list)
    for r in rows: g[(r['id'], r['band'])].append(float(r['flux']))
    ms = {k: (st.mean(v), st.pstdev(v) or 1.0) for k, v in g.items()}
    with open(fn, "w") as f:
        f.write("id,time,band,flux,label\n")
        for r in rows:
            m, s = ms[(r['id'], r['band'])]
            f.write(f"{r['id']},{r['time']},{r['band']},{(float(r['flux'])-m)/s:.5f},{r['label']}\n")
