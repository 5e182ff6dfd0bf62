#!/usr/bin/env bash
# scripts/bench/pairs.sh: paired-end mapping beside bowtie and bwa aln/sampe, in one
# run: time and proper-pair rate (samtools flagstat) of
#   fmalign map -t T -v 2 INDEX R1 R2
#   bowtie -p T -v 2 -X 500 -S IDX -1 R1 -2 R2
#   bwa aln -t T (each mate) + bwa sampe
# on (1) 200k wgsim pairs of chr20 (100 bp mates, fragments 300 +- 30, 1%
# errors) and (2) the real chrM pairs in test_data/ (ERR2438055).
# Usage: scripts/bench/pairs.sh   (WORK=bench-out/pairs, THREADS=2, PAIRS=200000)
set -euo pipefail
WORK=${WORK:-bench-out/pairs}
THREADS=${THREADS:-2}
PAIRS=${PAIRS:-200000}
FMALIGN=${FMALIGN:-target/release/fmalign}
for t in bowtie bowtie-build bwa samtools wgsim /usr/bin/time; do
    command -v "$t" >/dev/null || { echo "bench-pairs: $t not found" >&2; exit 1; }
done
[[ -x $FMALIGN ]] || cargo build --release
mkdir -p "$WORK"
exec > >(tee "$WORK/report.txt") 2>&1
echo "== bench-pairs: $(date -u +%FT%TZ) on $(uname -n), $(nproc) cores, threads=$THREADS"

chr20=$WORK/chr20.fa
if [[ ! -s $chr20 ]]; then
    if [[ -s bench-out/chr20.fa ]]; then cp bench-out/chr20.fa "$chr20"; else gzip -dc "$DATA/human_GRCh37_chr20.fa.gz" >"$chr20"; fi
fi
chrm=$WORK/chrM.fa
cp test_data/human_chrM_NC_012920.fa "$chrm"
for ref in "$chr20" "$chrm"; do
    [[ -s $ref.fmi ]] || "$FMALIGN" index -q -t "$THREADS" "$ref"
    [[ -s $ref.1.ebwt ]] || bowtie-build -q "$ref" "$ref" >/dev/null
    [[ -s $ref.bwt ]] || bwa index "$ref" 2>/dev/null
done
if [[ ! -s $WORK/w1.fq ]]; then
    wgsim -S 20 -N "$PAIRS" -1 100 -2 100 -d 300 -s 30 -e 0.01 -r 0 -R 0 "$chr20" "$WORK/w1.fq" "$WORK/w2.fq" >/dev/null
fi
gzip -dc test_data/human_chrM_ERR2438055_R1.fq.gz >"$WORK/m1.fq"
gzip -dc test_data/human_chrM_ERR2438055_R2.fq.gz >"$WORK/m2.fq"

# run NAME SAM CMD...: times CMD (stdout to SAM), prints seconds, proper %, mapped %.
run() {
    local name=$1 sam=$2; shift 2
    /usr/bin/time -f '%e %M' -o "$WORK/$name.time" "$@" >"$sam" 2>"$WORK/$name.log"
    local fs; fs=$(samtools flagstat "$sam")
    local total proper mapped
    total=$(awk '/paired in sequencing/ {print $1}' <<<"$fs")
    proper=$(awk '/properly paired/ {print $1}' <<<"$fs")
    mapped=$(awk '/ mapped \(/ {print $1; exit}' <<<"$fs")
    read -r secs rss <"$WORK/$name.time"
    printf '| %s | %s | %.2f | %.0f | %.2f%% | %.2f%% |\n' "$set" "$name" "$secs" "$((rss / 1024))" \
        "$(echo "100 * $proper / $total" | bc -l)" "$(echo "100 * $mapped / $total" | bc -l)"
}
echo "| reads | tool | seconds | peak RSS MB | properly paired | mapped |"
echo "|---|---|---:|---:|---:|---:|"
for set in chr20-wgsim chrM-real; do
    case $set in
        chr20-wgsim) ref=$chr20 r1=$WORK/w1.fq r2=$WORK/w2.fq ;;
        chrM-real) ref=$chrm r1=$WORK/m1.fq r2=$WORK/m2.fq ;;
    esac
    run fmalign "$WORK/$set.fm.sam" "$FMALIGN" map -q -t "$THREADS" -v 2 "$ref.fmi" "$r1" "$r2"
    run bowtie "$WORK/$set.bt.sam" bowtie -p "$THREADS" -v 2 -X 500 -S --best "$ref" -1 "$r1" -2 "$r2"
    run bwa-aln-sampe "$WORK/$set.bwa.sam" bash -c "bwa aln -t $THREADS $ref $r1 > $WORK/a1.sai 2>/dev/null && bwa aln -t $THREADS $ref $r2 > $WORK/a2.sai 2>/dev/null && bwa sampe $ref $WORK/a1.sai $WORK/a2.sai $r1 $r2 2>/dev/null"
    grep -h 'insert size' "$WORK/fmalign.log" | sed "s/^/   $set fmalign: /" >&2 || true
done
