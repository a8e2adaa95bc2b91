import sys
def read_ts(p):
    rows=[]; data=False
    for line in open(p):
        line=line.strip()
        if not line or line.startswith('#'): continue
        if line.lower().startswith('@data'): data=True; continue
        if not data: continue
        parts=line.split(':')
        lab=parts[-1]; dims=[[float(x) for x in d.split(',')] for d in parts[:-1]]
        rows.append((dims,lab))
    return rows
modes={'idx':lambda i:repr(float(i)),'unix':lambda i:repr(1.7e9+10*i),'ms':lambda i:repr(i*1000.0),'mjd':lambda i:repr(60000+i/1440)}
name=sys.argv[1]
for split in ['TRAIN','TEST']:
    rows=read_ts(f'/work/shared/data/uea/{name}_{split}.ts')
    for m,f in modes.items():
        with open(f'{name}-{m}_{split}.csv','w') as o:
            o.write('id,time,channel,value,label\n' if len(rows[0][0])>1 else 'id,time,value,label\n')
            for k,(dims,lab) in enumerate(rows):
                for c,d in enumerate(dims):
                    for i,v in enumerate(d):
                        if len(dims)>1: o.write(f'{k},{f(i)},{c},{v},{lab}\n')
                        else: o.write(f'{k},{f(i)},{v},{lab}\n')
