import csv,sys
rows=list(csv.reader(open(sys.argv[1])))
h=rows[1]; data=rows[2:]
ix={k:i for i,k in enumerate(h)}
tot=sum(int(r[ix["Warp Stall Sampling (All Samples)"]] or 0) for r in data if len(r)>5)
insts=sum(int(r[ix["Instructions Executed"]] or 0) for r in data if len(r)>5)
print("samples",tot,"warp insts",insts)
stalls=[k for k in h if k.startswith("stall_") and "Not Issued" not in k]
agg={k:sum(int(r[ix[k]] or 0) for r in data if len(r)>5) for k in stalls}
print(sorted(((v,k) for k,v in agg.items()),reverse=True)[:8])
top=sorted(data,key=lambda r:-int(r[ix["Warp Stall Sampling (All Samples)"]] or 0))[:int(sys.argv[2]) if len(sys.argv)>2 else 25]
for r in top:
  s=int(r[ix["Warp Stall Sampling (All Samples)"]]); 
  det=sorted(((int(r[ix[k]] or 0),k[6:]) for k in stalls),reverse=True)[:3]
  print(f"{s:6d} {100*s/tot:5.1f}% {r[0][-5:]} {r[1].strip()[:60]:60s} ex={r[ix['Instructions Executed']]} {det}")
