#!/usr/bin/env python3
"""Counts reads placed where wgsim drew them, from SAM on stdin (primary
records of read 1 or single-end): mapped, correct (same contig, start within
5 bases of either end of the simulated fragment), and both at MAPQ >= 20.
wgsim names reads CONTIG_START_END_..., START and END the fragment's outer
ends (1-based). Prints one line of counts and percentages. No dependencies.
"""
import sys

total = mapped = correct = q20 = q20_ok = 0
for line in sys.stdin:
    if line.startswith("@"):
        continue
    f = line.split("\t")
    flag = int(f[1])
    if flag & 0x900 or flag & 0x80:
        continue
    total += 1
    if flag & 4:
        continue
    mapped += 1
    parts = f[0].split("/")[0].rsplit("_", 6)
    contig, start, end = parts[0], int(parts[1]), int(parts[2])
    pos, rlen = int(f[3]), len(f[9])
    ok = f[2] == contig and (abs(pos - start) <= 5 or abs(pos + rlen - 1 - end) <= 5)
    correct += ok
    if int(f[4]) >= 20:
        q20 += 1
        q20_ok += ok
pct = lambda a, b: 100.0 * a / b if b else 0.0
print(f"reads {total} mapped {mapped} ({pct(mapped, total):.2f}%) correct {correct} ({pct(correct, total):.2f}%) "
      f"mapq>=20 {q20} of which correct {q20_ok} ({pct(q20_ok, q20):.3f}%)")
