#!/usr/bin/env python3
"""Plots resident memory against time from scripts/bench/rss-trace.py traces as an
SVG (no dependencies): one line per trace, labelled.

Usage: scripts/plot/rss.py TITLE LABEL=TRACE.tsv [LABEL=TRACE.tsv ...] > OUT.svg
"""
import sys

title, specs = sys.argv[1], sys.argv[2:]
series = []
for spec in specs:
    label, path = spec.split("=", 1)
    pts = []
    for line in open(path):
        f = line.split()
        if len(f) == 2:
            pts.append((float(f[0]), int(f[1]) / 1e6))
    series.append((label, pts))

W, H, L, R, T, B = 720, 400, 70, 170, 40, 50
t_max = max(p[0] for _, pts in series for p in pts) * 1.05
m_max = max(p[1] for _, pts in series for p in pts) * 1.1
colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"]


def px(t):
    return L + t / t_max * (W - L - R)


def py(m):
    return H - B - m / m_max * (H - T - B)


def nice(x):
    for s in [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000]:
        if x / s <= 8:
            return s
    return 100000


out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
       f'<rect width="{W}" height="{H}" fill="white"/>',
       f'<text x="{W / 2 - R / 2}" y="20" text-anchor="middle" font-size="14">{title}</text>']
st, sm = nice(t_max), nice(m_max)
t = 0
while t <= t_max:
    out.append(f'<line x1="{px(t):.1f}" y1="{H - B}" x2="{px(t):.1f}" y2="{T}" stroke="#eee"/>')
    out.append(f'<text x="{px(t):.1f}" y="{H - B + 16}" text-anchor="middle">{t:g}</text>')
    t += st
m = 0
while m <= m_max:
    out.append(f'<line x1="{L}" y1="{py(m):.1f}" x2="{W - R}" y2="{py(m):.1f}" stroke="#eee"/>')
    out.append(f'<text x="{L - 6}" y="{py(m) + 4:.1f}" text-anchor="end">{m:g}</text>')
    m += sm
out.append(f'<text x="{(L + W - R) / 2}" y="{H - 12}" text-anchor="middle">seconds</text>')
out.append(f'<text x="16" y="{(T + H - B) / 2}" text-anchor="middle" transform="rotate(-90 16 {(T + H - B) / 2})">resident memory (MB)</text>')
for k, (label, pts) in enumerate(series):
    c = colors[k % len(colors)]
    d = " ".join(f"{px(t):.1f},{py(m):.1f}" for t, m in pts)
    out.append(f'<polyline fill="none" stroke="{c}" stroke-width="1.6" points="{d}"/>')
    y = T + 10 + 18 * k
    out.append(f'<line x1="{W - R + 10}" y1="{y}" x2="{W - R + 30}" y2="{y}" stroke="{c}" stroke-width="2"/>')
    out.append(f'<text x="{W - R + 36}" y="{y + 4}">{label}</text>')
out.append("</svg>")
print("\n".join(out))
