#!/usr/bin/env python3
"""Plots the output of scripts/bench/sa-sample.sh as an SVG (no dependencies).

Usage: scripts/bench/sa-sample.sh > docs/data/sa-sample-chr20.txt
       scripts/plot/sa-sample.py docs/data/sa-sample-chr20.txt > docs/sa-sample.svg
"""
import math
import sys

rows = []
for line in open(sys.argv[1]):
    f = line.split()
    if f and f[0].isdigit():
        rows.append((int(f[0]), float(f[1]), float(f[4]), float(f[3])))

W, H, L, R, T, B = 640, 360, 70, 70, 40, 50
xs = [math.log2(k) for k, *_ in rows]
x0, x1 = min(xs), max(xs)
size_max = max(r[1] for r in rows) * 1.1
time_max = max(max(r[2], r[3]) for r in rows) * 1.1


def px(x):
    return L + (x - x0) / (x1 - x0) * (W - L - R)


def py(v, vmax):
    return H - B - v / vmax * (H - T - B)


def line(points, color, dash=""):
    d = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    extra = f' stroke-dasharray="{dash}"' if dash else ""
    dots = "".join(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{color}"/>' for x, y in points)
    return f'<polyline points="{d}" fill="none" stroke="{color}" stroke-width="2"{extra}/>{dots}'


out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
       f'<rect width="{W}" height="{H}" fill="white"/>',
       f'<text x="{W/2}" y="20" text-anchor="middle" font-size="14">chr20: --sa-sample K, index size and map -a time (2 threads)</text>',
       f'<line x1="{L}" y1="{H-B}" x2="{W-R}" y2="{H-B}" stroke="black"/>',
       f'<line x1="{L}" y1="{T}" x2="{L}" y2="{H-B}" stroke="black"/>',
       f'<line x1="{W-R}" y1="{T}" x2="{W-R}" y2="{H-B}" stroke="black"/>']
for (k, *_), x in zip(rows, xs):
    out.append(f'<text x="{px(x):.1f}" y="{H-B+16}" text-anchor="middle">{k}</text>')
out.append(f'<text x="{W/2}" y="{H-12}" text-anchor="middle">K (every K-th suffix-array row kept)</text>')
for i in range(5):
    v = size_max * i / 4
    out.append(f'<text x="{L-6}" y="{py(v, size_max)+4:.1f}" text-anchor="end" fill="#1f77b4">{v:.0f}</text>')
    t = time_max * i / 4
    out.append(f'<text x="{W-R+6}" y="{py(t, time_max)+4:.1f}" fill="#d62728">{t:.1f}</text>')
out.append(f'<text x="16" y="{H/2}" transform="rotate(-90 16 {H/2})" text-anchor="middle" fill="#1f77b4">index MB</text>')
out.append(f'<text x="{W-14}" y="{H/2}" transform="rotate(90 {W-14} {H/2})" text-anchor="middle" fill="#d62728">map seconds</text>')
out.append(line([(px(x), py(r[1], size_max)) for r, x in zip(rows, xs)], "#1f77b4"))
out.append(line([(px(x), py(r[2], time_max)) for r, x in zip(rows, xs)], "#d62728"))
out.append(line([(px(x), py(r[3], time_max)) for r, x in zip(rows, xs)], "#d62728", "5,4"))
lx = L + 150
out.append(f'<text x="{lx}" y="{T+14}" fill="#1f77b4">index size</text>')
out.append(f'<text x="{lx}" y="{T+30}" fill="#d62728">100k 25 bp reads, 2.5 M hits (solid)</text>')
out.append(f'<text x="{lx}" y="{T+46}" fill="#d62728">300k 100 bp reads (dashed)</text>')
out.append("</svg>")
print("\n".join(out))
