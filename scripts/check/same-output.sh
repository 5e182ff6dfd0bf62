#!/usr/bin/env bash
# scripts/check/same-output.sh OLD NEW: whether two fmalign binaries write the same
# bytes (SAM and BAM, @PG's version line aside) in every mapping mode, single
# and paired, with the pipeline options, on the shared data (real chrM
# pairs; E. coli) and wgsim sets (E. coli pairs; chr20 pairs when
# CHR20=1). For refactors that must not change the output. Prints one line
# per case and exits 1 if any differs.
#
#   scripts/check/same-output.sh /tmp/old/fmalign target/release/fmalign
#   WORK=/tmp/same CHR20=1 scripts/check/same-output.sh OLD NEW
set -euo pipefail
OLD=$(readlink -f "$1")
NEW=$(readlink -f "$2")
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
WORK=${WORK:-/tmp/check-same-output}
mkdir -p "$WORK"
cd "$WORK"
[ -e chrM.fa ] || cp "$DATA/human_chrM_NC_012920.fa" chrM.fa
[ -e ecoli.fa ] || gzip -dc "$DATA/ecoli_K12_MG1655.fa.gz" >ecoli.fa
[ -e chrM.fmi ] || "$NEW" index -q -p chrM.fmi chrM.fa
[ -e ecoli.fmi ] || "$NEW" index -q -p ecoli.fmi ecoli.fa
[ -e m1.fq ] || gzip -dc "$DATA/human_chrM_ERR2438055_R1.fq.gz" >m1.fq
[ -e m2.fq ] || gzip -dc "$DATA/human_chrM_ERR2438055_R2.fq.gz" >m2.fq
# E. coli: wgsim's default errors, mutations and indels; 100 and 36 bases.
[ -e e1.fq ] || wgsim -S 3 -N 20000 -1 100 -2 100 ecoli.fa e1.fq e2.fq >/dev/null 2>&1
[ -e s36.fq ] || wgsim -S 4 -N 20000 -1 36 -2 36 -e 0.01 ecoli.fa s36.fq /dev/null >/dev/null 2>&1
sets=("chrM.fmi m1.fq" "chrM.fmi m1.fq m2.fq" "ecoli.fmi e1.fq" "ecoli.fmi e1.fq e2.fq" "ecoli.fmi s36.fq")
if [ "${CHR20:-0}" = 1 ]; then
    [ -e chr20.fa ] || gzip -dc "$DATA/human_GRCh37_chr20.fa.gz" >chr20.fa
    [ -e chr20.fmi ] || "$NEW" index -q -p chr20.fmi chr20.fa
    [ -e c1.fq ] || wgsim -S 5 -N 20000 -1 150 -2 150 chr20.fa c1.fq c2.fq >/dev/null 2>&1
    sets+=("chr20.fmi c1.fq" "chr20.fmi c1.fq c2.fq")
fi
modes=("" "--local" "--end-to-end" "-v 0" "-v 2" "-v 0 -a" "-v 2 -k 3" "-v 2 --strata"
    "-k 3" "-a --end-to-end" "-M" "--max-xa 0 -v 1" "--no-unal" "--no-unal -v 0"
    "-R @RG\tID:s1\tSM:x" "-R @RG\tID:s1\tSM:x -v 1")
fail=0
body() { # binary output: the output's bytes without @PG (the version)
    case "$2" in
    *.bam) samtools view -h --no-PG "$2" | grep -v '^@PG' ;;
    *) grep -v '^@PG' "$2" ;;
    esac
}
after_text() { # the BAM's bytes after its header text: references, records
    local l
    l=$(gzip -dc "$1" | head -c 8 | tail -c 4 | od -An -tu4 | tr -d ' ')
    gzip -dc "$1" | tail -c +$((8 + l + 1))
}
for set in "${sets[@]}"; do
    read -r idx r1 r2 <<<"$set"
    for mode in "${modes[@]}"; do
        for fmt in sam bam; do
            args=(map -q -t 2)
            [ -n "$mode" ] && read -r -a m <<<"$mode" && args+=("${m[@]}")
            copies=()
            if [ -z "$r2" ]; then copies=(--un old.un.fq --al old.al.fq.gz); else copies=(--un-conc old.un.%.fq); fi
            # shellcheck disable=SC2086
            "$OLD" "${args[@]}" "${copies[@]}" -o "old.$fmt" "$idx" $r1 $r2 2>old.err
            new_copies=("${copies[@]//old/new}")
            # shellcheck disable=SC2086
            "$NEW" "${args[@]}" "${new_copies[@]}" -o "new.$fmt" "$idx" $r1 $r2 2>new.err
            same=yes
            if [ "$fmt" = bam ]; then
                # The BAM bytes after the header block (its @PG differs).
                cmp -s <(body x old.bam) <(body x new.bam) || same="no (records)"
                cmp -s <(after_text old.bam) <(after_text new.bam) || same="no (BAM bytes)"
            else
                cmp -s <(body x old.sam) <(body x new.sam) || same="no (SAM)"
            fi
            for f in old.un* old.al*; do
                [ -e "$f" ] || continue
                cmp -s "$f" "${f/old/new}" || same="no ($f)"
            done
            grep -v "in [0-9.]* s\|reads/s" old.err >old.err2 || true
            grep -v "in [0-9.]* s\|reads/s" new.err >new.err2 || true
            cmp -s old.err2 new.err2 || same="no (stderr)"
            rm -f old.un* old.al* new.un* new.al*
            [ "$same" = yes ] || fail=1
            printf '%-28s %-32s %s %s\n' "$set" "${mode:-default}" "$fmt" "$same"
        done
    done
done
exit $fail
