import numpy as np, sys
def read(p):
    X=[];y=[]
    for line in open(p):
        if line.startswith("@") or not line.strip(): continue
        v,l=line.strip().rsplit(":",1); X.append([float(a) for a in v.split(",")]); y.append(l)
    return np.array(X), np.array(y)
def feats(X):
    d=np.diff(X,axis=1)
    L=X.shape[1]; w=min(30,L)
    rv=np.array([max(np.var(x[i:i+w]) for i in range(0,L-w+1,max(1,w//3))) for x in X])
    return np.column_stack([X.mean(1),X.std(1),X.max(1),X.min(1),np.abs(d).max(1),rv,(np.abs(d)).mean(1)])
def logreg(A,y,At,lam=1e-2,it=3000):
    mu,sd=A.mean(0),A.std(0)+1e-9; A=(A-mu)/sd; At=(At-mu)/sd
    A=np.column_stack([A,np.ones(len(A))]); At=np.column_stack([At,np.ones(len(At))])
    w=np.zeros(A.shape[1])
    for _ in range(it):
        p=1/(1+np.exp(-A@w)); g=A.T@(p-y)/len(y)+lam*w; w-=0.5*g
    return (At@w>0).astype(int)
for name in sys.argv[2:]:
    X,y=read(f"{sys.argv[1]}/{name}_TRAIN.ts"); Xt,yt=read(f"{sys.argv[1]}/{name}_TEST.ts")
    cl=sorted(set(y)); yi=np.array([cl.index(v) for v in y]); yti=np.array([cl.index(v) for v in yt])
    res={}
    res["lr_raw"]=(logreg(X,yi,Xt)==yti).mean()
    res["lr_feat"]=(logreg(feats(X),yi,feats(Xt))==yti).mean()
    D=((Xt[:,None,:]-X[None,:,:])**2).sum(-1); res["1nn_ed"]=(yi[D.argmin(1)]==yti).mean()
    res["majority"]=max((yti==k).mean() for k in range(len(cl)))
    # balanced accuracy for lr_feat
    p=logreg(feats(X),yi,feats(Xt)); res["lr_feat_bal"]=np.mean([(p[yti==k]==k).mean() for k in range(len(cl))])
    print(name, {k:round(float(v),3) for k,v in res.items()})
