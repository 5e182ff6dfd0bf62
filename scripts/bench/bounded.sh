#!/usr/bin/env bash
# The index built in parts (issue 20) against the whole-text build, in one
# run: for a reference (default: chr20), the whole-text build, then builds
# limited to B bytes per base for each B in LIMITS (default "4 2 1.6"), each
# traced for resident memory (scripts/bench/rss-trace.py). Prints time, peak RSS,
# ratios to the whole-text build, and whether the files are identical.
# Traces go to WORK/trace-*.tsv; plot them with scripts/plot/rss.py.
# Usage: scripts/bench/bounded.sh [FASTA [WORK]]   (LIMITS="4 2 1.6" THREADS=2)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
WORK=${2:-bench-out}
FMALIGN=${FMALIGN:-target/release/fmalign}
THREADS=${THREADS:-2}
LIMITS=${LIMITS:-"4 2 1.6"}
mkdir -p "$WORK"
[ -x "$FMALIGN" ] || cargo build --release
FASTA=${1:-}
if [ -z "$FASTA" ]; then
  FASTA="$WORK/chr20.fa"
  [ -s "$FASTA" ] || zcat "$DATA/human_GRCh37_chr20.fa.gz" > "$FASTA"
fi
scripts/bench/rss-trace.py "$WORK/trace-whole.tsv" "$FMALIGN" index -t "$THREADS" -p "$WORK/whole.fmi" "$FASTA" 2> "$WORK/whole.log"
n=$(awk '/unambiguous bases/ {for (i = 1; i < NF; i++) if ($(i+1) == "unambiguous") print $i}' "$WORK/whole.log")
read -r whole_s whole_peak < <(tail -1 "$WORK/whole.log")
printf '%-10s %10s %9s %10s %9s %9s %s\n' limit limit_MB time_s peak_MB B/base time_x same
printf '%-10s %10s %9.2f %10.1f %9.2f %9s %s\n' whole - "$whole_s" "$(echo "$whole_peak/1000000" | bc -l)" "$(echo "$whole_peak/$n" | bc -l)" 1.00 -
for b in $LIMITS; do
  limit=$(echo "$b*$n/1" | bc)
  rm -f "$WORK/parts.fmi"
  if ! scripts/bench/rss-trace.py "$WORK/trace-$b.tsv" "$FMALIGN" index -q -t "$THREADS" --max-memory "$limit" -p "$WORK/parts.fmi" "$FASTA" > "$WORK/parts-$b.log" 2>&1; then
    printf '%-10s %10.1f   refused: %s\n' "${b}B/base" "$(echo "$limit/1000000" | bc -l)" "$(grep -m1 'error' "$WORK/parts-$b.log")"
    continue
  fi
  read -r s peak < <(tail -1 "$WORK/parts-$b.log")
  same=$(cmp -s "$WORK/whole.fmi" "$WORK/parts.fmi" && echo identical || echo DIFFERENT)
  printf '%-10s %10.1f %9.2f %10.1f %9.2f %9.2f %s\n' "${b}B/base" "$(echo "$limit/1000000" | bc -l)" "$s" "$(echo "$peak/1000000" | bc -l)" "$(echo "$peak/$n" | bc -l)" "$(echo "$s/$whole_s" | bc -l)" "$same"
done
rm -f "$WORK/parts.fmi"
