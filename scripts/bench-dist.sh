#!/usr/bin/env bash
# bench-dist.sh: `mpirun -np P fmalign index --distributed` for P = 1..8 on
# one reference (default chr20), beside the single-process `fmalign index`,
# in one run on this machine:
#
#   fmalign index -t THREADS -p WORK/single.fmi REF                (reference bytes)
#   mpirun -np P fmalign index --distributed --stats -p WORK/npP.fmi REF
#
# For every P: wall seconds and peak RSS of the largest rank (/usr/bin/time on
# mpirun reports the largest child), the per-rank, per-phase seconds and
# bytes sent from --stats (WORK/npP.log), the bytes sent per base per rank
# (total sent over all ranks / n: each rank sends this many bytes per base of its block), and `cmp` of the index with the
# single-process one (must be identical: the script exits 1 otherwise).
# With more ranks than cores the ranks share the cores: the times show the
# work, not a speed-up.
#
# Outputs in WORK: summary.tsv (one line per P: P, wall s, max RSS MB, bytes
# sent per base per rank, then each phase's slowest-rank seconds), phases.tsv
# (rank, phase, seconds, bytes), rounds.tsv (prefix-doubling rounds), the logs.
#
# Usage: scripts/bench-dist.sh [REF.fa]
# Environment: FMALIGN (default target/release/fmalign, must be built with
# --features mpi), WORK (default bench-out/dist), NPS (default "1 2 3 4 6 8"),
# THREADS (single-process threads, default 2), MPIRUN_ARGS (extra mpirun
# options; --oversubscribe --bind-to none are always given).
# Needs: OpenMPI (mpirun), /usr/bin/time, cmp, awk.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

FMALIGN=${FMALIGN:-target/release/fmalign}
WORK=${WORK:-bench-out/dist}
NPS=${NPS:-"1 2 3 4 6 8"}
THREADS=${THREADS:-2}
REF=${1:-bench-out/chr20.fa}
if [[ ! -e $REF ]]; then
    mkdir -p "$(dirname "$REF")"
    gzip -dc "${FMALIGN_DATA:-../shared/data}/human_GRCh37_chr20.fa.gz" >"$REF"
fi
mkdir -p "$WORK"
# As root in a container: allow it; loopback and shared memory only.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=${OMPI_MCA_btl:-self,vader}
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}

echo "# $(date -u +%F) $(uname -n) $(nproc) cores; $($FMALIGN --version); $(mpirun --version | head -n 1)"
/usr/bin/time -f '%e %M' -o "$WORK/single.time" \
    "$FMALIGN" index -q -t "$THREADS" -p "$WORK/single.fmi" "$REF"
read -r s_wall s_rss <"$WORK/single.time"
echo "single process (-t $THREADS): $s_wall s, $((s_rss / 1024)) MB"

printf 'np\twall_s\tmax_rss_mb\tsent_bytes_per_base_per_rank' >"$WORK/summary.tsv"
printf '\tscan\tread\tsa\tbwt+occ\treversed\twrite\n' >>"$WORK/summary.tsv"
: >"$WORK/phases.tsv"
: >"$WORK/rounds.tsv"
status=0
for np in $NPS; do
    log=$WORK/np$np.log
    /usr/bin/time -f '%e %M' -o "$WORK/np$np.time" \
        mpirun --oversubscribe --bind-to none ${MPIRUN_ARGS:-} -np "$np" \
        "$FMALIGN" index --distributed --stats -p "$WORK/np$np.fmi" "$REF" 2>"$log"
    read -r wall rss <"$WORK/np$np.time"
    if cmp -s "$WORK/np$np.fmi" "$WORK/single.fmi"; then same=identical; else same=DIFFERENT; status=1; fi
    n=$(grep -o '[0-9]* unambiguous bases' "$log" | head -n 1 | cut -d' ' -f1)
    awk -F'\t' -v np="$np" '$1 == "dist" { print np "\t" $2 "\t" $3 "\t" $4 "\t" $5 }' "$log" >>"$WORK/phases.tsv"
    awk -F'\t' -v np="$np" '$1 == "dist-round" { print np "\t" $2 "\t" $3 "\t" $4 }' "$log" >>"$WORK/rounds.tsv"
    awk -F'\t' -v np="$np" -v wall="$wall" -v rss="$rss" -v n="$n" '
        $1 == "dist" { sent += $5; if ($4 > t[$3]) t[$3] = $4 }
        END {
            printf "%d\t%s\t%d\t%.2f", np, wall, rss / 1024, sent / n
            split("scan read sa bwt+occ reversed write", ph, " ")
            for (i = 1; i <= 6; i++) printf "\t%.2f", t[ph[i]]
            printf "\n"
        }' "$log" >>"$WORK/summary.tsv"
    echo "np $np: $wall s, max rank $((rss / 1024)) MB, index $same"
    rm -f "$WORK/np$np.fmi"
done
column -t -s $'\t' "$WORK/summary.tsv"
exit $status
