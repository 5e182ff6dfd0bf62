#!/usr/bin/env bash
# scripts/bench/dist.sh: `mpirun -np P fmalign index --distributed` beside the
# single-process `fmalign index`, in one run on this machine, for each
# algorithm in ALGS and each P in NPS:
#
#   fmalign index -t THREADS -p WORK/single.fmi REF                  (reference bytes and time)
#   mpirun -np P fmalign index --distributed --dist-algorithm A -t T --stats -p WORK/A-npP.fmi REF
#
# T = THREADS / P (at least 1): the ranks share this machine's cores, so the
# times show the work and the overheads, not a speed-up. Per run: wall
# seconds and the ratio to the single process, peak RSS of the largest rank
# (/usr/bin/time on mpirun reports the largest child), the bytes sent by all
# ranks in all phases (--stats) per base, and over n (P - 1) / P as issue 21
# counts them (a perfect all-to-all of everything would send 1 byte per
# byte), the slowest rank's seconds per phase, and `cmp` with the
# single-process index (must be identical: the script exits 1 otherwise).
#
# Outputs in WORK: summary.tsv (one line per run), phases.tsv (algorithm,
# P, rank, phase, seconds, bytes sent), the logs.
#
# Usage: scripts/bench/dist.sh [REF.fa]
# Environment: FMALIGN (default target/release/fmalign, built with
# --features mpi), WORK (default bench-out/dist), NPS (default "1 2 4 8"),
# ALGS (default "parts doubling"), THREADS (default 2), MPIRUN_ARGS (extra
# mpirun options; --oversubscribe --bind-to none are always given).
# Needs: OpenMPI (mpirun), /usr/bin/time, cmp, awk.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

FMALIGN=${FMALIGN:-target/release/fmalign}
WORK=${WORK:-bench-out/dist}
NPS=${NPS:-"1 2 4 8"}
ALGS=${ALGS:-"parts doubling"}
THREADS=${THREADS:-2}
REF=${1:-bench-out/chr20.fa}
if [[ ! -e $REF ]]; then
    mkdir -p "$(dirname "$REF")"
    gzip -dc "$DATA/human_GRCh37_chr20.fa.gz" >"$REF"
fi
mkdir -p "$WORK"
# As root in a container: allow it; loopback and shared memory only.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=${OMPI_MCA_btl:-self,vader}
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}

echo "# $(date -u +%F) $(uname -n) $(nproc) cores; $($FMALIGN --version); $(mpirun --version | head -n 1)"
/usr/bin/time -f '%e %M' -o "$WORK/single.time" \
    "$FMALIGN" index -t "$THREADS" -p "$WORK/single.fmi" "$REF" 2>"$WORK/single.log"
read -r s_wall s_rss <"$WORK/single.time"
n=$(grep -o '[0-9]* unambiguous bases' "$WORK/single.log" | head -n 1 | cut -d' ' -f1)
echo "single process (-t $THREADS): $s_wall s, $((s_rss / 1024)) MB, $n bases"

printf 'algorithm\tnp\tthreads\twall_s\tx_single\tmax_rss_mb\tsent_B_per_base\tsent_over_n(P-1)/P\tphases (slowest rank, s)\n' >"$WORK/summary.tsv"
: >"$WORK/phases.tsv"
status=0
for alg in $ALGS; do
    for np in $NPS; do
        t=$((THREADS / np))
        ((t >= 1)) || t=1
        log=$WORK/$alg-np$np.log
        /usr/bin/time -f '%e %M' -o "$WORK/$alg-np$np.time" \
            mpirun --oversubscribe --bind-to none ${MPIRUN_ARGS:-} -np "$np" \
            "$FMALIGN" index --distributed --dist-algorithm "$alg" -t "$t" --stats \
            -p "$WORK/$alg-np$np.fmi" "$REF" 2>"$log"
        read -r wall rss <"$WORK/$alg-np$np.time"
        if cmp -s "$WORK/$alg-np$np.fmi" "$WORK/single.fmi"; then same=identical; else same=DIFFERENT; status=1; fi
        awk -F'\t' -v a="$alg" -v np="$np" '$1 == "dist" { print a "\t" np "\t" $2 "\t" $3 "\t" $4 "\t" $5 }' "$log" >>"$WORK/phases.tsv"
        awk -F'\t' -v a="$alg" -v np="$np" -v t="$t" -v wall="$wall" -v rss="$rss" -v n="$n" -v single="$s_wall" '
            $1 == "dist" {
                sent += $5
                if (!($3 in slow)) order[++k] = $3
                if ($4 > slow[$3]) slow[$3] = $4
            }
            END {
                over = np > 1 ? sent / (n * (np - 1) / np) : 0
                printf "%s\t%d\t%d\t%s\t%.2f\t%d\t%.4f\t%.4f\t", a, np, t, wall, wall / single, rss / 1024, sent / n, over
                for (i = 1; i <= k; i++) printf "%s %.1f%s", order[i], slow[order[i]], i < k ? ", " : "\n"
            }' "$log" >>"$WORK/summary.tsv"
        echo "$alg np $np (-t $t): $wall s, max rank $((rss / 1024)) MB, index $same"
        rm -f "$WORK/$alg-np$np.fmi"
    done
done
column -t -s $'\t' "$WORK/summary.tsv"
exit $status
