#!/usr/bin/env python3
"""SVG plot of bench/width_sweep.sh's output: % of copy bandwidth against the row width
(log scale), one line per kernel and alignment remainder (width mod 8).

  python3 bench/plot_sweep.py OUTDIR/sweep_bf16.json > sweep.svg
"""
import json, math, sys

d = json.load(open(sys.argv[1]))
series = {}
for r in d['results']:
    cols = int(r['shape'].split('x')[1])
    series.setdefault((r['kernel'], cols % 8), []).append((cols, r['pct_copy']))
W, H, L, B = 900, 520, 60, 50  # size and the left/bottom margins
xs = [c for s in series.values() for c, _ in s]
lo, hi = math.log2(min(xs)), math.log2(max(xs))
X = lambda c: L + (math.log2(c) - lo) / (hi - lo) * (W - L - 180)
Y = lambda p: H - B - p / 100 * (H - B - 20)
colors = {'softmax': '#1f77b4', 'rmsnorm': '#d62728', 'add_rmsnorm': '#2ca02c', 'layernorm': '#9467bd'}
dashes = {0: '', 1: '6,3', 2: '2,2', 4: '8,2,2,2'}
out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="11">',
       f'<text x="{L}" y="14">{d["device"]}: % of device-to-device copy ({d["copy_gbs"]:.0f} GB/s) by row width, '
       f'{d["results"][0]["dtype"]}</text>']
for p in range(0, 101, 10):
    out.append(f'<line x1="{L}" x2="{W - 180}" y1="{Y(p)}" y2="{Y(p)}" stroke="#ddd"/>'
               f'<text x="{L - 30}" y="{Y(p) + 4}">{p}%</text>')
for e in range(int(lo), int(hi) + 1):
    out.append(f'<text x="{X(2 ** e) - 10}" y="{H - B + 16}">2^{e}</text>')
out.append(f'<text x="{(W - 180) / 2}" y="{H - 10}">columns (log scale)</text>')
for i, ((k, rem), pts) in enumerate(sorted(series.items())):
    pts.sort()
    path = ' '.join(f'{X(c):.1f},{Y(p):.1f}' for c, p in pts)
    col = colors.get(k, '#333')
    out.append(f'<polyline fill="none" stroke="{col}" stroke-width="1.6" stroke-dasharray="{dashes.get(rem, "")}" points="{path}"/>')
    ly = 30 + 16 * i
    out.append(f'<line x1="{W - 170}" x2="{W - 140}" y1="{ly}" y2="{ly}" stroke="{col}" stroke-width="1.6" '
               f'stroke-dasharray="{dashes.get(rem, "")}"/><text x="{W - 135}" y="{ly + 4}">{k}, width mod 8 = {rem}</text>')
out.append('</svg>')
print('\n'.join(out))
