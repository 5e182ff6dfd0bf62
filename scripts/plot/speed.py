#!/usr/bin/env python3
"""Plots scripts/bench/speed.sh's results as one SVG: a panel per read set
(150 bp pairs, 100 bp reads, 250 bp pairs), each tool a point at its wall
seconds (x) and its reads aligned correctly at MAPQ >= 20 (y), labelled with
its name and the reads it aligned wrongly at MAPQ >= 20. Left and up is
better.

Usage: scripts/plot/speed.py results.tsv OUT.svg THREADS
No dependencies (writes the SVG by hand).
"""
import sys

COLORS = {
    "fmalign-local": "#d62728",
    "fmalign-end-to-end": "#ff7f0e",
    "strobealign": "#1f77b4",
    "minimap2": "#2ca02c",
    "bwa-mem": "#9467bd",
    "bwa-mem2": "#8c564b",
}
SETS = [("p150", "150 bp pairs"), ("s100", "100 bp single reads"), ("p250", "250 bp pairs")]


def main():
    path, out, threads = sys.argv[1], sys.argv[2], sys.argv[3]
    rows = [l.rstrip("\n").split("\t") for l in open(path)]
    rows = [r for r in rows if r[2] == threads and r[6] != "-"]
    PW, PH, L, T, B, GAP = 330, 300, 80, 50, 50, 30
    W = L + len(SETS) * (PW + GAP) + 20
    H = T + PH + B + 20
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="11">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{W / 2}" y="18" text-anchor="middle" font-size="14">Time against correct placements at MAPQ &gt;= 20 (wrong ones in parentheses), -t {threads}</text>']
    for k, (s, title) in enumerate(SETS):
        pts = [(r[1], float(r[3]), int(r[6]), int(r[7])) for r in rows if r[0] == s]
        if not pts:
            continue
        x0 = L + k * (PW + GAP)
        xmax = max(p[1] for p in pts) * 1.15
        ys = [p[2] for p in pts]
        pad = max(10, (max(ys) - min(ys)) * 0.15)
        ymin, ymax = min(ys) - pad, max(ys) + pad

        def sx(v):
            return x0 + PW * v / xmax

        def sy(c):
            return T + PH * (1 - (c - ymin) / (ymax - ymin))

        svg.append(f'<text x="{x0 + PW / 2}" y="{T - 10}" text-anchor="middle" font-size="12">{title}</text>')
        svg.append(f'<line x1="{x0}" y1="{T + PH}" x2="{x0 + PW}" y2="{T + PH}" stroke="black"/>')
        svg.append(f'<line x1="{x0}" y1="{T}" x2="{x0}" y2="{T + PH}" stroke="black"/>')
        for i in range(6):
            v = xmax * i / 5
            svg.append(f'<text x="{sx(v)}" y="{T + PH + 15}" text-anchor="middle">{v:.1f}</text>')
            c = ymin + (ymax - ymin) * i / 5
            svg.append(f'<text x="{x0 - 4}" y="{sy(c) + 4}" text-anchor="end">{c:,.0f}</text>')
        svg.append(f'<text x="{x0 + PW / 2}" y="{T + PH + 32}" text-anchor="middle">seconds (wall, index load included)</text>')
        for name, sec, correct, wrong in pts:
            color = COLORS.get(name, "gray")
            svg.append(f'<circle cx="{sx(sec):.1f}" cy="{sy(correct):.1f}" r="5" fill="{color}"/>')
            svg.append(f'<text x="{sx(sec) + 7:.1f}" y="{sy(correct) + 4:.1f}" fill="{color}">{name} ({wrong})</text>')
    svg.append("</svg>")
    open(out, "w").write("\n".join(svg) + "\n")


main()
