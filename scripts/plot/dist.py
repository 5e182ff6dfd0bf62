#!/usr/bin/env python3
"""Plots `mpirun -np P fmalign index --distributed` runs as one SVG (no dependencies).

For the prefix-doubling runs of 2026-11-21 (docs/data/dist, written by the
bench-dist.sh of then); today's scripts/bench/dist.sh writes one line per
algorithm and P, plotted by scripts/plot/dist-algorithms.py.

Reads DATA_DIR/summary.tsv (header; np, wall_s, max_rss_mb,
sent_bytes_per_base_per_rank, then the slowest rank's seconds per phase: scan,
read, sa, bwt+occ, reversed, write) and DATA_DIR/phases.tsv (no header; np,
rank, phase, seconds, bytes_sent) and writes OUT_DIR/dist-chr20.svg with two
panels sharing the x axis (number of ranks P):

  left   bytes sent per base of a rank's block: per P, (sum over ranks of the
         bytes one phase sent) / n, stacked by phase (sa, bwt+occ, reversed;
         scan, read and write send a few bytes and are left out), against the
         model 107 B x (P-1)/P.
  right  wall time: the slowest rank's seconds per phase, stacked (scan + read
         + write as one grey slice), the measured wall time as a black tick,
         and the model 1.65 us x n for P = 1, 2.1 us x n / 2 for P >= 2 (the
         runs share 2 cores). The stack can end a little above the tick: each
         phase's slowest rank need not be the same rank.

Usage: scripts/plot/dist.py [-o docs] [docs/data/dist]
  e.g. scripts/plot/dist.py -o docs docs/data/dist
n defaults to human chr20 (59,505,520 bases); --bases changes it.
"""
import argparse
import math
import os
import sys

PHASES = ["sa", "bwt+occ", "reversed"]
COLORS = {"sa": "#1f77b4", "bwt+occ": "#ff7f0e", "reversed": "#2ca02c", "other": "#bbbbbb"}
MODEL = "#d62728"
CHR20 = 59_505_520
BYTES_PER_BASE = 107      # model: B sent per base of a rank's block, times (P-1)/P
US_SERIAL = 1.65          # model: us per base, one process
US_CORE = 2.1             # model: core-us per base, distributed
CORES = 2


def read_summary(path):
    rows = {}
    lines = open(path).read().splitlines()
    head = lines[0].split("\t")
    for line in lines[1:]:
        f = line.split("\t")
        if len(f) != len(head):
            continue
        r = dict(zip(head, f))
        rows[int(r["np"])] = {k: float(v) for k, v in r.items() if k != "np"}
    return rows


def read_phases(path):
    """np -> phase -> total bytes sent by all ranks."""
    sent = {}
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if len(f) < 5 or not f[0].isdigit():
            continue
        p = sent.setdefault(int(f[0]), {})
        p[f[2]] = p.get(f[2], 0) + int(f[4])
    return sent


def esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def nice_max(v, step):
    return step * math.ceil(v * 1.12 / step)


def plot(summary, sent, n):
    W, H = 900, 380
    T, PH = 58, 218                       # panel top, panel height
    PW = 356                              # panel width
    LEFTS = (70, 70 + PW + 100)          # panel left edges
    ps = sorted(summary)
    xlo, xhi = min(ps) - 0.6, max(ps) + 0.6
    bw = 0.62                             # bar width in P units

    bpb = {p: {ph: sent.get(p, {}).get(ph, 0) / n for ph in PHASES} for p in ps}
    b_max = nice_max(max([sum(v.values()) for v in bpb.values()] + [BYTES_PER_BASE]), 20)
    model_t = {p: (US_SERIAL if p == 1 else US_CORE / min(p, CORES)) * n * 1e-6 for p in ps}
    stack_t = {p: [(ph, summary[p][ph]) for ph in PHASES] +
                  [("other", sum(summary[p].get(k, 0.0) for k in ("scan", "read", "write")))] for p in ps}
    t_max = nice_max(max([summary[p]["wall_s"] for p in ps] +
                         [sum(v for _, v in stack_t[p]) for p in ps] + list(model_t.values())), 20)

    def px(i, x):
        return LEFTS[i] + (x - xlo) / (xhi - xlo) * PW

    def py(v, vmax):
        return T + PH - v / vmax * PH

    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
         f'font-family="sans-serif" font-size="12">',
         f'<rect width="{W}" height="{H}" fill="white"/>',
         f'<text x="{W / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">'
         f'fmalign index --distributed: bytes sent and wall time vs number of ranks</text>']

    panels = ((0, "Bytes sent per base of a rank's block", "bytes / base", b_max),
              (1, "Wall time", "seconds", t_max))
    for i, ptitle, ylab, vmax in panels:
        L = LEFTS[i]
        o.append(f'<text x="{L + PW / 2}" y="{T - 8}" text-anchor="middle" font-size="13" '
                 f'font-weight="bold">{esc(ptitle)}</text>')
        for v in range(0, int(vmax) + 1, 20):
            y = py(v, vmax)
            o.append(f'<line x1="{L}" y1="{y:.1f}" x2="{L + PW}" y2="{y:.1f}" stroke="#e4e4e4"/>')
            o.append(f'<text x="{L - 6}" y="{y + 4:.1f}" text-anchor="end">{v}</text>')
        o.append(f'<text x="{L - 40}" y="{T + PH / 2}" transform="rotate(-90 {L - 40} {T + PH / 2})" '
                 f'text-anchor="middle">{esc(ylab)}</text>')
        for p in ps:
            x = px(i, p)
            o.append(f'<line x1="{x:.1f}" y1="{T + PH}" x2="{x:.1f}" y2="{T + PH + 4}" stroke="black"/>')
            o.append(f'<text x="{x:.1f}" y="{T + PH + 17}" text-anchor="middle">{p}</text>')
        o.append(f'<text x="{L + PW / 2}" y="{T + PH + 34}" text-anchor="middle">number of ranks P '
                 f'(mpirun -np P)</text>')

    def bars(i, stacks, vmax, fmt):
        for p in ps:
            x0, x1 = px(i, p - bw / 2), px(i, p + bw / 2)
            acc = 0.0
            for ph, v in stacks[p]:
                if v <= 0:
                    continue
                y0, y1 = py(acc + v, vmax), py(acc, vmax)
                o.append(f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{x1 - x0:.1f}" height="{y1 - y0:.1f}" '
                         f'fill="{COLORS[ph]}"><title>P={p} {esc(ph)}: {fmt(v)}</title></rect>')
                acc += v
            yield p, (x0 + x1) / 2, acc

    # Left panel: bytes per base, stacked, and the model curve.
    for p, cx, tot in bars(0, {p: [(ph, bpb[p][ph]) for ph in PHASES] for p in ps}, b_max,
                           lambda v: f"{v:.2f} B/base"):
        if tot > 0.05 * b_max:  # low in the top slice: the model curve runs across the bar's top
            top = bpb[p][PHASES[-1]]
            o.append(f'<text x="{cx:.1f}" y="{py(tot - top, b_max) - 6:.1f}" text-anchor="middle" '
                     f'font-size="11" font-weight="bold" fill="white">{tot:.1f}</text>')
        else:
            o.append(f'<text x="{cx - 6:.1f}" y="{py(tot, b_max) - 4:.1f}" text-anchor="end" '
                     f'font-size="11">{tot:.1f}</text>')
    steps = 60
    pts = []
    for k in range(steps + 1):
        p = 1 + (max(ps) + 0.5 - 1) * k / steps
        pts.append(f"{px(0, p):.1f},{py(BYTES_PER_BASE * (p - 1) / p, b_max):.1f}")
    o.append(f'<polyline points="{" ".join(pts)}" fill="none" stroke="{MODEL}" stroke-width="2" '
             f'stroke-dasharray="6,4"/>')
    for p in ps:
        o.append(f'<circle cx="{px(0, p):.1f}" cy="{py(BYTES_PER_BASE * (p - 1) / p, b_max):.1f}" r="2.5" '
                 f'fill="{MODEL}"/>')
    L = LEFTS[0]
    o.append(f'<line x1="{L + 10}" y1="{T + 16}" x2="{L + 36}" y2="{T + 16}" stroke="{MODEL}" '
             f'stroke-width="2" stroke-dasharray="6,4"/>')
    o.append(f'<text x="{L + 42}" y="{T + 20}">model: 107 B x (P-1)/P</text>')
    o.append(f'<text x="{L + 10}" y="{T + 38}" font-size="11" fill="#555">'
             f'scan, read, write send ~0 B: omitted; white: total B/base</text>')

    # Right panel: slowest rank's phase seconds, stacked; model step; wall tick on top.
    drawn = list(bars(1, stack_t, t_max, lambda v: f"{v:.2f} s (slowest rank)"))
    pts = [(min(ps) - 0.5, model_t[min(ps)])]
    for p in ps:
        if p > min(ps) and model_t[p] != pts[-1][1]:
            pts.append((p - 0.5, pts[-1][1]))
            pts.append((p - 0.5, model_t[p]))
    pts.append((max(ps) + 0.5, model_t[max(ps)]))
    d = " ".join(f"{px(1, x):.1f},{py(v, t_max):.1f}" for x, v in pts)
    o.append(f'<polyline points="{d}" fill="none" stroke="{MODEL}" stroke-width="2" stroke-dasharray="6,4"/>')
    for p, cx, tot in drawn:
        wall = summary[p]["wall_s"]
        y = py(wall, t_max)
        hw = (px(1, p + bw / 2) - px(1, p - bw / 2)) / 2 + 4
        o.append(f'<line x1="{cx - hw:.1f}" y1="{y:.1f}" x2="{cx + hw:.1f}" y2="{y:.1f}" stroke="black" '
                 f'stroke-width="2.5"><title>P={p} wall {wall:.2f} s</title></line>')
        o.append(f'<text x="{cx:.1f}" y="{py(max(wall, tot), t_max) - 6:.1f}" text-anchor="middle" '
                 f'font-size="11">{wall:.1f}</text>')
    L = LEFTS[1]
    lx = px(1, 1.9)
    o.append(f'<line x1="{lx:.1f}" y1="{T + 16}" x2="{lx + 26:.1f}" y2="{T + 16}" stroke="{MODEL}" '
             f'stroke-width="2" stroke-dasharray="6,4"/>')
    o.append(f'<text x="{lx + 32:.1f}" y="{T + 20}">model: 2.1 core-us/base / min(P, 2 cores)</text>')
    o.append(f'<line x1="{lx:.1f}" y1="{T + 36}" x2="{lx + 26:.1f}" y2="{T + 36}" stroke="black" '
             f'stroke-width="2.5"/>')
    o.append(f'<text x="{lx + 32:.1f}" y="{T + 40}">wall time (label: s)</text>')
    o.append(f'<text x="{lx + 32:.1f}" y="{T + 56}" font-size="11" fill="#555">'
             f'P = 1 model: {US_SERIAL} us/base</text>')

    # Frames last, so bars do not cover them.
    for L in LEFTS:
        o.append(f'<rect x="{L}" y="{T}" width="{PW}" height="{PH}" fill="none" stroke="black"/>')

    # Shared phase legend.
    items = [("sa", "sa"), ("bwt+occ", "bwt+occ"), ("reversed", "reversed"),
             ("other", "scan + read + write (time only)")]
    ly = T + PH + 58
    x = LEFTS[0]
    o.append(f'<text x="{x}" y="{ly}" font-weight="bold">phase:</text>')
    x += 52
    for key, label in items:
        o.append(f'<rect x="{x}" y="{ly - 11}" width="14" height="14" fill="{COLORS[key]}"/>')
        o.append(f'<text x="{x + 20}" y="{ly}">{esc(label)}</text>')
        x += 20 + 6.8 * len(label) + 24
    o.append(f'<text x="{W - 26}" y="{ly}" text-anchor="end" font-size="11" fill="#555">'
             f'right: slowest rank per phase</text>')
    o.append(f'<text x="{W / 2}" y="{H - 12}" text-anchor="middle" font-size="11" fill="#444">'
             f'Data: docs/data/dist (human chr20, n = {n:,} bases), mpirun -np P fmalign index '
             f'--distributed on a 2-core VM, P = {", ".join(map(str, ps))}.</text>')
    o.append("</svg>")
    return "\n".join(o) + "\n"


def main():
    ap = argparse.ArgumentParser(description="Plot fmalign index --distributed runs as SVG.")
    ap.add_argument("-o", "--out-dir", default="docs", help="folder for dist-chr20.svg (default docs)")
    ap.add_argument("data", nargs="?", default="docs/data/dist",
                    help="folder with summary.tsv and phases.tsv (default docs/data/dist)")
    ap.add_argument("--bases", type=int, default=CHR20, help=f"genome length n (default {CHR20:,}, chr20)")
    a = ap.parse_args()

    summary = read_summary(os.path.join(a.data, "summary.tsv"))
    sent = read_phases(os.path.join(a.data, "phases.tsv"))
    if not summary:
        sys.exit("plot-dist: no rows in summary.tsv")
    os.makedirs(a.out_dir, exist_ok=True)
    out = os.path.join(a.out_dir, "dist-chr20.svg")
    with open(out, "w") as f:
        f.write(plot(summary, sent, a.bases))
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
