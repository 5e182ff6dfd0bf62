#!/usr/bin/env bash
# scripts/bench/stream.sh: `fmalign map` memory against input size: 1, 3 and 10 million
# 100 bp reads streamed through stdin (the 200k wgsim reads of
# bench-mismatch.sh, repeated; names repeat, which map does not mind), peak
# RSS by /usr/bin/time, SAM to /dev/null:
#
#   for i in 1..K; do cat r1.fq; done | /usr/bin/time -f '%e %M' fmalign map -t T INDEX - >/dev/null
#
# Flat memory = the same peak RSS for every input size (the index, one batch
# in flight per thread, the output buffer).
# Usage: scripts/bench/stream.sh     Environment: FMALIGN, INDEX (default
# bench-out/mm/chr20.fmi), READS (default bench-out/mm/r1.fq, 200,000 reads),
# THREADS (2), COUNTS (millions of reads, default "1 3 10"), ARGS (extra map options).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
FMALIGN=${FMALIGN:-target/release/fmalign}
INDEX=${INDEX:-bench-out/mm/chr20.fmi}
READS=${READS:-bench-out/mm/r1.fq}
THREADS=${THREADS:-2}
per=$(( $(wc -l <"$READS") / 4 ))
printf 'reads\tinput_GB\twall_s\tpeak_rss_MB\n'
for m in ${COUNTS:-1 3 10}; do
    k=$(( m * 1000000 / per ))
    bytes=$(( $(stat -c %s "$READS") * k ))
    t=$(mktemp)
    for ((i = 0; i < k; i++)); do cat "$READS"; done |
        /usr/bin/time -f '%e %M' -o "$t" "$FMALIGN" map -q -t "$THREADS" ${ARGS:-} "$INDEX" - >/dev/null
    read -r wall rss <"$t"
    rm -f "$t"
    printf '%d\t%.2f\t%s\t%d\n' $((k * per)) "$(echo "$bytes / 1000000000" | bc -l)" "$wall" $((rss / 1024))
done
