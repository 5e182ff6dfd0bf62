#!/usr/bin/env python3
"""Writes synthetic FASTA genomes for the suffix-array benchmarks (no dependencies).

Two kinds:

  tandem   LENGTH bases: one random unit of --unit bases (default 10 kb)
           repeated end to end, exact copies — the paper's other worst case
           (every suffix agrees with the one a unit further on for the rest
           of the text).
  all-a    LENGTH bases of A in one contig: every suffix is a prefix of the
           one before it, the worst case of prefix doubling (each round only
           settles the suffixes within h of the end, so the unsorted group
           shrinks by h, not by a factor).

  fib      LENGTH bases of the Fibonacci word over {A, C} (a -> ab,
           b -> a, a = A, b = C): aperiodic, yet every factor recurs, so
           prefix doubling's groups barely shrink (a third worst case, with
           all-a and tandem).
  at-rich  LENGTH bases modelled on AT-rich genomes such as Plasmodium
           falciparum (~80% A+T): an order-2 Markov background whose
           transition table is drawn once from the seed (A and T 40% each on
           average, with a homopolymer bias that gives poly-A/poly-T tracts),
           interrupted by
             * microsatellites: a unit of 1-6 bases, mostly A/T, e.g. (AT)n,
               (AAT)n, poly-A, (GAA)n, repeated to 10-300 bases, 2%
               substitutions;
             * tandem repeats: a background unit of 10-200 bases repeated
               2-20 times, each copy with 0-3% substitutions;
             * interspersed repeat families: 24 consensus sequences of
               0.3-8 kb, whole or partial copies on either strand, scattered
               with 0-10% substitutions (like var/rifin/stevor families).
           These are what keep suffixes unsorted for many prefix-doubling
           rounds on real genomes.
  satellite
           LENGTH bases of uniform random sequence with one centromere-like
           satellite array of --array bases (default a fifth of LENGTH) in
           the middle, modelled on the alpha-satellite arrays of the T2T
           human assembly: a 171-base monomer, a higher-order repeat (HOR)
           of --hor monomers (default 12, each 20% diverged from the first),
           and the HOR copied end to end, each copy made from the one before
           with --div substitutions per base (default 0.001), or exactly
           (a copy in --exact of cases, default 0.3), so that neighbouring
           copies are near-identical and far ones drift apart (layered
           expansion). --div 0 gives an exact tandem array inside random
           sequence.

Output is deterministic: the same arguments give the same bytes on every
machine and Python 3 version (the randomness is SHAKE-256 of the seed and a
splitmix64 generator, not Python's `random`; only integer and exact float
arithmetic, no libm). Lines are 60 bases, one contig.

Usage:
  scripts/data/make-test-genomes.py all-a   LENGTH OUT.fa
  scripts/data/make-test-genomes.py fib     LENGTH OUT.fa
  scripts/data/make-test-genomes.py tandem  LENGTH OUT.fa [--unit N] [--seed N]
  scripts/data/make-test-genomes.py at-rich LENGTH OUT.fa [--seed N] [--at FRACTION]
  scripts/data/make-test-genomes.py satellite LENGTH OUT.fa [--array N] [--hor N] [--div F]
                                         [--exact F] [--seed N]
LENGTH takes a k, M or G suffix (20M = 20,000,000). OUT.fa may be - for stdout.
A summary (length, A+T fraction, share of each feature) goes to stderr.
"""
import argparse
import hashlib
import sys

LINE = 60
BASES = b"ACGT"


def parse_length(s):
    mult = {"k": 10**3, "m": 10**6, "g": 10**9}
    s = s.strip().lower().replace("_", "")
    if s and s[-1] in mult:
        return int(float(s[:-1]) * mult[s[-1]])
    return int(s)


class Rng:
    """splitmix64: a small deterministic generator for the layout decisions."""

    def __init__(self, seed):
        self.x = seed & 0xFFFFFFFFFFFFFFFF

    def u64(self):
        self.x = (self.x + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
        z = self.x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
        return z ^ (z >> 31)

    def random(self):
        """Uniform in [0, 1)."""
        return (self.u64() >> 11) / float(1 << 53)

    def below(self, n):
        return self.u64() % n

    def between(self, lo, hi):
        """Uniform integer in [lo, hi]."""
        return lo + self.below(hi - lo + 1)


def byte_stream(seed, tag):
    """An endless deterministic byte source: SHAKE-256 of (seed, tag, block)."""
    block = 0
    while True:
        yield from hashlib.shake_256(f"{seed}:{tag}:{block}".encode()).digest(1 << 20)
        block += 1


class Markov:
    """Order-2 Markov chain over ACGT (indices 0..3) with 8-bit probabilities."""

    def __init__(self, rng, at):
        gc = 1.0 - at
        # table[ctx * 256 + r] is the next base for context ctx = 4*x + y and
        # a uniform byte r.
        self.table = bytearray(16 * 256)
        self.probs = []
        for ctx in range(16):
            y = ctx & 3
            p = [at / 2, gc / 2, gc / 2, at / 2]  # A C G T
            if y in (0, 3):
                p[y] *= 1.45  # poly-A / poly-T tracts
            else:
                p[y] *= 0.8
            p = [q * (0.75 + 0.5 * rng.random()) for q in p]
            # Back to the requested A+T share in every context.
            a_t, c_g = p[0] + p[3], p[1] + p[2]
            p = [p[0] * at / a_t, p[1] * gc / c_g, p[2] * gc / c_g, p[3] * at / a_t]
            self.probs.append(p)
            edges, acc = [], 0.0
            for q in p[:3]:
                acc += q
                edges.append(round(acc * 256))
            for r in range(256):
                self.table[ctx * 256 + r] = sum(1 for e in edges if r >= e)

    def generate(self, n, state, stream):
        """n bases (as indices 0..3) continuing from context `state`."""
        out = bytearray(n)
        t = self.table
        for i in range(n):
            c = t[(state << 8) | next(stream)]
            out[i] = c
            state = ((state << 2) | c) & 15
        return out, state


def mutate(seq, rate, rng, at):
    """Substitutions at `rate` per base, replacement drawn with the A+T bias."""
    if rate <= 0:
        return seq
    seq = bytearray(seq)
    n = len(seq)
    i = -1
    while True:
        # Gap to the next substitution: uniform with mean 1/rate (integers
        # only, so the output does not depend on the platform's libm).
        i += rng.between(1, max(1, round(2.0 / rate) - 1))
        if i >= n:
            return bytes(seq)
        while True:
            c = (0 if rng.random() < 0.5 else 3) if rng.random() < at else (1 if rng.random() < 0.5 else 2)
            if c != seq[i]:
                break
        seq[i] = c


MICRO_UNITS = ["A", "T", "AT", "TA", "AAT", "ATT", "TAA", "AAAT", "TTTA", "AATAT",
               "ATATTT", "AC", "TG", "AAC", "GAA", "TTC"]


def at_rich(length, seed, at):
    rng = Rng(seed)
    stream = byte_stream(seed, "markov")
    chain = Markov(rng, at)
    state = 0b0011  # context "AT"

    def background(n):
        nonlocal state
        s, state = chain.generate(n, state, stream)
        return bytes(s)

    # Interspersed repeat families: a consensus each.
    families = [background(rng.between(300, 8000)) for _ in range(24)]

    out = bytearray()
    share = {"background": 0, "microsatellite": 0, "tandem": 0, "interspersed": 0}
    while len(out) < length:
        # Background run of 50 bp to 3 kb, 1.55 kb on average.
        run = rng.between(50, 3050)
        piece = background(run)
        out += piece
        share["background"] += len(piece)
        kind = rng.random()
        if kind < 0.65:
            unit = MICRO_UNITS[rng.below(len(MICRO_UNITS))] if rng.random() < 0.7 else \
                "".join("AT"[rng.below(2)] if rng.random() < 0.9 else "CG"[rng.below(2)]
                        for _ in range(rng.between(1, 6)))
            total = rng.between(10, 300)
            reps = total // len(unit) + 1
            s = bytes(BASES.index(ord(ch)) for ch in (unit * reps)[:total])
            piece = mutate(s, 0.02, rng, at)
            share["microsatellite"] += len(piece)
        elif kind < 0.85:
            unit = background(rng.between(10, 200))
            copies = rng.between(2, 20)
            piece = b"".join(mutate(unit, 0.03 * rng.random(), rng, at) for _ in range(copies))
            share["tandem"] += len(piece)
        else:
            fam = families[rng.below(len(families))]
            if rng.random() < 0.5:
                piece = fam
            else:
                a = rng.below(len(fam))
                b = rng.between(a + 1, len(fam))
                piece = fam[a:b]
            if rng.random() < 0.5:
                piece = bytes(3 - c for c in reversed(piece))  # reverse complement
            piece = mutate(piece, 0.10 * rng.random(), rng, at)
            share["interspersed"] += len(piece)
        out += piece
    del out[length:]
    return bytes(out), share


def random_bases(n, stream):
    """n uniform bases (indices 0..3), four from each byte of the stream."""
    out = bytearray()
    while len(out) < n:
        chunk = bytes(next(stream) for _ in range(min(1 << 16, (n - len(out) + 3) // 4)))
        out += b"".join(QUAD[b] for b in chunk)
    return bytes(out[:n])


QUAD = [bytes(((b >> 6) & 3, (b >> 4) & 3, (b >> 2) & 3, b & 3)) for b in range(256)]


def satellite(length, array, hor, div, exact, seed):
    """Random sequence with a T2T-like alpha-satellite HOR array in the middle."""
    rng = Rng(seed)
    stream = byte_stream(seed, "satellite")
    array = min(array, length)
    monomer = random_bases(171, stream)
    unit = b"".join(monomer if k == 0 else mutate(monomer, 0.2, rng, 0.5) for k in range(hor))
    arr = bytearray()
    copy = unit
    copies = 0
    while len(arr) < array:
        arr += copy
        copies += 1
        if rng.random() >= exact:
            copy = mutate(copy, div, rng, 0.5)
    del arr[array:]
    left = (length - array) // 2
    seq = random_bases(left, stream) + bytes(arr) + random_bases(length - array - left, stream)
    return seq, copies, len(unit)


def fibonacci(length):
    """The first LENGTH letters of the Fibonacci word (S1 = A, S2 = AC,
    S(k) = S(k-1) S(k-2): the fixed point of A -> AC, C -> A)."""
    prev, cur = b"A", b"AC"
    while len(cur) < length:
        prev, cur = cur, cur + prev
    return cur[:length]


def write_fasta(path, name, seq_codes):
    """seq_codes: bytes of 0..3 (or ASCII when already letters)."""
    f = sys.stdout.buffer if path == "-" else open(path, "wb")
    try:
        f.write(b">" + name.encode() + b"\n")
        for i in range(0, len(seq_codes), LINE):
            f.write(seq_codes[i:i + LINE])
            f.write(b"\n")
    finally:
        if f is not sys.stdout.buffer:
            f.close()


def main():
    ap = argparse.ArgumentParser(
        description="Synthetic FASTA genomes for the suffix-array benchmarks.",
        epilog="Same arguments, same bytes.")
    ap.add_argument("kind", choices=["all-a", "at-rich", "fib", "satellite", "tandem"])
    ap.add_argument("length", type=parse_length, help="bases (k/M/G suffix allowed)")
    ap.add_argument("out", help="output FASTA, or - for stdout")
    ap.add_argument("--seed", type=int, default=1, help="at-rich: seed (default 1)")
    ap.add_argument("--unit", type=int, default=10000,
                    help="tandem: repeat unit length (default 10000)")
    ap.add_argument("--at", type=float, default=0.80,
                    help="at-rich: A+T share of the background (default 0.80)")
    ap.add_argument("--array", type=parse_length, default=None,
                    help="satellite: array length (default LENGTH/5)")
    ap.add_argument("--hor", type=int, default=12,
                    help="satellite: monomers per higher-order repeat (default 12)")
    ap.add_argument("--div", type=float, default=0.001,
                    help="satellite: substitutions per base from one copy to the next (default 0.001)")
    ap.add_argument("--exact", type=float, default=0.3,
                    help="satellite: share of copies made exactly (default 0.3)")
    a = ap.parse_args()
    if a.length < 1:
        ap.error("length must be at least 1")
    if a.kind == "all-a":
        write_fasta(a.out, f"all_A length={a.length}", b"A" * a.length)
        print(f"all-a: {a.length} bases", file=sys.stderr)
        return
    if a.kind == "fib":
        write_fasta(a.out, f"fibonacci length={a.length}", fibonacci(a.length))
        print(f"fib: {a.length} bases", file=sys.stderr)
        return
    if a.kind == "tandem":
        rng = Rng(a.seed)
        unit = bytes(b"ACGT"[rng.below(4)] for _ in range(min(a.unit, a.length)))
        seq = (unit * (a.length // len(unit) + 1))[:a.length]
        write_fasta(a.out, f"tandem length={a.length} unit={len(unit)} seed={a.seed}", seq)
        print(f"tandem: {a.length} bases, unit {len(unit)}", file=sys.stderr)
        return
    if a.kind == "satellite":
        if a.hor < 1 or not 0.0 <= a.div < 1.0 or not 0.0 <= a.exact <= 1.0:
            ap.error("--hor must be at least 1, --div in [0, 1), --exact in [0, 1]")
        array = a.length // 5 if a.array is None else a.array
        codes, copies, unit = satellite(a.length, array, a.hor, a.div, a.exact, a.seed)
        seq = codes.translate(bytes.maketrans(b"\x00\x01\x02\x03", b"ACGT"))
        write_fasta(a.out, f"satellite length={a.length} array={array} hor={unit} div={a.div} "
                    f"exact={a.exact} seed={a.seed}", seq)
        print(f"satellite: {a.length} bases, array {min(array, a.length)} bases of {copies} "
              f"copies of a {unit}-base HOR", file=sys.stderr)
        return
    if not 0.0 < a.at < 1.0:
        ap.error("--at must be between 0 and 1")
    codes, share = at_rich(a.length, a.seed, a.at)
    seq = codes.translate(bytes.maketrans(b"\x00\x01\x02\x03", b"ACGT"))
    write_fasta(a.out, f"at_rich length={a.length} seed={a.seed} at={a.at}", seq)
    atf = (seq.count(b"A") + seq.count(b"T")) / len(seq)
    total = sum(share.values())
    parts = ", ".join(f"{k} {100 * v / total:.1f}%" for k, v in share.items())
    print(f"at-rich: {len(seq)} bases, A+T {100 * atf:.1f}%; {parts}", file=sys.stderr)


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:
        sys.exit(1)
