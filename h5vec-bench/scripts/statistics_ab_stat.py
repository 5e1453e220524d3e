"""Summarizes statistics_ab.sh's runs (JSON lines in /tmp/ab38, or $OUT): the h5vec
medians and the median per-pass ratio to the hand-written baseline, statistics
off and on."""
import os
import json,statistics as st,collections
res={}
for v in ['off','on']:
    rows=[json.loads(l) for l in open(os.path.join(os.environ.get('OUT', '/tmp/ab38'), f'{v}.jsonl'))]
    d=collections.defaultdict(dict)
    for r in rows: d[(r['workload'],r['phase'],r['pass'])][r['impl']]=r['seconds']
    res[v]=d
print('| workload | phase | statistics off: h5vec median s | on: h5vec median s | off: h5vec/baseline (median of per-pass ratios) | on |')
print('|---|---|---:|---:|---:|---:|')
for w in ['w1','w2']:
    for ph in ['write','read']:
        out=[]
        for v in ['off','on']:
            d=res[v]
            ks=[k for k in d if k[0]==w and k[1]==ph]
            h=[d[k]['rs-h5vec'] for k in ks]
            ra=[d[k]['rs-h5vec']/d[k]['rs-baseline-chunk64k'] for k in ks]
            out.append((st.median(h),st.median(ra),len(ks)))
        print(f'| {w} | {ph} | {out[0][0]:.4f} | {out[1][0]:.4f} | {out[0][1]:.3f} | {out[1][1]:.3f} |  n={out[0][2]}')
