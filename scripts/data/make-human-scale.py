#!/usr/bin/env python3
"""A human-scale test genome from one real chromosome: the chromosome, then
copies of it with 1% of the bases substituted (a different random seed per
copy), as separate contigs, until TARGET bases. Copies diverge by 1% so the
suffix array sees real-genome structure (repeats, N runs, low complexity)
with long but bounded shared prefixes between copies.

usage: make-human-scale.py CHROM.fa TARGET_BASES OUT.fa   (needs numpy)
"""
import sys

import numpy as np


def read_fasta(path):
    seq = []
    with open(path, "rb") as f:
        for line in f:
            if not line.startswith(b">"):
                seq.append(line.strip())
    return np.frombuffer(b"".join(seq), dtype=np.uint8).copy()


def main():
    src, target, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    base = read_fasta(src)
    base = np.where((base >= 97) & (base <= 122), base - 32, base).astype(np.uint8)
    acgt = np.frombuffer(b"ACGT", dtype=np.uint8)
    is_base = np.isin(base, acgt)
    written, copy = 0, 0
    with open(out, "wb") as f:
        while written < target:
            rng = np.random.default_rng(copy)
            s = base.copy()
            if copy > 0:
                hit = (rng.random(s.size) < 0.01) & is_base
                s[hit] = acgt[rng.integers(0, 4, hit.sum())]
            s = s[: target - written]
            f.write(b">copy%d\n" % copy)
            for i in range(0, s.size, 1 << 20):
                block = s[i : i + (1 << 20)]
                lines = [block[j : j + 60].tobytes() for j in range(0, block.size, 60)]
                f.write(b"\n".join(lines) + b"\n")
            written += s.size
            copy += 1
    print(f"{out}: {copy} contigs, {written} bases (from {src}, {base.size} bases; 1% substitutions per copy)")


if __name__ == "__main__":
    main()
