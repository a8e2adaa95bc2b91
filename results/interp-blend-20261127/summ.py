import json,sys,statistics as st
for X in ["BasicMotions","GunPoint","JapaneseVowels"]:
    try: lines=open(f"./{X}.txt").read().splitlines()
    except: continue
    res={}; mode=None
    for l in lines:
        if l.startswith("# split"):
            s=int(l.split()[2].rstrip(",")); mode=l.split()[-1]
        elif l.startswith("{") and mode:
            d=json.loads(l); res.setdefault(mode,[]).append(d["interp_mse"])
            res.setdefault("linear",{})[s]=d["baselines"]["linear_mse"]; res.setdefault("spline",{})[s]=d["baselines"]["spline_mse"]
            mode=None
    out=[]
    for k in ["auto","stored","fit","off"]:
        v=res.get(k,[]); 
        if v: out.append(f"{k} {st.mean(v):.4g}±{st.stdev(v) if len(v)>1 else 0:.2g} {['%.4g'%x for x in v]}")
    for k in ["linear","spline"]:
        v=list(res.get(k,{}).values())
        if v: out.append(f"{k} {st.mean(v):.4g}±{st.stdev(v) if len(v)>1 else 0:.2g} {['%.4g'%x for x in v]}")
    print(X); print("\n".join("  "+o for o in out))
