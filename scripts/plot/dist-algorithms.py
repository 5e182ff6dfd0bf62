#!/usr/bin/env python3
"""Plots scripts/bench/dist.sh's summary.tsv (every algorithm, every P) as one SVG.

Two panels sharing the x axis (ranks P, on one machine's cores):
  left   bytes sent by all ranks over n (P - 1) / P, per algorithm (log scale),
         with issue 21's target of 8;
  right  wall seconds per algorithm, with the single-process build's time
         (a dashed line) and 1.2x it (dotted).

Usage: scripts/plot/dist-algorithms.py SUMMARY.tsv SINGLE_SECONDS OUT.svg [TITLE]
No dependencies (writes the SVG by hand).
"""
import math
import sys

COLORS = {"auto": "#2ca02c", "parts": "#1f77b4", "doubling": "#d62728"}


def read(path):
    rows = {}
    lines = open(path).read().splitlines()
    head = lines[0].split("\t")
    for line in lines[1:]:
        f = line.split("\t")
        r = dict(zip(head, f))
        rows.setdefault(r["algorithm"], []).append(
            (int(r["np"]), float(r["wall_s"]), float(r["sent_over_n(P-1)/P"]))
        )
    return rows


def main():
    summary, single, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    title = sys.argv[4] if len(sys.argv) > 4 else "fmalign index --distributed"
    rows = read(summary)
    ps = sorted({p for v in rows.values() for p, _, _ in v})
    W, H, T, PH, PW = 900, 360, 60, 220, 350
    lefts = (70, 70 + PW + 110)
    xlo, xhi = math.log2(min(ps)) - 0.3, math.log2(max(ps)) + 0.3

    def x(left, p):
        return left + (math.log2(p) - xlo) / (xhi - xlo) * PW

    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{W / 2}" y="22" text-anchor="middle" font-size="15">{title}</text>']
    # Left: bytes (log scale from 0.01 to 1000; 0 drawn at the bottom).
    lo, hi = -2, 3

    def yb(v):
        v = max(v, 10 ** lo)
        return T + PH - (math.log10(v) - lo) / (hi - lo) * PH

    # Right: seconds, linear.
    smax = max(w for v in rows.values() for _, w, _ in v) * 1.1

    def ys(v):
        return T + PH - v / smax * PH

    for k, left in enumerate(lefts):
        svg.append(f'<rect x="{left}" y="{T}" width="{PW}" height="{PH}" fill="none" stroke="#444"/>')
        for p in ps:
            svg.append(f'<text x="{x(left, p):.1f}" y="{T + PH + 16}" text-anchor="middle">{p}</text>')
        svg.append(f'<text x="{left + PW / 2}" y="{T + PH + 34}" text-anchor="middle">ranks P</text>')
    for e in range(lo, hi + 1):
        y = yb(10 ** e)
        svg.append(f'<line x1="{lefts[0]}" x2="{lefts[0] + PW}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>')
        svg.append(f'<text x="{lefts[0] - 6}" y="{y + 4:.1f}" text-anchor="end">{10.0 ** e:g}</text>')
    y8 = yb(8)
    svg.append(f'<line x1="{lefts[0]}" x2="{lefts[0] + PW}" y1="{y8:.1f}" y2="{y8:.1f}" stroke="#000" stroke-dasharray="6 4"/>')
    svg.append(f'<text x="{lefts[0] + PW - 4}" y="{y8 - 5:.1f}" text-anchor="end">target 8</text>')
    svg.append(f'<text x="{lefts[0] + PW / 2}" y="{T - 10}" text-anchor="middle">bytes sent / (n (P-1)/P)</text>')
    step = 10 ** math.floor(math.log10(smax / 2))
    v = 0.0
    while v <= smax:
        y = ys(v)
        svg.append(f'<line x1="{lefts[1]}" x2="{lefts[1] + PW}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>')
        svg.append(f'<text x="{lefts[1] - 6}" y="{y + 4:.1f}" text-anchor="end">{v:g}</text>')
        v += step * (2 if smax / step > 10 else 1)
    for mult, dash, label in [(1.0, "6 4", "single process"), (1.2, "2 3", "1.2x")]:
        y = ys(single * mult)
        svg.append(f'<line x1="{lefts[1]}" x2="{lefts[1] + PW}" y1="{y:.1f}" y2="{y:.1f}" stroke="#000" stroke-dasharray="{dash}"/>')
        svg.append(f'<text x="{lefts[1] + PW - 4}" y="{y - 5:.1f}" text-anchor="end">{label}</text>')
    svg.append(f'<text x="{lefts[1] + PW / 2}" y="{T - 10}" text-anchor="middle">wall seconds (ranks share the cores)</text>')
    for k, (alg, pts) in enumerate(sorted(rows.items())):
        c = COLORS.get(alg, "#555")
        pts.sort()
        for panel, f in [(0, lambda r: yb(r[2])), (1, lambda r: ys(r[1]))]:
            left = lefts[panel]
            shown = [r for r in pts if panel == 1 or r[0] > 1]
            path = " ".join(f"{x(left, r[0]):.1f},{f(r):.1f}" for r in shown)
            svg.append(f'<polyline points="{path}" fill="none" stroke="{c}" stroke-width="2"/>')
            for r in shown:
                svg.append(f'<circle cx="{x(left, r[0]):.1f}" cy="{f(r):.1f}" r="3.5" fill="{c}"/>')
        lx = 70 + k * 150
        svg.append(f'<rect x="{lx}" y="{H - 22}" width="14" height="4" fill="{c}"/>')
        svg.append(f'<text x="{lx + 20}" y="{H - 16}">{alg}</text>')
    svg.append("</svg>")
    open(out, "w").write("\n".join(svg) + "\n")


if __name__ == "__main__":
    main()
