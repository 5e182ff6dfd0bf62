#!/usr/bin/env bash
# Gapped alignment beside its peers, in one run: fmalign --local beside
# bwa mem, fmalign --end-to-end beside bowtie2 (its default mode), on wgsim
# pairs (150 bp, wgsim's default errors, mutations and indels) from REF, and
# on the real chrM pairs of ../shared/data. Accuracy by wgsim_eval.pl
# alneval (ships with samtools): reads aligned, correct and wrong at
# MAPQ >= 20 and overall; time and peak RSS by /usr/bin/time; chrM mapped
# and properly paired by samtools flagstat. Prints a table and the ratios
# the issue sets targets on. Index builds are not timed.
#
#   scripts/bench/gapped.sh                      # chr20, 100k pairs, 2 threads
#   REF=x.fa N=20000 T=4 scripts/bench/gapped.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
REF=${REF:-/tmp/chr20.fa}
N=${N:-100000}
T=${T:-2}
OUT=${OUT:-/tmp/bench-gapped}
FMALIGN=${FMALIGN:-$PWD/target/release/fmalign}
mkdir -p "$OUT"
cd "$OUT"
[ -e ref.fa ] || ln -s "$(readlink -f "$REF")" ref.fa
[ -e ref.fmi ] || "$FMALIGN" index -q -t "$T" -p ref.fmi ref.fa
[ -e ref.fa.bwt ] || bwa index ref.fa 2> bwa-index.log
[ -e ref.1.bt2 ] || bowtie2-build --threads "$T" ref.fa ref > bt2-index.log 2>&1
[ -e r1.fq ] || wgsim -S 11 -N "$N" -1 150 -2 150 ref.fa r1.fq r2.fq > wgsim.log
cp "$DATA/human_chrM_NC_012920.fa" chrM.fa
[ -e chrM.fmi ] || "$FMALIGN" index -q -p chrM.fmi chrM.fa
[ -e chrM.fa.bwt ] || bwa index chrM.fa 2> /dev/null
[ -e chrM.1.bt2 ] || bowtie2-build chrM.fa chrM > /dev/null 2>&1
M1=$DATA/human_chrM_ERR2438055_R1.fq.gz
M2=$DATA/human_chrM_ERR2438055_R2.fq.gz

# run NAME CMD...: SAM in NAME.sam, "seconds peak_kb" in NAME.time.
run() {
    local name=$1
    shift
    /usr/bin/time -f "%e %M" -o "$name.time" "$@" > "$name.sam" 2> "$name.err"
}
run bwa-mem bwa mem -t "$T" ref.fa r1.fq r2.fq
run bowtie2 bowtie2 -p "$T" -x ref -1 r1.fq -2 r2.fq
run fmalign-local "$FMALIGN" map -t "$T" --local ref.fmi r1.fq r2.fq
run fmalign-end-to-end "$FMALIGN" map -t "$T" --end-to-end ref.fmi r1.fq r2.fq
run chrM-bwa-mem bwa mem -t "$T" chrM.fa "$M1" "$M2"
run chrM-bowtie2 bowtie2 -p "$T" -x chrM -1 "$M1" -2 "$M2"
run chrM-fmalign-local "$FMALIGN" map -t "$T" --local chrM.fmi "$M1" "$M2"
run chrM-fmalign-end-to-end "$FMALIGN" map -t "$T" --end-to-end chrM.fmi "$M1" "$M2"
for t in bwa-mem bowtie2 fmalign-local fmalign-end-to-end; do
    wgsim_eval.pl alneval "$t.sam" > "$t.eval" 2> /dev/null
    samtools flagstat "chrM-$t.sam" > "chrM-$t.flagstat"
done

python3 - "$N" << 'EOF'
import re, sys
pairs = int(sys.argv[1])
def evals(name):
    # alneval: "Qx  wrong / count  cumulative  rate", Q = MAPQ / 10.
    rows = []
    for line in open(f"{name}.eval"):
        f = line.split()
        if len(f) >= 5 and f[0].endswith("x") and f[2] == "/":
            rows.append((int(f[0][:-1]), int(f[1]), int(f[3])))
    w20 = sum(w for q, w, c in rows if q >= 2)
    c20 = sum(c for q, w, c in rows if q >= 2)
    wall = sum(w for q, w, c in rows)
    call = sum(c for q, w, c in rows)
    return c20 - w20, w20, call - wall, wall, call
def timing(name):
    s, kb = open(f"{name}.time").read().split()[-2:]
    return float(s), int(kb) / 1024
def flagstat(name):
    t = open(f"chrM-{name}.flagstat").read()
    prim = int(re.search(r"(\d+) \+ \d+ primary\n", t).group(1))
    mapped = int(re.search(r"(\d+) \+ \d+ primary mapped", t).group(1))
    proper = int(re.search(r"(\d+) \+ \d+ properly paired", t).group(1))
    return 100 * mapped / prim, 100 * proper / prim
reads = 2 * pairs
print(f"wgsim pairs: {pairs} (150 bp), {reads} reads")
print("tool\tcorrect_q20\twrong_q20\tcorrect_all\twrong_all\taligned\tseconds\tpeak_MiB\tchrM_mapped%\tchrM_proper%")
res = {}
for t in ["bwa-mem", "fmalign-local", "bowtie2", "fmalign-end-to-end"]:
    c20, w20, call, wall, aligned = evals(t)
    s, mib = timing(t)
    m, p = flagstat(t)
    res[t] = (c20, w20, s)
    print(f"{t}\t{c20}\t{w20}\t{call}\t{wall}\t{aligned}\t{s:.2f}\t{mib:.0f}\t{m:.2f}\t{p:.2f}")
def ratio(a, b):
    (ca, wa, sa), (cb, wb, sb) = res[a], res[b]
    print(f"{a} / {b}: correct at MAPQ>=20 {ca - cb:+d} ({ca / cb:.4f}x), wrong {wa} vs {wb}, time {sa / sb:.2f}x")
ratio("fmalign-local", "bwa-mem")
ratio("fmalign-end-to-end", "bowtie2")
EOF
