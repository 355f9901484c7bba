#!/usr/bin/env python3
"""Markdown table of the training kernels from bench/training_table.sh's output.

  python3 bench/make_training_table.py OUTDIR

Ours vs the best of torch / torch.compile / Liger-Kernel at the same shapes, in GB/s by
the byte counts peers.py uses: cross-entropy 2*M*V*s (read logits, write dlogits);
norm and softmax forward + backward 5*M*N*s (ours: our forward time plus our backward
time); SwiGLU forward 3*M*N*s. Also our backward alone (% of copy by its own minimal
bytes) and SwiGLU backward.
"""
import json, pathlib, re, sys

out = pathlib.Path(sys.argv[1])
text = (out / 'training_ours.json').read_text()
ours, copy, device = {}, None, ''
for doc in re.findall(r'\{"device".*?\n\]\}', text, re.S):  # one JSON document per tilefuse-bench call
    d = json.loads(doc)
    copy, device = d['copy_gbs'], d['device']
    for r in d['results']:
        ours[(r['kernel'], r['shape'])] = r
peers = {}
for line in (out / 'training_peers.jsonl').read_text().splitlines():
    r = json.loads(line)
    if 'GBs' not in r:
        continue
    key = (r['kernel'], f"{r['M']}x{r['N']}")
    if r['GBs'] > peers.get(key, (0, ''))[0]:
        peers[key] = (r['GBs'], r['impl'])


def size(shape):
    m, n = shape.split('x')
    return int(m) * int(n)


def row(name, shape, gbs, peer_key, own=None):
    p = peers.get(peer_key)
    ratio = f"{gbs / p[0]:.2f}x" if p else '-'
    peer = f"{p[0]:.0f} ({p[1]})" if p else '-'
    extra = f"{own['gbs']:.0f} ({own['pct_copy']:.0f}%)" if own else '-'
    print(f"| {name} | {shape} | {gbs:.0f} ({100 * gbs / copy:.0f}%) | {peer} | {ratio} | {extra} |")


print(f"device: {device}, device-to-device copy {copy:.0f} GB/s (same process)\n")
print("| kernel | shape | ours GB/s (% of copy) | best peer GB/s (impl) | ours / peer | our backward alone GB/s (% of copy) |")
print("|---|---|---|---|---|---|")
for (k, shape), r in sorted(ours.items()):
    if k == 'cross_entropy':
        row('cross-entropy fwd+bwd', shape, r['gbs'], ('cross_entropy', shape))
    elif k.endswith('_bwd') and k != 'swiglu_bwd':
        # LayerNorm's backward reads the statistics its forward saved: pair it with that forward.
        fwd = ours.get(('layernorm_stats' if k == 'layernorm_bwd' else k[:-4], shape))
        if not fwd:
            continue
        es = 4 if r['dtype'] == 'f32' else 2
        nbytes = 5 * size(shape) * es  # peers.py's count
        gbs = nbytes / ((fwd['ms'] + r['ms']) * 1e-3) / 1e9
        row(f"{k[:-4]} fwd+bwd", shape, gbs, (f"{k[:-4]}_fwd_bwd", shape), r)
    elif k == 'swiglu':
        row('SwiGLU fwd', shape, r['gbs'], ('swiglu', shape))
    elif k == 'swiglu_bwd':
        row('SwiGLU bwd', shape, r['gbs'], ('', ''), None)
