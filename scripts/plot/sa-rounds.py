#!/usr/bin/env python3
"""Plots `fmalign index --stats` rounds as SVG, one file per algorithm (no dependencies).

Reads the rounds TSV files that scripts/bench/sa.sh saves (WORK/rounds-GENOME-ALGO.tsv:
the `#sa` header and one `sa` line per round, see `Round` in src/sa/mod.rs) and
writes OUT_DIR/sa-rounds-ALGO.svg for every algorithm found (hybrid, skew, ls;
libsais has no rounds). Each SVG has two panels sharing the x axis:

  top     suffixes still unsorted after each round, log scale, one line per
          genome; a run that reached zero drops to the "0" row under the axis.
          hybrid / ls: x = prefix-doubling round (0 = the first radix sort by
          27 / 29 characters; after round r suffixes are sorted by h = 27·2^r
          / 29·2^r characters). skew: x = recursion depth d, y = length of the
          string handed to level d+1 (2/3 of the level's length, 0 when the
          triples at depth d were all distinct and the recursion stopped).
  bottom  seconds per round (log scale); skew: the triple sort plus the merge
          of that depth; hybrid: the final induce + merge is the square marker.

A run that was stopped (timeout) ends in a cross. When WORK/results.tsv (from
bench-sa.sh) lies next to a rounds file, the legend gives the genome's size.

Usage: scripts/plot/sa-rounds.py [-o OUT_DIR] [LABEL=]ROUNDS.tsv ...
  e.g. scripts/plot/sa-rounds.py -o docs bench-out/sa/rounds-*.tsv
The genome label is taken from the file name (rounds-GENOME-ALGO.tsv) unless
given as LABEL=path.
"""
import argparse
import math
import os
import re
import sys

COLORS = {"chr20": "#1f77b4", "at-rich": "#2ca02c", "all-a": "#d62728"}
EXTRA = ["#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"]
TITLES = {
    "hybrid": ("hybrid (spd-SA, Wang–Baxter–Owens): prefix doubling on the 2/3 sample",
               "S12 suffixes still unsorted", "round (after round r: sorted by h = 27·2^r characters)"),
    "ls": ("ls (GPU Larsson–Sadakane, Deng et al.): prefix doubling on all suffixes",
           "suffixes still unsorted", "round (after round r: sorted by h = 29·2^r characters)"),
    "skew": ("skew (wbo-skew DC3): recursion",
             "length of the string recursed on", "recursion depth d (triples at depth d span 3^(d+1) characters)"),
}


def read_rounds(path):
    rows = []
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if len(f) < 8 or f[0] != "sa":
            continue
        rows.append({"algorithm": f[1], "round": int(f[2]), "stage": f[3], "h": int(f[4]),
                     "unsorted": int(f[5]), "groups": int(f[6]), "seconds": float(f[7])})
    return rows


def sizes_near(path):
    """genome -> bases from a results.tsv next to `path`, if there is one."""
    res = os.path.join(os.path.dirname(os.path.abspath(path)), "results.tsv")
    out = {}
    if os.path.exists(res):
        for line in open(res):
            f = line.rstrip("\n").split("\t")
            if len(f) > 2 and not f[0].startswith("#") and f[1].isdigit():
                out[f[0]] = int(f[1])
    return out


def human(n):
    for unit, div in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= div:
            v = n / div
            return f"{v:.1f}{unit}".replace(".0" + unit, unit)
    return f"{n}"


def series(rows):
    """(points [(x, unsorted)], times [(x, seconds)], merge (x, seconds) or None, finished)."""
    algo = rows[0]["algorithm"]
    if algo == "skew":
        levels = [r for r in rows if r["stage"] in ("recurse", "unique")]
        pts = [(r["round"], r["unsorted"]) for r in levels]
        secs = {}
        for r in rows:
            secs[r["round"]] = secs.get(r["round"], 0.0) + r["seconds"]
        times = sorted(secs.items())
        finished = any(r["stage"] == "merge" and r["round"] == 0 for r in rows)
        return pts, times, None, finished
    rounds = [r for r in rows if r["stage"] in ("sort", "double")]
    pts = [(r["round"], r["unsorted"]) for r in rounds]
    times = [(r["round"], r["seconds"]) for r in rounds]
    merge = next(((r["round"], r["seconds"]) for r in rows if r["stage"] == "merge"), None)
    finished = bool(pts) and pts[-1][1] == 0
    return pts, times, merge, finished


def esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def tick_label(v):
    if v >= 1e9:
        return f"{v / 1e9:g}G"
    if v >= 1e6:
        return f"{v / 1e6:g}M"
    if v >= 1e3:
        return f"{v / 1e3:g}k"
    return f"{v:g}"


def plot(algo, runs):
    """runs: list of (label, color, rows). Returns the SVG text."""
    W, L, R = 760, 80, 30
    T1, H1 = 58, 280          # top panel
    GAP = 58
    T2, H2 = T1 + H1 + GAP, 120  # bottom panel
    LEG = 22 * ((len(runs) + 1) // 2) + 10
    H = T2 + H2 + 56 + LEG
    title, ylab, xlab = TITLES.get(algo, (algo, "unsorted", "round"))

    data = []
    for label, color, rows in runs:
        pts, times, merge, finished = series(rows)
        data.append((label, color, pts, times, merge, finished))

    xs = [x for d in data for x, _ in d[2]] + [x for d in data for x, _ in d[3]]
    xs += [d[4][0] for d in data if d[4]]
    xmax = max(xs + [1])
    pos = [v for d in data for _, v in d[2] if v > 0]
    lo_dec = math.floor(math.log10(min(pos))) if pos else 0
    hi_dec = math.ceil(math.log10(max(pos))) if pos else 1
    if hi_dec == lo_dec:
        hi_dec += 1
    zero_gap = 0.7  # decades between the lowest decade and the "0" row
    tpos = [v for d in data for _, v in d[3]] + [d[4][1] for d in data if d[4]]
    clamped = any(v < 0.001 for v in tpos)  # --stats prints 3 decimals
    tpos = [max(v, 0.001) for v in tpos]
    t_lo = math.floor(math.log10(min(tpos))) if tpos else -3
    t_hi = math.ceil(math.log10(max(tpos))) if tpos else 0
    if t_hi == t_lo:
        t_hi += 1

    def px(x):
        return L + 12 + x / xmax * (W - L - R - 24)

    def py(v):
        span = hi_dec - lo_dec + zero_gap
        d = (math.log10(v) - lo_dec + zero_gap) if v > 0 else 0.0
        return T1 + H1 - d / span * H1

    def pt(v):
        v = max(v, 0.001)
        return T2 + H2 - (math.log10(v) - t_lo) / (t_hi - t_lo) * H2

    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
         f'font-family="sans-serif" font-size="12">',
         f'<rect width="{W}" height="{H}" fill="white"/>',
         f'<text x="{W / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">{esc(title)}</text>',
         f'<text x="{W / 2}" y="40" text-anchor="middle" fill="#555">fmalign index --sa {algo} --stats</text>']

    # Frames.
    for top, h in ((T1, H1), (T2, H2)):
        o.append(f'<rect x="{L}" y="{top}" width="{W - L - R}" height="{h}" fill="none" stroke="black"/>')

    # Top panel: y grid at decades (and 2, 5), the 0 row, labels.
    for dec in range(lo_dec, hi_dec + 1):
        for m in (1, 2, 5):
            v = m * 10 ** dec
            if v > 10 ** hi_dec:
                break
            y = py(v)
            if m == 1:
                o.append(f'<line x1="{L}" y1="{y:.1f}" x2="{W - R}" y2="{y:.1f}" stroke="#ccc"/>')
                o.append(f'<text x="{L - 6}" y="{y + 4:.1f}" text-anchor="end">{tick_label(v)}</text>')
            else:
                o.append(f'<line x1="{L}" y1="{y:.1f}" x2="{W - R}" y2="{y:.1f}" stroke="#eee"/>')
    y0 = py(0)
    ybreak = py(10 ** lo_dec) + (y0 - py(10 ** lo_dec)) / 2
    o.append(f'<line x1="{L}" y1="{ybreak:.1f}" x2="{W - R}" y2="{ybreak:.1f}" stroke="#999" stroke-dasharray="2,3"/>')
    o.append(f'<line x1="{L}" y1="{y0:.1f}" x2="{W - R}" y2="{y0:.1f}" stroke="#ccc"/>')
    o.append(f'<text x="{L - 6}" y="{y0 + 4:.1f}" text-anchor="end">0</text>')
    o.append(f'<text x="18" y="{T1 + H1 / 2}" transform="rotate(-90 18 {T1 + H1 / 2})" '
             f'text-anchor="middle">{esc(ylab)} (log)</text>')

    # Bottom panel: seconds.
    for dec in range(t_lo, t_hi + 1):
        y = pt(10 ** dec)
        o.append(f'<line x1="{L}" y1="{y:.1f}" x2="{W - R}" y2="{y:.1f}" stroke="#ddd"/>')
        le = "≤" if clamped and dec == t_lo else ""
        o.append(f'<text x="{L - 6}" y="{y + 4:.1f}" text-anchor="end">{le}{10 ** dec:g}</text>')
    o.append(f'<text x="18" y="{T2 + H2 / 2}" transform="rotate(-90 18 {T2 + H2 / 2})" '
             f'text-anchor="middle">seconds</text>')
    o.append(f'<text x="{L + 6}" y="{T2 - 6}" fill="#555">seconds per {"depth" if algo == "skew" else "round"}'
             f'{" (square: induce + merge)" if algo == "hybrid" else ""}'
             f'{" (triple sort + merge of that depth)" if algo == "skew" else ""}</text>')

    # X ticks on both panels.
    step = 1 if xmax <= 20 else 2 if xmax <= 40 else 5
    for x in range(0, xmax + 1, step):
        for top, h in ((T1, H1), (T2, H2)):
            o.append(f'<line x1="{px(x):.1f}" y1="{top + h}" x2="{px(x):.1f}" y2="{top + h + 4}" stroke="black"/>')
        o.append(f'<text x="{px(x):.1f}" y="{T1 + H1 + 16}" text-anchor="middle">{x}</text>')
        o.append(f'<text x="{px(x):.1f}" y="{T2 + H2 + 16}" text-anchor="middle">{x}</text>')
    o.append(f'<text x="{W / 2}" y="{T1 + H1 + 34}" text-anchor="middle">{esc(xlab)}</text>')

    # Lines.
    for label, color, pts, times, merge, finished in data:
        if pts:
            d = " ".join(f"{px(x):.1f},{py(v):.1f}" for x, v in pts)
            o.append(f'<polyline points="{d}" fill="none" stroke="{color}" stroke-width="2"/>')
            for x, v in pts:
                o.append(f'<circle cx="{px(x):.1f}" cy="{py(v):.1f}" r="3" fill="{color}"/>')
            if not finished:
                x, v = pts[-1]
                cx, cy = px(x), py(v)
                o.append(f'<path d="M{cx - 6:.1f},{cy - 6:.1f}L{cx + 6:.1f},{cy + 6:.1f}M{cx - 6:.1f},{cy + 6:.1f}'
                         f'L{cx + 6:.1f},{cy - 6:.1f}" stroke="{color}" stroke-width="2"/>')
        if times:
            d = " ".join(f"{px(x):.1f},{pt(v):.1f}" for x, v in times)
            o.append(f'<polyline points="{d}" fill="none" stroke="{color}" stroke-width="1.5"/>')
            for x, v in times:
                o.append(f'<circle cx="{px(x):.1f}" cy="{pt(v):.1f}" r="2.5" fill="{color}"/>')
        if merge:
            x, v = merge
            o.append(f'<rect x="{px(x) - 4:.1f}" y="{pt(v) - 4:.1f}" width="8" height="8" fill="{color}"/>')

    # Legend under the bottom panel, two columns.
    ly = T2 + H2 + 44
    for i, (label, color, pts, times, merge, finished) in enumerate(data):
        x = L + (i % 2) * ((W - L - R) / 2)
        y = ly + 22 * (i // 2)
        if algo == "skew":
            note = f"{len(pts)} levels"
        else:
            note = f"sort + {max(len(pts) - 1, 0)} doubling rounds"
        note += "" if finished else ", stopped (timeout)"
        o.append(f'<line x1="{x:.1f}" y1="{y - 4}" x2="{x + 24:.1f}" y2="{y - 4}" stroke="{color}" stroke-width="3"/>')
        o.append(f'<text x="{x + 30:.1f}" y="{y}">{esc(label)} — {note}</text>')
    o.append("</svg>")
    return "\n".join(o) + "\n"


def main():
    ap = argparse.ArgumentParser(description="Plot fmalign --stats rounds as SVG, one per algorithm.")
    ap.add_argument("-o", "--out-dir", default="docs", help="folder for sa-rounds-ALGO.svg (default docs)")
    ap.add_argument("files", nargs="+", help="rounds TSV files, optionally LABEL=path")
    a = ap.parse_args()

    by_algo = {}
    for arg in a.files:
        label, path = (arg.split("=", 1) if "=" in arg and not os.path.exists(arg) else (None, arg))
        rows = read_rounds(path)
        if not rows:
            continue  # libsais: header only
        algo = rows[0]["algorithm"]
        if label is None:
            m = re.match(r"rounds-(.+)-" + re.escape(algo) + r"\.tsv$", os.path.basename(path))
            label = m.group(1) if m else os.path.splitext(os.path.basename(path))[0]
        genome = label
        size = sizes_near(path).get(genome)
        if size:
            label = f"{label} ({human(size)} bases)"
        by_algo.setdefault(algo, []).append((genome, label, rows))
    if not by_algo:
        sys.exit("plot-sa-rounds: no `sa` rounds in the files given")

    os.makedirs(a.out_dir, exist_ok=True)
    order = {"chr20": 0, "at-rich": 1, "all-a": 2}
    for algo, runs in sorted(by_algo.items()):
        runs.sort(key=lambda r: (order.get(r[0], 9), r[0]))
        extra = iter(EXTRA)
        colored = [(label, COLORS.get(genome) or next(extra, "#000"), rows) for genome, label, rows in runs]
        out = os.path.join(a.out_dir, f"sa-rounds-{algo}.svg")
        with open(out, "w") as f:
            f.write(plot(algo, colored))
        print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
