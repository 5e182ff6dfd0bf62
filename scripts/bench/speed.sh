#!/usr/bin/env bash
# Issue 41's benchmark: fmalign's gapped modes beside the fastest modern
# short-read aligners, in one run, one command at a time, and the ratios the
# issue sets targets on.
#
# Reads simulated by wgsim from REF as issue 41 specifies (1% errors, 0.2%
# mutations of which a quarter indels): 150 bp pairs, 100 bp single reads,
# 250 bp pairs. Tools, each with its own index built beforehand (not timed):
# fmalign (default --local, and --end-to-end), strobealign, minimap2 -x sr,
# bwa mem, and bwa-mem2 when its index exists (BWAMEM2=1 builds it: 10 min
# and 10 GB for a human chromosome). Each run: wall seconds and peak RSS by
# /usr/bin/time, index load included, SAM to a file; accuracy of primary
# records by wgsim_eval.pl alneval -g 20 (correct / wrong at MAPQ >= 20).
# Then threads 1 against T on the 150 bp pairs (fmalign both modes,
# strobealign), and the real chrM pairs of ../shared/data: how many of bwa
# mem's confident placements (primary, MAPQ >= 20) each tool agrees with
# (same contig and strand, unclipped 5' end within 10 bases); bowtie2 there
# too, beside --end-to-end.
#
#   scripts/bench/speed.sh                       # chr20, 50k pairs, 2 threads
#   REF=x.fa N=20000 T=2 OUT=/tmp/x scripts/bench/speed.sh
#   TOOLS="fmalign-local strobealign" scripts/bench/speed.sh   # a subset
#
# Writes OUT/results.tsv (set, tool, threads, seconds, peak KB, reads,
# correct, wrong) and OUT/speed.svg (scripts/plot/speed.py), prints the
# tables and each fmalign run's ratio to strobealign and bwa mem.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
ROOT=$PWD
REF=${REF:-/tmp/bench-modes/chr20.fa}
N=${N:-50000}
T=${T:-2}
OUT=${OUT:-/tmp/bench-speed}
FMALIGN=$(readlink -f "${FMALIGN:-$ROOT/target/release/fmalign}")
PEERS=${PEERS:-$ROOT/../shared/peers/bin}
TOOLS=${TOOLS:-fmalign-local fmalign-end-to-end strobealign minimap2 bwa-mem bwa-mem2}
for tool in $TOOLS; do
    case $tool in
    fmalign-local | fmalign-end-to-end | strobealign | minimap2 | bwa-mem | bwa-mem2 | bowtie2) ;;
    *) die "unknown tool in TOOLS: $tool (fmalign-local fmalign-end-to-end strobealign minimap2 bwa-mem bwa-mem2 bowtie2)" ;;
    esac
done
mkdir -p "$OUT"
cd "$OUT"
[ -e ref.fa ] || ln -s "$(readlink -f "$REF")" ref.fa
# Indexes: reuse REF's own where they lie beside it.
base=$(readlink -f "$REF")
for ext in amb ann bwt pac sa 0123 bwt.2bit.64; do
    [ -e "ref.fa.$ext" ] || [ ! -e "$base.$ext" ] || ln -s "$base.$ext" "ref.fa.$ext"
done
[ -e ref.fmi ] || { [ -e "${base%.fa}.fmi" ] && ln -s "${base%.fa}.fmi" ref.fmi; } \
    || "$FMALIGN" index -q -t "$T" -p ref.fmi ref.fa
[ -e ref.mmi ] || { [ -e "${base%.fa}.mmi" ] && ln -s "${base%.fa}.mmi" ref.mmi; } \
    || minimap2 -x sr -d ref.mmi ref.fa 2>/dev/null
[ -e ref.fa.bwt ] || bwa index ref.fa 2>bwa-index.log
if [ "${BWAMEM2:-0}" = 1 ] && [ ! -e ref.fa.bwt.2bit.64 ]; then
    "$PEERS/bwa-mem2" index ref.fa >bwa-mem2-index.log 2>&1
fi
for r in 100 150 250; do
    [ -e "ref.fa.r$r.sti" ] || "$PEERS/strobealign" --create-index -t "$T" -r "$r" ref.fa >/dev/null 2>&1
done
sim="-e 0.01 -r 0.002 -R 0.25"
# shellcheck disable=SC2086
[ -e p150_1.fq ] || wgsim -S 41 -N "$N" -1 150 -2 150 $sim ref.fa p150_1.fq p150_2.fq >/dev/null
# shellcheck disable=SC2086
[ -e s100.fq ] || wgsim -S 42 -N "$N" -1 100 -2 100 $sim ref.fa s100.fq /dev/null >/dev/null
# shellcheck disable=SC2086
[ -e p250_1.fq ] || wgsim -S 43 -N "$((N / 2))" -1 250 -2 250 $sim ref.fa p250_1.fq p250_2.fq >/dev/null
cp -f "$DATA/human_chrM_NC_012920.fa" chrM.fa
[ -e chrM.fmi ] || "$FMALIGN" index -q -p chrM.fmi chrM.fa
[ -e chrM.fa.bwt ] || bwa index chrM.fa 2>/dev/null
[ -e chrM.mmi ] || minimap2 -x sr -d chrM.mmi chrM.fa 2>/dev/null
[ -e chrM.fa.r150.sti ] || "$PEERS/strobealign" --create-index -r 150 chrM.fa >/dev/null 2>&1
if [ "${BWAMEM2:-0}" = 1 ] && [ ! -e chrM.fa.bwt.2bit.64 ]; then
    "$PEERS/bwa-mem2" index chrM.fa >/dev/null 2>&1
fi
gzip -dc "$DATA/human_chrM_ERR2438055_R1.fq.gz" >m1.fq
gzip -dc "$DATA/human_chrM_ERR2438055_R2.fq.gz" >m2.fq

# cmd TOOL THREADS IDX STROBE_R READS...: the command line of TOOL.
cmd() {
    local tool=$1 t=$2 idx=$3 r=$4
    shift 4
    case $tool in
    fmalign-local) echo "$FMALIGN map -t $t $idx.fmi $*" ;;
    fmalign-end-to-end) echo "$FMALIGN map -t $t --end-to-end $idx.fmi $*" ;;
    strobealign) echo "$PEERS/strobealign --use-index -t $t -r $r $idx.fa $*" ;;
    minimap2) echo "minimap2 -ax sr -t $t $idx.mmi $*" ;;
    bwa-mem) echo "bwa mem -t $t $idx.fa $*" ;;
    bwa-mem2) echo "$PEERS/bwa-mem2 mem -t $t $idx.fa $*" ;;
    bowtie2) echo "bowtie2 -p $t -x $idx -1 $1 -2 $2" ;;
    esac
}
have() { # whether TOOL can run here
    case $1 in
    bwa-mem2) [ -e ref.fa.bwt.2bit.64 ] ;;
    *) true ;;
    esac
}
: >results.tsv
# run SET TOOL THREADS IDX R READS...: one timed run, accuracy appended.
run() {
    local set=$1 tool=$2 t=$3 idx=$4 r=$5
    shift 5
    local name="$set.$tool.t$t"
    # shellcheck disable=SC2046
    /usr/bin/time -f "%e %M" -o "$name.time" $(cmd "$tool" "$t" "$idx" "$r" "$@") >"$name.sam" 2>"$name.err"
    local reads correct wrong
    if [ "$set" = chrM ]; then
        reads=- correct=- wrong=-
    else
        read -r reads correct wrong < <(samtools view -F 0x900 "$name.sam" | wgsim_eval.pl alneval -g 20 2>/dev/null |
            awk '$1 ~ /x$/ && $3 == "/" { q = substr($1, 1, length($1) - 1) + 0; n += $4; if (q >= 2) { c += $4 - $2; w += $2 } }
                 END { print n, c, w }')
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$set" "$tool" "$t" "$(cat "$name.time" | tr ' ' '\t')" \
        "$reads" "$correct	$wrong" >>results.tsv
    tail -1 results.tsv
}
for tool in $TOOLS; do
    have "$tool" || continue
    run p150 "$tool" "$T" ref 150 p150_1.fq p150_2.fq
    run s100 "$tool" "$T" ref 100 s100.fq
    run p250 "$tool" "$T" ref 250 p250_1.fq p250_2.fq
    run chrM "$tool" "$T" chrM 150 m1.fq m2.fq
done
# bowtie2 (end to end) on the real pairs only, beside fmalign --end-to-end.
if command -v bowtie2 >/dev/null; then
    [ -e chrM.1.bt2 ] || bowtie2-build chrM.fa chrM >/dev/null 2>&1
    run chrM bowtie2 "$T" chrM 150 m1.fq m2.fq
fi
if [ "$T" != 1 ]; then
    for tool in fmalign-local fmalign-end-to-end strobealign; do
        case " $TOOLS " in *" $tool "*) run p150 "$tool" 1 ref 150 p150_1.fq p150_2.fq ;; esac
    done
fi

python3 - "$T" <<'EOF'
import re, sys
T = sys.argv[1]
rows = [l.rstrip("\n").split("\t") for l in open("results.tsv")]
res = {(r[0], r[1], r[2]): r for r in rows}
print()
for s, what in [("p150", "150 bp pairs"), ("s100", "100 bp single reads"), ("p250", "250 bp pairs")]:
    print(f"{what}, -t {T}: seconds, peak MB, correct / wrong at MAPQ >= 20 of the reads; fmalign's time / strobealign's, / bwa mem's")
    strobe = res.get((s, "strobealign", T))
    bwa = res.get((s, "bwa-mem", T))
    for r in rows:
        if r[0] != s or r[2] != T:
            continue
        ratio = ""
        if r[1].startswith("fmalign"):
            ratio = "  " + "  ".join(
                f"{float(r[3]) / float(p[3]):.2f}x {p[1]}" for p in (strobe, bwa) if p)
        print(f"  {r[1]:20} {float(r[3]):7.2f} s {int(r[4]) / 1024:7.0f} MB  {int(r[6]):>7,} / {int(r[7]):<4,} of {int(r[5]):,}{ratio}")
    print()
one = [r for r in rows if r[0] == "p150" and r[2] == "1"]
if one:
    print(f"Threads: 150 bp pairs, seconds at -t 1 and -t {T}, speed-up")
    for r in one:
        m = res.get(("p150", r[1], T))
        if m:
            print(f"  {r[1]:20} {float(r[3]):7.2f} s  {float(m[3]):7.2f} s  {float(r[3]) / float(m[3]):.2f}x")
    print()

# Real pairs: agreement with bwa mem's confident placements.
def primaries(path):
    out = {}
    for l in open(path):
        if l[0] == "@":
            continue
        t = l.split("\t")
        f = int(t[1])
        if f & 0x904:
            continue
        mate = 1 if f & 0x40 else 2 if f & 0x80 else 0
        lead = re.match(r"^(\d+)[SH]", t[5])
        trail = re.search(r"(\d+)[SH]$", t[5])
        span = sum(int(n) for n, o in re.findall(r"(\d+)([MD=XN])", t[5]))
        pos = int(t[3])
        # The unclipped 5' end.
        five = pos + span - 1 + (int(trail.group(1)) if trail else 0) if f & 16 else pos - (int(lead.group(1)) if lead else 0)
        out[(t[0], mate)] = (t[2], f & 16, five, int(t[4]))
    return out
ref = f"chrM.bwa-mem.t{T}.sam"
try:
    bwa = primaries(ref)
except FileNotFoundError:
    sys.exit(0)
confident = {k: v for k, v in bwa.items() if v[3] >= 20}
print(f"Real chrM pairs (ERR2438055): of bwa mem's {len(confident):,} confident placements (primary, MAPQ >= 20), the share each tool agrees with")
for r in rows:
    if r[0] != "chrM" or r[1] == "bwa-mem":
        continue
    got = primaries(f"chrM.{r[1]}.t{r[2]}.sam")
    agree = sum(1 for k, v in confident.items()
                if k in got and got[k][0] == v[0] and got[k][1] == v[1] and abs(got[k][2] - v[2]) <= 10)
    print(f"  {r[1]:20} {agree:,} ({100 * agree / len(confident):.2f}%), {float(r[3]):.2f} s")
EOF
python3 "$ROOT/scripts/plot/speed.py" results.tsv speed.svg "$T" || true
echo "results: $OUT/results.tsv, plot: $OUT/speed.svg"
