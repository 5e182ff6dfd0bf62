#!/usr/bin/env bash
# scripts/bench/mismatch.sh: fmalign map -v 2 beside bowtie 1 (-v 2) and bwa aln, in
# one run, on the same reads:
#
#   1. Reads: wgsim, single end, 100 bp, 1% sequencing error, no mutations:
#        wgsim -S 11 -N READS -1 100 -2 100 -e 0.01 -r 0 -R 0 REF r1.fq /dev/null
#   2. Time, best alignment per read (the default use):
#        fmalign map -t T -v 2 INDEX r1.fq           (always best-first)
#        bowtie -p T -v 2 --best --sam IDX r1.fq
#        bwa aln -t T IDX r1.fq | bwa samse            (bwa's own error model)
#      and the ratio fmalign / bowtie.
#   3. Hit sets, all alignments: fmalign map -v 2 -a and bowtie -v 2 -a: hits
#      (read, contig, position, strand) in both, only in fmalign, only in
#      bowtie.
#   4. Accuracy against wgsim's truth: wgsim_eval.pl alneval on the three
#      best-alignment SAMs (mapped reads, wrong ones, by MAPQ threshold).
#
# Indexes are built when missing (fmalign index, bowtie-build, bwa index) and
# their build times are not part of this benchmark.
#
# Usage: scripts/bench/mismatch.sh [--quick]
# Environment: FMALIGN (default target/release/fmalign), FMALIGN_DATA
# (default ../shared/data), WORK (default bench-out/mismatch), THREADS (2),
# READS (200000; 20000 with --quick, which also uses E. coli).
# Needs: bwa, bowtie, bowtie-build, wgsim and wgsim_eval.pl (Debian package
# samtools), samtools, /usr/bin/time.
set -euo pipefail

QUICK=${QUICK:-0}
[[ ${1:-} == --quick ]] && QUICK=1
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

FMALIGN=${FMALIGN:-target/release/fmalign}
WORK=${WORK:-bench-out/mismatch}
THREADS=${THREADS:-2}
if [[ $QUICK == 1 ]]; then
    NAME=ecoli SRC=$DATA/ecoli_K12_MG1655.fa.gz READS=${READS:-20000}
else
    NAME=chr20 SRC=$DATA/human_GRCh37_chr20.fa.gz READS=${READS:-200000}
fi
for t in bwa bowtie bowtie-build wgsim wgsim_eval.pl samtools perl; do
    command -v "$t" >/dev/null || die "$t not found (apt-get install bwa bowtie samtools)"
done
[[ -x /usr/bin/time ]] || die "/usr/bin/time not found"
[[ -x $FMALIGN ]] || cargo build --release
mkdir -p "$WORK/logs"
REF=$WORK/$NAME.fa
[[ -s $REF ]] || gzip -dc "$SRC" >"$REF"

timed() { # name command...: wall seconds and peak RSS to logs/name.time
    local name=$1
    shift
    /usr/bin/time -f "%e %M" -o "$WORK/logs/$name.time" "$@"
}
secs() { cut -d' ' -f1 "$WORK/logs/$1.time"; }
rss_mb() { awk '{printf "%.0f", $2 / 1024}' "$WORK/logs/$1.time"; }

[[ -s $WORK/$NAME.fa.fmi ]] || timed fm-index "$FMALIGN" index -q -t "$THREADS" "$REF"
[[ -s $WORK/$NAME.1.ebwt ]] || timed bt-index bowtie-build --threads "$THREADS" -q "$REF" "$WORK/$NAME"
[[ -s $WORK/$NAME.bwt ]] || timed bwa-index bwa index -p "$WORK/$NAME" "$REF" 2>"$WORK/logs/bwa-index.log"

R1=$WORK/r1.fq
[[ -s $R1 ]] || wgsim -S 11 -N "$READS" -1 100 -2 100 -e 0.01 -r 0 -R 0 "$REF" "$R1" /dev/null >/dev/null 2>&1

timed fm-best "$FMALIGN" map -q -t "$THREADS" -v 2 -o "$WORK/fm.sam" "$WORK/$NAME.fa.fmi" "$R1"
timed bt-best bowtie -p "$THREADS" -v 2 --best --sam "$WORK/$NAME" "$R1" "$WORK/bt.sam" 2>"$WORK/logs/bt-best.log"
timed bwa-aln bwa aln -t "$THREADS" "$WORK/$NAME" "$R1" -f "$WORK/bwa.sai" 2>"$WORK/logs/bwa-aln.log"
timed bwa-samse bwa samse -f "$WORK/bwa.sam" "$WORK/$NAME" "$WORK/bwa.sai" "$R1" 2>"$WORK/logs/bwa-samse.log"
timed fm-all "$FMALIGN" map -q -t "$THREADS" -v 2 -a -o "$WORK/fm-all.sam" "$WORK/$NAME.fa.fmi" "$R1"
timed bt-all bowtie -p "$THREADS" -v 2 -a --sam "$WORK/$NAME" "$R1" "$WORK/bt-all.sam" 2>"$WORK/logs/bt-all.log"

hits() { # SAM → sorted unique "read contig pos strand"
    samtools view -F 4 "$1" | perl -ane '$s = ($F[1] & 16) ? "-" : "+"; $F[0] =~ s/\/[12]$//; print "$F[0]\t$F[2]\t$F[3]\t$s\n"' | LC_ALL=C sort -u
}
hits "$WORK/fm-all.sam" >"$WORK/fm-all.hits"
hits "$WORK/bt-all.sam" >"$WORK/bt-all.hits"
both=$(LC_ALL=C comm -12 "$WORK/fm-all.hits" "$WORK/bt-all.hits" | wc -l)
only_fm=$(LC_ALL=C comm -23 "$WORK/fm-all.hits" "$WORK/bt-all.hits" | wc -l)
only_bt=$(LC_ALL=C comm -13 "$WORK/fm-all.hits" "$WORK/bt-all.hits" | wc -l)
mapped() { samtools view -c -F 0x904 "$1"; }

{
    echo "# bench-mismatch: $NAME, $READS wgsim reads (100 bp, 1% error), $THREADS threads, $(date -u +%Y-%m-%d)"
    echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GB", $2 / 1048576}' /proc/meminfo), $(uname -srm)"
    echo
    echo "| run | wall s | peak RSS MB | mapped records (not secondary) |"
    echo "|---|---:|---:|---:|"
    echo "| fmalign map -v 2 | $(secs fm-best) | $(rss_mb fm-best) | $(mapped "$WORK/fm.sam") |"
    echo "| bowtie -v 2 --best | $(secs bt-best) | $(rss_mb bt-best) | $(mapped "$WORK/bt.sam") |"
    echo "| bwa aln + samse | $(awk -v a="$(secs bwa-aln)" -v b="$(secs bwa-samse)" 'BEGIN {print a + b}') | $(rss_mb bwa-aln) | $(mapped "$WORK/bwa.sam") |"
    echo "| fmalign map -v 2 -a | $(secs fm-all) | $(rss_mb fm-all) | $(mapped "$WORK/fm-all.sam") |"
    echo "| bowtie -v 2 -a | $(secs bt-all) | $(rss_mb bt-all) | $(mapped "$WORK/bt-all.sam") |"
    echo
    awk -v f="$(secs fm-best)" -v b="$(secs bt-best)" -v fa="$(secs fm-all)" -v ba="$(secs bt-all)" \
        'BEGIN {printf "time ratio fmalign/bowtie: best %.2fx, -a %.2fx\n", f / b, fa / ba}'
    echo "hit sets (-v 2 -a): both $both, only fmalign $only_fm, only bowtie $only_bt"
    echo
    echo "accuracy (wgsim_eval.pl alneval; columns: MAPQ threshold, mapped, wrong, cumulative):"
    for s in fm bt bwa; do
        echo "## $s"
        wgsim_eval.pl alneval "$WORK/$s.sam" 2>/dev/null
    done
} | tee "$WORK/report.txt"
