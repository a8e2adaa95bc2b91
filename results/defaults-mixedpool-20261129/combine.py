import csv, math, sys, os, itertools
R='/work/main/bin/romae'  # run in the directory holding out-NAME-POOL-sSEED/ (the session's /tmp/s60/pool)
def labels(ts):
    out=[]; data=False
    for l in open(ts):
        l=l.strip()
        if not l: continue
        if l.lower().startswith('@data'): data=True; continue
        if data and not l.startswith('#'): out.append(l.rsplit(':',1)[1])
    return out
def preds(run, k, test):
    f=f'{run}/fold-{k}/pred-test.csv'
    if not os.path.exists(f):
        os.system(f'{R} predict --model {run}/fold-{k} --data {test} --out {f} 2>/dev/null')
    rows=list(csv.DictReader(open(f)))
    cls=[c[2:] for c in rows[0] if c.startswith('p_')]
    return cls, [[math.log(max(float(r['p_'+c]),1e-30)) for c in cls] for r in rows]
def acc(members, y):
    cls=members[0][0]; n=len(y); ok=0
    for i in range(n):
        s=[sum(m[1][i][j] for m in members)/len(members) for j in range(len(cls))]
        ok+= cls[max(range(len(cls)), key=lambda j:s[j])]==y[i]
    return ok/n
name, test, seed = sys.argv[1], sys.argv[2], sys.argv[3]
y=labels(test)
A={k:preds(f'/tmp/s60/pool/out-{name}-mean-s{seed}',k,test) for k in range(1,6)}
B={k:preds(f'/tmp/s60/pool/out-{name}-meanmax-s{seed}',k,test) for k in range(1,6)}
print(name, 'seed', seed,
 'mean %.4f'%acc([A[k] for k in range(1,6)],y),
 'meanmax %.4f'%acc([B[k] for k in range(1,6)],y),
 'mixed(mean odd) %.4f'%acc([A[k] if k%2 else B[k] for k in range(1,6)],y),
 'mixed(meanmax odd) %.4f'%acc([B[k] if k%2 else A[k] for k in range(1,6)],y),
 'all10 %.4f'%acc([A[k] for k in range(1,6)]+[B[k] for k in range(1,6)],y))
