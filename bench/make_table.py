#!/usr/bin/env python3
"""Markdown tables for bench/NOTES.md from bench/gallery_table.sh's output directory.

  python3 bench/make_table.py OUTDIR

One table per dtype: kernel x shape -> ours (GB/s, % of copy), the best peer (GB/s and
which), ours / peer, the config; then how many cells meet the targets (>= 90% of copy,
>= 80% at 512x262144; at or above the best peer).
"""
import json, pathlib, sys

out = pathlib.Path(sys.argv[1])
ours = json.loads((out / 'ours.json').read_text())
copy = ours['copy_gbs']
peers = {}
for f in out.glob('peers_*.jsonl'):
    dt = f.stem.split('_', 1)[1]
    for line in f.read_text().splitlines():
        r = json.loads(line)
        if 'GBs' not in r or r.get('kernel') not in ('softmax', 'rmsnorm'):
            continue
        key = (r['kernel'], dt, f"{r['M']}x{r['N']}")
        if r['GBs'] > peers.get(key, (0, ''))[0]:
            peers[key] = (r['GBs'], r['impl'])

met = total = beat = with_peer = 0
print(f"device: {ours['device']}, device-to-device copy {copy:.0f} GB/s (same process)\n")
for dt in ('bf16', 'f16', 'f32'):
    rows = [r for r in ours['results'] if r['dtype'] == dt]
    if not rows:
        continue
    print(f"#### {dt}\n")
    print("| kernel | shape | ours GB/s | % of copy | best peer GB/s (impl) | ours / peer | config |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        target = 80 if r['shape'] == '512x262144' else 90
        ok = r['pct_copy'] >= target
        met += ok
        total += 1
        p = peers.get((r['kernel'], dt, r['shape']))
        ratio = '–'
        peer = '–'
        if p:
            with_peer += 1
            beat += r['gbs'] >= p[0]
            ratio = f"{r['gbs'] / p[0]:.2f}"
            peer = f"{p[0]:.0f} ({p[1]})"
        check = '' if r['check'] else ' CHECK FAILED'
        print(f"| {r['kernel']} | {r['shape']} | {r['gbs']:.0f} | {r['pct_copy']:.1f}%{'' if ok else ' ✗'}{check} | "
              f"{peer} | {ratio} | {r['config'].replace(' num_stages=1', '')} |")
    print()
print(f"targets met: {met} of {total} cells; at or above the best peer: {beat} of {with_peer} cells with a peer")
