#!/usr/bin/env bash
# scripts/bench/peers.sh: benchmark fmalign side by side with its peers (bwa, bowtie 1)
# in one run, on the same machine, the same reference and the same reads.
#
# What it measures (everything with 2 threads unless THREADS says otherwise):
#   1. Index build of the reference, each under `/usr/bin/time -f '%e %M'`:
#        fmalign index -t T -p WORK/REF.fa.fmi WORK/REF.fa
#        bwa index -p WORK/bwa/REF WORK/REF.fa          (bwa has no thread option)
#        bowtie-build --threads T WORK/REF.fa WORK/bowtie/REF
#      Table: wall seconds, peak RSS (MB), peak RSS bytes per reference base,
#      index size on disk, and fmalign's time divided by each tool's time.
#   2. Error-free 100 bp single-end reads simulated by wgsim
#        wgsim -S 11 -N COUNT -1 100 -2 100 -e 0 -r 0 -R 0 WORK/REF.fa WORK/r1.fq /dev/null
#      (wgsim drops reads with > 5% N, so reads from the long N runs are absent.)
#   3. Exact mapping reporting every hit, each timed:
#        fmalign map -t T -v 0 -a WORK/REF.fa.fmi WORK/r1.fq -o WORK/fm.sam
#        bowtie -p T -v 0 -a --sam -x WORK/bowtie/REF WORK/r1.fq WORK/bt.sam
#      Reads/s = reads / wall seconds of the whole command (index load included).
#   4. Hit-set comparison: the set of (QNAME, RNAME, POS, strand) of every mapped
#      SAM record (secondary records included, flag 0x4 skipped; a trailing /1 or
#      /2 on QNAME is dropped) from both SAMs; counts of hits in both, only in
#      fmalign, only in bowtie, reads mapped by each, and the first 10
#      differences. A difference is reported, not an error: exit status stays 0.
#
# Reference: human GRCh37 chr20 (63 Mb) and 300,000 reads by default; with
# `--quick` (or QUICK=1) E. coli K-12 (4.6 Mb) and 30,000 reads, a smoke test.
#
# Usage: scripts/bench/peers.sh [--quick] [--work DIR]
# Environment:
#   FMALIGN       fmalign binary (default target/release/fmalign; built with
#                 `cargo build --release` when that default is missing)
#   FMALIGN_DATA  folder with the reference FASTA files (default ../shared/data)
#   WORK          work folder (default bench-out, git-ignored)
#   THREADS       threads for every tool (default 2)
#   READS         number of reads (default 300000, or 30000 with --quick)
#   QUICK=1       same as --quick
#   SKIP_FMALIGN=1  run the peers only (no fmalign build, index, map or compare)
# Relative paths are taken from the repository root (the script cd's there).
# Needs: bwa, bowtie, bowtie-build, wgsim (Debian package samtools), /usr/bin/time
# (package time), awk, comm, sort.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

QUICK=${QUICK:-0}
while [[ $# -gt 0 ]]; do
    case "$1" in
        --quick) QUICK=1 ;;
        --work) [[ $# -ge 2 ]] || die "--work needs a folder"; WORK=$2; shift ;;
        --work=*) WORK=${1#--work=} ;;
        -h|--help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$SELF"; exit 0 ;;
        *) die "unknown argument: $1 (try --help)" ;;
    esac
    shift
done

FMALIGN=${FMALIGN:-target/release/fmalign}
WORK=${WORK:-bench-out}
THREADS=${THREADS:-2}
SKIP_FMALIGN=${SKIP_FMALIGN:-0}
if [[ $QUICK == 1 ]]; then
    NAME=ecoli
    SRC=$DATA/ecoli_K12_MG1655.fa.gz
    READS=${READS:-30000}
else
    NAME=chr20
    SRC=$DATA/human_GRCh37_chr20.fa.gz
    READS=${READS:-300000}
fi

for t in bwa bowtie bowtie-build wgsim awk comm sort; do
    command -v "$t" >/dev/null || die "$t not found (apt-get install bwa bowtie samtools)"
done
[[ -x /usr/bin/time ]] || die "/usr/bin/time not found (apt-get install time)"
[[ -r $SRC ]] || die "reference $SRC not found (set FMALIGN_DATA)"

if [[ $SKIP_FMALIGN != 1 && ! -x $FMALIGN ]]; then
    if [[ $FMALIGN == target/release/fmalign ]]; then
        echo "== building fmalign (cargo build --release)"
        cargo build --release
    fi
    [[ -x $FMALIGN ]] || die "fmalign binary $FMALIGN not found"
fi

mkdir -p "$WORK/bwa" "$WORK/bowtie" "$WORK/logs"
REF=$WORK/$NAME.fa
export LC_ALL=C

# Copy everything printed from here on into WORK/report.txt.
exec > >(tee "$WORK/report.txt") 2>&1

# timed TAG CMD...: run CMD with its stdout+stderr in WORK/logs/TAG.log and its
# "wall_seconds peak_rss_kb" in WORK/logs/TAG.time; on failure show the log and stop.
timed() {
    local tag=$1; shift
    echo "-- $tag: $*"
    if ! /usr/bin/time -f '%e %M' -o "$WORK/logs/$tag.time" "$@" >"$WORK/logs/$tag.log" 2>&1; then
        echo "!! $tag failed; last lines of $WORK/logs/$tag.log:"
        tail -n 20 "$WORK/logs/$tag.log"
        cat "$WORK/logs/$tag.time" 2>/dev/null || true
        exit 1
    fi
}
# secs TAG / rss_kb TAG: the measurements of a timed run (last line of its .time file).
secs() { tail -n 1 "$WORK/logs/$1.time" | awk '{print $1}'; }
rss_kb() { tail -n 1 "$WORK/logs/$1.time" | awk '{print $2}'; }
# disk_bytes PATH...: total bytes on disk of the paths that exist (files or folders).
disk_bytes() {
    local f paths=()
    for f in "$@"; do [[ -e $f ]] && paths+=("$f"); done
    if [[ ${#paths[@]} -eq 0 ]]; then echo 0; else du -sbc "${paths[@]}" | tail -n 1 | cut -f1; fi
}

echo "== bench-peers: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n), $(nproc) cores, threads=$THREADS"
echo "   reference: $SRC  reads: $READS  work: $WORK"
if [[ $SKIP_FMALIGN != 1 ]]; then
    echo "   fmalign: $FMALIGN ($("$FMALIGN" --version 2>/dev/null || echo 'version unknown'))"
fi
echo "   bwa: $(bwa 2>&1 | awk '/^Version/ {print $2}')  bowtie: $(bowtie --version 2>/dev/null | awk 'NR==1 {print $NF}')  wgsim: $(wgsim 2>&1 | awk '/^Version/ {print $2}')"

echo "== decompressing $SRC -> $REF"
gzip -dc "$SRC" >"$REF"
GLEN=$(grep -v '^>' "$REF" | tr -d '\n\r' | wc -c)
echo "   $GLEN reference bases"

# ---------------------------------------------------------------- index build
echo "== index build"
TOOLS=()
if [[ $SKIP_FMALIGN != 1 ]]; then
    rm -f "$REF.fmi"
    timed fm-index "$FMALIGN" index -t "$THREADS" -p "$REF.fmi" "$REF"
    TOOLS+=(fm-index)
fi
rm -f "$WORK/bwa/$NAME".*
timed bwa-index bwa index -p "$WORK/bwa/$NAME" "$REF"
TOOLS+=(bwa-index)
rm -f "$WORK/bowtie/$NAME".*
timed bowtie-index bowtie-build --threads "$THREADS" "$REF" "$WORK/bowtie/$NAME"
TOOLS+=(bowtie-index)

fm_index_secs=""
[[ $SKIP_FMALIGN != 1 ]] && fm_index_secs=$(secs fm-index)
echo
printf '%-10s %9s %12s %13s %10s %14s\n' tool seconds 'peak RSS MB' 'RSS B/base' 'index MB' 'fmalign/tool'
for tag in "${TOOLS[@]}"; do
    case $tag in
        fm-index) tool=fmalign; disk=$(disk_bytes "$REF.fmi" "$REF".fmi.*) ;;
        bwa-index) tool=bwa; disk=$(disk_bytes "$WORK/bwa/$NAME".*) ;;
        bowtie-index) tool=bowtie; disk=$(disk_bytes "$WORK/bowtie/$NAME".*) ;;
    esac
    awk -v tool="$tool" -v s="$(secs "$tag")" -v kb="$(rss_kb "$tag")" -v glen="$GLEN" \
        -v disk="$disk" -v fm="$fm_index_secs" 'BEGIN {
            ratio = (fm == "" ? "-" : (s > 0 ? sprintf("%.2f", fm / s) : "inf"))
            printf "%-10s %9.2f %12.1f %13.2f %10.1f %14s\n", tool, s, kb / 1024, kb * 1024 / glen, disk / 1048576, ratio
        }'
done
echo

# ---------------------------------------------------------------- reads
echo "== simulating reads"
timed wgsim wgsim -S 11 -N "$READS" -1 100 -2 100 -e 0 -r 0 -R 0 "$REF" "$WORK/r1.fq" /dev/null
NREADS=$(( $(wc -l <"$WORK/r1.fq") / 4 ))
echo "   $NREADS reads in $WORK/r1.fq"

# ---------------------------------------------------------------- mapping
echo "== mapping (exact, all hits)"
MAPS=()
if [[ $SKIP_FMALIGN != 1 ]]; then
    rm -f "$WORK/fm.sam"
    timed fm-map "$FMALIGN" map -t "$THREADS" -v 0 -a "$REF.fmi" "$WORK/r1.fq" -o "$WORK/fm.sam"
    MAPS+=(fm-map)
fi
rm -f "$WORK/bt.sam"
timed bowtie-map bowtie -p "$THREADS" -v 0 -a --sam -x "$WORK/bowtie/$NAME" "$WORK/r1.fq" "$WORK/bt.sam"
MAPS+=(bowtie-map)

echo
printf '%-10s %9s %12s %12s\n' tool seconds 'peak RSS MB' 'reads/s'
for tag in "${MAPS[@]}"; do
    case $tag in fm-map) tool=fmalign ;; bowtie-map) tool=bowtie ;; esac
    awk -v tool="$tool" -v s="$(secs "$tag")" -v kb="$(rss_kb "$tag")" -v n="$NREADS" 'BEGIN {
        printf "%-10s %9.2f %12.1f %12.0f\n", tool, s, kb / 1024, (s > 0 ? n / s : 0)
    }'
done
if [[ $SKIP_FMALIGN != 1 ]]; then
    awk -v f="$(secs fm-map)" -v b="$(secs bowtie-map)" 'BEGIN {
        if (f > 0) printf "fmalign/bowtie reads/s ratio: %.2f (above 1: fmalign faster)\n", b / f
        else print "fmalign/bowtie reads/s ratio: inf"
    }'
fi
echo

# ---------------------------------------------------------------- hit sets
# hits SAM OUT: one line QNAME RNAME POS strand per mapped record, sorted, unique.
hits() {
    awk -F'\t' '/^@/ { next }
        NF >= 4 && int($2 / 4) % 2 == 0 {
            q = $1; sub(/\/[12]$/, "", q)
            print q "\t" $3 "\t" $4 "\t" (int($2 / 16) % 2 ? "-" : "+")
        }' "$1" | sort -u >"$2"
}
count() { wc -l <"$1" | tr -d ' '; }
mapped_reads() { cut -f1 "$1" | uniq | wc -l | tr -d ' '; }

echo "== hit sets (QNAME, RNAME, POS, strand; secondary included, unmapped skipped)"
hits "$WORK/bt.sam" "$WORK/bt.hits"
if [[ $SKIP_FMALIGN == 1 ]]; then
    echo "   bowtie: $(count "$WORK/bt.hits") hits, $(mapped_reads "$WORK/bt.hits") of $NREADS reads mapped"
    echo "   (SKIP_FMALIGN=1: no comparison)"
    exit 0
fi
hits "$WORK/fm.sam" "$WORK/fm.hits"
comm -12 "$WORK/fm.hits" "$WORK/bt.hits" >"$WORK/both.hits"
comm -23 "$WORK/fm.hits" "$WORK/bt.hits" >"$WORK/fm-only.hits"
comm -13 "$WORK/fm.hits" "$WORK/bt.hits" >"$WORK/bt-only.hits"
printf '   %-22s %10s\n' 'hits in both' "$(count "$WORK/both.hits")" \
    'hits only in fmalign' "$(count "$WORK/fm-only.hits")" \
    'hits only in bowtie' "$(count "$WORK/bt-only.hits")" \
    'reads mapped, fmalign' "$(mapped_reads "$WORK/fm.hits")" \
    'reads mapped, bowtie' "$(mapped_reads "$WORK/bt.hits")" \
    'reads simulated' "$NREADS"
if [[ -s $WORK/fm-only.hits || -s $WORK/bt-only.hits ]]; then
    echo "hit sets identical: no"
    echo "first 10 differences (< only in fmalign, > only in bowtie):"
    { sed 's/^/< /' "$WORK/fm-only.hits"; sed 's/^/> /' "$WORK/bt-only.hits"; } \
        | sort -t$'\t' -k1.3,1 -k2,2 -k3,3n -s >"$WORK/diff.hits"
    head -n 10 "$WORK/diff.hits"
    echo "(all differences: $WORK/diff.hits)"
else
    echo "hit sets identical: yes"
fi
