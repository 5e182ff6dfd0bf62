#!/usr/bin/env bash
# scripts/bench/gapped-peers.sh [FMALIGN [OLD]]: fmalign's gapped modes (the default
# --local and --end-to-end; OLD's too when given) beside strobealign, bwa mem
# and minimap2 -x sr, in one run on the same reads: bench-modes.sh's wgsim
# pairs of 150 bases from chr20 (WORK/p1.fq, p2.fq), T threads, index load
# included, SAM to a file. Prints each tool's wall seconds, its time over
# strobealign's, and correct / wrong at MAPQ >= 20 (wgsim_eval.pl alneval
# -g 20 on the primary records). Indexes missing from WORK are built first,
# untimed (strobealign's WORK/chr20.fa.r150.sti, bwa's WORK/chr20.fa.*,
# minimap2's WORK/chr20.mmi).
#
#   scripts/bench/gapped-peers.sh target/release/fmalign /tmp/old/fmalign
#   WORK=/tmp/bench-modes T=2 PEERS=../shared/peers/bin scripts/bench/gapped-peers.sh
set -euo pipefail
FM=$(readlink -f "${1:-target/release/fmalign}")
OLD=${2:+$(readlink -f "$2")}
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
PEERS=$(readlink -f "${PEERS:-../shared/peers/bin}")
WORK=${WORK:-/tmp/bench-modes}
N=${N:-100000}
T=${T:-2}
mkdir -p "$WORK"
cd "$WORK"
[ -e chr20.fa ] || gzip -dc "$DATA/human_GRCh37_chr20.fa.gz" >chr20.fa
[ -e chr20.fmi ] || "$FM" index -q -t "$T" -p chr20.fmi chr20.fa
[ -e p1.fq ] || wgsim -S 32 -N $((N / 2)) -1 150 -2 150 chr20.fa p1.fq p2.fq >/dev/null 2>&1
[ -e chr20.fa.r150.sti ] || "$PEERS/strobealign" --create-index -t "$T" -r 150 chr20.fa >/dev/null 2>&1
[ -e chr20.fa.bwt ] || bwa index chr20.fa >/dev/null 2>&1
[ -e chr20.mmi ] || minimap2 -x sr -d chr20.mmi chr20.fa >/dev/null 2>&1
cases=()
secs=()
run() { # name cmd...: runs cmd (stdout to NAME.sam), records its wall seconds
    local name=$1
    shift
    /usr/bin/time -f %e -o "time.$name" "$@" >"$name.sam" 2>/dev/null
    cases+=("$name")
    secs+=("$(tail -n 1 "time.$name")")
}
fm() { # name binary mode...: fmalign writes its own file
    local name=$1 bin=$2
    shift 2
    run "$name" "$bin" map -q -t "$T" "$@" -o "$WORK/$name.sam.fm" chr20.fmi p1.fq p2.fq
    mv "$name.sam.fm" "$name.sam"
}
fm fmalign-local "$FM"
fm fmalign-e2e "$FM" --end-to-end
if [ -n "$OLD" ]; then
    fm old-local "$OLD"
    fm old-e2e "$OLD" --end-to-end
fi
run strobealign "$PEERS/strobealign" --use-index -t "$T" chr20.fa p1.fq p2.fq
run bwa-mem bwa mem -t "$T" chr20.fa p1.fq p2.fq
run minimap2-sr minimap2 -ax sr -t "$T" chr20.mmi p1.fq p2.fq
strobe=${secs[${#cases[@]} - 3]}
printf '%-14s %8s %13s %10s %7s\n' tool seconds x_strobealign correct wrong
for i in "${!cases[@]}"; do
    # alneval's line "02x": wrong and mapped in the bin, mapped at MAPQ >= 20,
    # and the error rate among those.
    read -r mapped rate < <(samtools view -F 0x900 "${cases[$i]}.sam" |
        wgsim_eval.pl alneval -g 20 - 2>/dev/null | awk '$1 == "02x" { print $5, $6 }')
    wrong=$(awk -v n="$mapped" -v r="$rate" 'BEGIN { printf "%d", n * r + 0.5 }')
    printf '%-14s %8s %13.2f %10d %7d\n' "${cases[$i]}" "${secs[$i]}" \
        "$(echo "${secs[$i]} / $strobe" | bc -l)" $((mapped - wrong)) "$wrong"
done
