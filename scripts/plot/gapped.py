#!/usr/bin/env python3
"""Plots wgsim_eval.pl alneval output of several mappers as one SVG: for each
tool, reads aligned correctly (y) against reads aligned wrongly (x, log scale),
both cumulative from the highest MAPQ bucket down; one point per bucket
(alneval's buckets are MAPQ / 10), the MAPQ >= 20 point marked. Up and to the
left is better. scripts/bench/gapped.sh writes the .eval files.

Usage: scripts/plot/gapped.py OUT.svg TITLE NAME=FILE.eval [NAME=FILE.eval ...]
No dependencies (writes the SVG by hand).
"""
import math
import sys

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd"]


def read(path):
    rows = []
    for line in open(path):
        f = line.split()
        if len(f) >= 5 and f[0].endswith("x") and f[2] == "/":
            rows.append((int(f[0][:-1]), int(f[1]), int(f[3])))
    rows.sort(reverse=True)
    points, wrong, total = [], 0, 0
    for q, w, c in rows:
        wrong += w
        total += c
        points.append((q, wrong, total - wrong))
    return points


def main():
    out, title, specs = sys.argv[1], sys.argv[2], sys.argv[3:]
    series = [(s.split("=", 1)[0], read(s.split("=", 1)[1])) for s in specs]
    ys = [p[2] for _, pts in series for p in pts]
    ymin, ymax = min(ys), max(ys)
    pad = max(1, (ymax - ymin) * 0.05)
    ymin, ymax = ymin - pad, ymax + pad
    xmax = math.log10(1 + max(p[1] for _, pts in series for p in pts)) + 0.2
    W, H, L, R, T, B = 720, 440, 90, 170, 40, 60

    def sx(w):
        return L + (W - L - R) * math.log10(1 + w) / xmax

    def sy(c):
        return T + (H - T - B) * (1 - (c - ymin) / (ymax - ymin))

    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{W / 2}" y="20" text-anchor="middle" font-size="14">{title}</text>',
           f'<line x1="{L}" y1="{H - B}" x2="{W - R}" y2="{H - B}" stroke="black"/>',
           f'<line x1="{L}" y1="{T}" x2="{L}" y2="{H - B}" stroke="black"/>']
    for k in range(int(xmax) + 1):
        w = 10 ** k - 1
        x = sx(w)
        svg.append(f'<line x1="{x}" y1="{H - B}" x2="{x}" y2="{H - B + 5}" stroke="black"/>')
        svg.append(f'<text x="{x}" y="{H - B + 18}" text-anchor="middle">{w}</text>')
    for k in range(6):
        c = ymin + (ymax - ymin) * k / 5
        y = sy(c)
        svg.append(f'<line x1="{L - 5}" y1="{y}" x2="{L}" y2="{y}" stroke="black"/>')
        svg.append(f'<text x="{L - 8}" y="{y + 4}" text-anchor="end">{c:,.0f}</text>')
    svg.append(f'<text x="{(L + W - R) / 2}" y="{H - 15}" text-anchor="middle">reads aligned wrongly, cumulative from MAPQ 60 down (log scale)</text>')
    svg.append(f'<text x="20" y="{(T + H - B) / 2}" text-anchor="middle" transform="rotate(-90 20 {(T + H - B) / 2})">reads aligned correctly</text>')
    for i, (name, pts) in enumerate(series):
        color = COLORS[i % len(COLORS)]
        path = " ".join(f"{sx(w):.1f},{sy(c):.1f}" for _, w, c in pts)
        svg.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
        for q, w, c in pts:
            r = 5 if q == 2 else 2.5
            svg.append(f'<circle cx="{sx(w):.1f}" cy="{sy(c):.1f}" r="{r}" fill="{color}"/>')
        ly = T + 20 + 20 * i
        svg.append(f'<line x1="{W - R + 15}" y1="{ly}" x2="{W - R + 35}" y2="{ly}" stroke="{color}" stroke-width="2"/>')
        svg.append(f'<text x="{W - R + 40}" y="{ly + 4}">{name}</text>')
    ly = T + 20 + 20 * len(series) + 10
    svg.append(f'<circle cx="{W - R + 25}" cy="{ly}" r="5" fill="gray"/>')
    svg.append(f'<text x="{W - R + 40}" y="{ly + 4}">MAPQ &gt;= 20</text>')
    svg.append("</svg>")
    open(out, "w").write("\n".join(svg) + "\n")


main()
