#!/usr/bin/env bash
# scripts/bench/modes.sh OLD NEW: the mapping time of two fmalign binaries in every
# mode, side by side in one run (each case run by OLD then NEW, twice; the
# best of the two runs is kept), with NEW/OLD ratios; SAM and BAM. For
# changes that must not cost speed. Reads: wgsim from chr20 (100 bp single
# reads, 150 bp pairs), index load included, SAM/BAM to a file.
#
#   scripts/bench/modes.sh /tmp/old/fmalign target/release/fmalign
#   N=200000 T=2 WORK=/tmp/bench-modes scripts/bench/modes.sh OLD NEW
set -euo pipefail
OLD=$(readlink -f "$1")
NEW=$(readlink -f "$2")
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
WORK=${WORK:-/tmp/bench-modes}
N=${N:-100000}
T=${T:-2}
mkdir -p "$WORK"
cd "$WORK"
[ -e chr20.fa ] || gzip -dc "$DATA/human_GRCh37_chr20.fa.gz" >chr20.fa
[ -e chr20.fmi ] || "$NEW" index -q -t "$T" -p chr20.fmi chr20.fa
[ -e s1.fq ] || wgsim -S 31 -N "$N" -1 100 -2 100 chr20.fa s1.fq /dev/null >/dev/null 2>&1
[ -e p1.fq ] || wgsim -S 32 -N $((N / 2)) -1 150 -2 150 chr20.fa p1.fq p2.fq >/dev/null 2>&1
secs() { # binary args...: best wall seconds of two runs
    local best=999999 t
    for _ in 1 2; do
        /usr/bin/time -f %e -o "$WORK/time" "$@" >/dev/null 2>&1
        t=$(tail -n 1 "$WORK/time")
        best=$(echo "$t $best" | awk '{print ($1 < $2) ? $1 : $2}')
    done
    echo "$best"
}
printf '%-34s %8s %8s %6s\n' case old_s new_s ratio
for reads in "s1.fq" "p1.fq p2.fq"; do
    for mode in "" "--end-to-end" "-v 0" "-v 2"; do
        for fmt in sam bam; do
            # shellcheck disable=SC2086
            o=$(secs "$OLD" map -q -t "$T" $mode -o "$WORK/out.$fmt" chr20.fmi $reads)
            # shellcheck disable=SC2086
            n=$(secs "$NEW" map -q -t "$T" $mode -o "$WORK/out.$fmt" chr20.fmi $reads)
            printf '%-34s %8s %8s %6.2f\n' "${reads%% *} ${mode:-default} $fmt" "$o" "$n" \
                "$(echo "$n / $o" | bc -l)"
        done
    done
done
