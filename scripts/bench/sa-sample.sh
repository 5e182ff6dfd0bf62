#!/usr/bin/env bash
# Chooses the default --sa-sample: index size against locate speed on chr20.
# For each rate K: build the index, then time `fmalign map -a` on 300k 100 bp
# reads (about one hit per read) and on 100k 25 bp reads (many hits, locate
# dominates). Usage: scripts/bench/sa-sample.sh [WORK_DIR]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
WORK=${1:-bench-out}
FMALIGN=${FMALIGN:-target/release/fmalign}
THREADS=${THREADS:-2}
mkdir -p "$WORK"
[ -x "$FMALIGN" ] || cargo build --release
[ -s "$WORK/chr20.fa" ] || zcat "$DATA/human_GRCh37_chr20.fa.gz" > "$WORK/chr20.fa"
[ -s "$WORK/r1.fq" ] || wgsim -S 11 -N 300000 -1 100 -2 100 -e 0 -r 0 -R 0 "$WORK/chr20.fa" "$WORK/r1.fq" /dev/null > /dev/null 2>&1
[ -s "$WORK/short25.fq" ] || wgsim -S 12 -N 100000 -1 25 -2 25 -e 0 -r 0 -R 0 "$WORK/chr20.fa" "$WORK/short25.fq" /dev/null > /dev/null 2>&1
printf '%-6s %12s %10s %14s %14s %12s\n' K index_MB ssa_MB map100_s map25_s hits25
for K in 4 8 16 32 64 128; do
  idx="$WORK/chr20.k$K.fmi"
  "$FMALIGN" index -q -t "$THREADS" --sa-sample "$K" -p "$idx" "$WORK/chr20.fa"
  size=$(stat -c %s "$idx")
  ssa=$("$FMALIGN" info "$idx" | awk '$1=="section" && $2=="ssa" {print $3}')
  t100=$( { /usr/bin/time -f %e "$FMALIGN" map -q -t "$THREADS" -v 0 -a "$idx" "$WORK/r1.fq" -o /dev/null; } 2>&1 | tail -1)
  t25=$( { /usr/bin/time -f %e "$FMALIGN" map -q -t "$THREADS" -v 0 -a "$idx" "$WORK/short25.fq" -o "$WORK/k.sam"; } 2>&1 | tail -1)
  hits=$(grep -vc '^@' "$WORK/k.sam")
  printf '%-6s %12.1f %10.1f %14s %14s %12s\n' "$K" "$(echo "$size/1048576" | bc -l)" "$(echo "$ssa/1048576" | bc -l)" "$t100" "$t25" "$hits"
  rm -f "$idx" "$WORK/k.sam"
done
