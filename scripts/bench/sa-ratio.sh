#!/usr/bin/env bash
# scripts/bench/sa-ratio.sh: the time target of issue 3 ("hybrid within 1.5x libsais'
# time on the CPU") measured so that one noisy run cannot decide it.
#
# For every FASTA given, REPEAT rounds; each round runs
#   fmalign index -t THREADS --sa libsais    and    --sa ALGO
# back to back, in alternating order (libsais first in odd rounds), and takes
# the suffix-array stage's seconds from fmalign's log line
# "[fmalign] suffix array X s". A round's ratio is ALGO / libsais of that
# round, so both runs of a ratio saw about the same machine. Prints every
# round, then per genome the median, lowest and highest ratio, and the
# median seconds of each algorithm. Both indexes of every round are compared
# byte for byte (cmp): exit status 1 when they differ.
#
# Usage: scripts/bench/sa-ratio.sh [GENOME.fa ...]
#   default genomes: bench-out/sa/genomes/pfal.fa (P. falciparum, the real
#   AT-rich genome; GENOMES=pfal scripts/bench/sa.sh makes it),
#   bench-out/sa/genomes/at-rich-20000000.fa (synthetic) and bench-out/chr20.fa
#   (made by scripts/bench/sa.sh and bench-peers.sh).
# Environment: FMALIGN (default target/release/fmalign), THREADS (2),
#   ALGO (hybrid), REPEAT (7), WORK (bench-out/sa-ratio).
# Needs: cmp, awk, sort.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

FMALIGN=${FMALIGN:-target/release/fmalign}
THREADS=${THREADS:-2}
ALGO=${ALGO:-hybrid}
REPEAT=${REPEAT:-7}
WORK=${WORK:-bench-out/sa-ratio}
[[ $# -gt 0 ]] || set -- bench-out/sa/genomes/pfal.fa bench-out/sa/genomes/at-rich-20000000.fa bench-out/chr20.fa
[[ -x $FMALIGN ]] || die "fmalign binary $FMALIGN not found (cargo build --release)"
[[ $REPEAT =~ ^[1-9][0-9]*$ ]] || die "REPEAT must be a positive whole number"
for fa in "$@"; do [[ -r $fa ]] || die "$fa not found"; done
mkdir -p "$WORK"
export LC_ALL=C

# sa_seconds ALGO FASTA: runs the index and prints the SA stage's seconds.
sa_seconds() {
    local log=$WORK/$1.log
    "$FMALIGN" index -t "$THREADS" --sa "$1" -p "$WORK/$1.fmi" "$2" 2>"$log" ||
        die "fmalign index --sa $1 $2 failed: $(tail -n 1 "$log")"
    sed -n 's/^\[fmalign\] suffix array \([0-9.]*\) s.*/\1/p' "$log" | tail -n 1
}

# median of the numbers on stdin
median() { sort -g | awk '{v[NR] = $1} END {printf "%.2f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

echo "== bench-sa-ratio: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n), $(nproc) cores," \
    "threads=$THREADS, $ALGO against libsais, $REPEAT rounds"
status=0
for fa in "$@"; do
    echo "-- $fa"
    : >"$WORK/rounds.tsv"
    for ((r = 1; r <= REPEAT; r++)); do
        if ((r % 2)); then
            lib=$(sa_seconds libsais "$fa"); alg=$(sa_seconds "$ALGO" "$fa")
        else
            alg=$(sa_seconds "$ALGO" "$fa"); lib=$(sa_seconds libsais "$fa")
        fi
        if ! cmp -s "$WORK/libsais.fmi" "$WORK/$ALGO.fmi"; then
            echo "   !! round $r: the $ALGO index differs from libsais'"
            status=1
        fi
        ratio=$(awk -v a="$alg" -v l="$lib" 'BEGIN {printf "%.2f", a / l}')
        printf '%s\t%s\t%s\n' "$lib" "$alg" "$ratio" >>"$WORK/rounds.tsv"
        echo "   round $r: libsais $lib s, $ALGO $alg s, ratio $ratio"
    done
    echo "   $ALGO / libsais over $REPEAT rounds: median $(cut -f3 "$WORK/rounds.tsv" | median)," \
        "lowest $(cut -f3 "$WORK/rounds.tsv" | sort -g | head -n 1)," \
        "highest $(cut -f3 "$WORK/rounds.tsv" | sort -g | tail -n 1);" \
        "median seconds: libsais $(cut -f1 "$WORK/rounds.tsv" | median), $ALGO $(cut -f2 "$WORK/rounds.tsv" | median)"
done
rm -f "$WORK"/*.fmi
exit $status
