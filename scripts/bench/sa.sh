#!/usr/bin/env bash
# scripts/bench/sa.sh: the suffix-array algorithms of `fmalign index --sa` side by side
# (libsais, hybrid, skew, ls) on three genomes, on the same machine in one run.
#
# Genomes (labels used in every file name):
#   chr20    human GRCh37 chr20 (63 Mbp, 59.5 M unambiguous bases): a real genome
#            with its repeats. Read from CHR20 (default bench-out/chr20.fa when it
#            exists, else decompressed from FMALIGN_DATA/human_GRCh37_chr20.fa.gz
#            into WORK/genomes/chr20.fa). With CHR20_LEN set (and with --quick),
#            a slice of CHR20_LEN FASTA characters from CHR20_OFFSET instead.
#   at-rich  synthetic AT-rich genome (~80% A+T, microsatellites, tandem and
#            interspersed repeats; scripts/data/make-test-genomes.py at-rich, seed 1).
#   all-a    AAAA...A: the worst case of prefix doubling.
#   pfal     Plasmodium falciparum (14 chromosomes MAL1-MAL14, 23.3 Mbp, 80.6% A+T):
#            a real AT-rich genome, the malaria parasite. Read from PFAL (default
#            /usr/share/doc/smalt/test/data/genome_1.fa.gz from Debian's
#            smalt-examples: apt-get install smalt-examples), decompressed into
#            WORK/genomes/pfal.fa.
#
# For every genome and algorithm:
#   /usr/bin/time -f '%e %M' timeout TIMEOUT \
#       fmalign index -t THREADS --sa ALGO --stats -p WORK/idx/G-ALGO.fmi G.fa
# and records wall seconds, peak RSS (MB and bytes per unambiguous base),
# bases per second over the whole command, the suffix-array stage's seconds
# (fmalign's "[fmalign] suffix array X s" log line), bases per second of that
# stage, and the stage's time divided by libsais' on the same genome. The
# --stats rounds go to WORK/rounds-G-ALGO.tsv (header line plus one `sa` line
# per round; header only for libsais; the rounds done so far for a run that
# timed out) for scripts/plot/sa-rounds.py. Every .fmi is compared byte for
# byte (cmp) with libsais' (or, without libsais, the first algorithm's);
# every algorithm must give the same index.
#
# Genomes are made once in WORK/genomes and reused (remade when
# scripts/data/make-test-genomes.py is newer).
# Outputs in WORK: report.txt (everything printed), summary.md (the table),
# results.tsv (one machine-readable line per run), rounds-*.tsv, logs/G-ALGO.log
# (fmalign's stderr) and logs/G-ALGO.time. Index files are deleted after the
# comparison unless KEEP_FMI=1.
#
# Usage: scripts/bench/sa.sh [--quick] [--work DIR]
#   --quick   smoke test in well under a minute: a 4 Mbp slice of chr20, 2 Mbp
#             AT-rich, 500 kbp all-A, TIMEOUT 120; WORK defaults to bench-out/sa-quick.
# Environment:
#   FMALIGN       fmalign binary (default target/release/fmalign; built with
#                 `cargo build --release` when that default is missing)
#   FMALIGN_DATA  folder with human_GRCh37_chr20.fa.gz (default ../shared/data)
#   WORK          output folder (default bench-out/sa; bench-out/sa-quick with --quick)
#   THREADS       fmalign -t (default 2)
#   ALGOS         algorithms, space separated (default "libsais hybrid skew ls")
#   GENOMES       genomes, space separated (default "chr20 at-rich all-a")
#   CHR20         chr20 FASTA (plain or gzip)
#   CHR20_LEN     use only this many FASTA characters of it (default: all; 4000000 quick)
#   CHR20_OFFSET  from this 0-based character of the sequence (default 10000000)
#   AT_LEN        AT-rich genome length (default 20000000; 2000000 quick)
#   ALLA_LEN      all-A length (default 5000000; 500000 quick)
#   PFAL          P. falciparum FASTA (plain or gzip)
#   TANDEM_LEN    tandem-repeat genome length (10 kb unit; default 5000000; 500000 quick);
#                 add "tandem" to GENOMES to run it
#   TIMEOUT       seconds per fmalign run before it is killed and reported as
#                 "timeout" (default 3600; 120 quick; 0 = no limit)
#   KEEP_FMI=1    keep the index files in WORK/idx
#   QUICK=1       same as --quick
# Relative paths are taken from the repository root (the script cd's there).
# Exit status: 1 when two algorithms wrote different indexes (or on a setup
# error); timeouts and failed runs are reported in the table, not as errors.
# Needs: /usr/bin/time (package time), timeout, cmp, awk, python3.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

QUICK=${QUICK:-0}
while [[ $# -gt 0 ]]; do
    case "$1" in
        --quick) QUICK=1 ;;
        --work) [[ $# -ge 2 ]] || die "--work needs a folder"; WORK=$2; shift ;;
        --work=*) WORK=${1#--work=} ;;
        -h|--help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$SELF"; exit 0 ;;
        *) die "unknown argument: $1 (try --help)" ;;
    esac
    shift
done

FMALIGN=${FMALIGN:-target/release/fmalign}
THREADS=${THREADS:-2}
ALGOS=${ALGOS:-libsais hybrid skew ls}
GENOMES=${GENOMES:-chr20 at-rich all-a}
CHR20_OFFSET=${CHR20_OFFSET:-10000000}
KEEP_FMI=${KEEP_FMI:-0}
if [[ $QUICK == 1 ]]; then
    WORK=${WORK:-bench-out/sa-quick}
    CHR20_LEN=${CHR20_LEN:-4000000}
    AT_LEN=${AT_LEN:-2000000}
    ALLA_LEN=${ALLA_LEN:-500000}
    TANDEM_LEN=${TANDEM_LEN:-500000}
    TIMEOUT=${TIMEOUT:-120}
else
    WORK=${WORK:-bench-out/sa}
    CHR20_LEN=${CHR20_LEN:-}
    AT_LEN=${AT_LEN:-20000000}
    ALLA_LEN=${ALLA_LEN:-5000000}
    TANDEM_LEN=${TANDEM_LEN:-5000000}
    TIMEOUT=${TIMEOUT:-3600}
fi

for t in timeout cmp awk python3; do
    command -v "$t" >/dev/null || die "$t not found"
done
[[ -x /usr/bin/time ]] || die "/usr/bin/time not found (apt-get install time)"
[[ $TIMEOUT =~ ^[0-9]+$ ]] || die "TIMEOUT must be a whole number of seconds"
for a in $ALGOS; do
    case $a in libsais|hybrid|skew|ls) ;; *) die "unknown algorithm in ALGOS: $a" ;; esac
done
for g in $GENOMES; do
    case $g in chr20|pfal|at-rich|all-a|tandem) ;; *) die "unknown genome in GENOMES: $g" ;; esac
done

if [[ ! -x $FMALIGN ]]; then
    if [[ $FMALIGN == target/release/fmalign ]]; then
        echo "== building fmalign (cargo build --release)"
        cargo build --release
    fi
    [[ -x $FMALIGN ]] || die "fmalign binary $FMALIGN not found"
fi

mkdir -p "$WORK/genomes" "$WORK/logs" "$WORK/idx"
export LC_ALL=C

# Copy everything printed from here on into WORK/report.txt.
exec > >(tee "$WORK/report.txt") 2>&1

echo "== bench-sa: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n), $(nproc) cores, threads=$THREADS"
echo "   fmalign: $FMALIGN ($("$FMALIGN" --version 2>/dev/null || echo 'version unknown'))"
echo "   algorithms: $ALGOS   genomes: $GENOMES   timeout: ${TIMEOUT}s per run   work: $WORK"

# ---------------------------------------------------------------- genomes
# fasta_of G: prints the FASTA path of genome G, making it first when needed.
fasta_of() {
    local g=$1 out
    case $g in
        chr20)
            local src=${CHR20:-}
            if [[ -z $src ]]; then
                if [[ -s bench-out/chr20.fa ]]; then src=bench-out/chr20.fa
                else src=$DATA/human_GRCh37_chr20.fa.gz; fi
            fi
            [[ -r $src ]] || die "chr20 FASTA $src not found (set CHR20 or FMALIGN_DATA)"
            if [[ -z $CHR20_LEN ]]; then
                if [[ $src == *.gz ]]; then
                    out=$WORK/genomes/chr20.fa
                    [[ -s $out ]] || { echo "   decompressing $src -> $out" >&2; gzip -dc "$src" >"$out"; }
                    echo "$out"
                else
                    echo "$src"
                fi
                return
            fi
            out=$WORK/genomes/chr20-$CHR20_OFFSET+$CHR20_LEN.fa
            if [[ ! -s $out ]]; then
                echo "   slicing $CHR20_LEN characters of $src from $CHR20_OFFSET -> $out" >&2
                python3 - "$src" "$CHR20_OFFSET" "$CHR20_LEN" "$out" <<'EOF'
import gzip, sys
src, off, n, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
f = gzip.open(src, "rb") if src.endswith(".gz") else open(src, "rb")
seq = b"".join(l.strip() for l in f if not l.startswith(b">"))
part = seq[off:off + n]
if not part:
    sys.exit(f"chr20 has only {len(seq)} characters, none from {off}")
with open(out, "wb") as o:
    o.write(b">chr20_slice offset=%d length=%d\n" % (off, len(part)))
    for i in range(0, len(part), 60):
        o.write(part[i:i + 60] + b"\n")
EOF
            fi
            echo "$out" ;;
        pfal)
            local src=${PFAL:-/usr/share/doc/smalt/test/data/genome_1.fa.gz}
            [[ -r $src ]] || die "P. falciparum FASTA $src not found (apt-get install smalt-examples, or set PFAL)"
            out=$WORK/genomes/pfal.fa
            [[ -s $out ]] || { echo "   decompressing $src -> $out" >&2; gzip -dc -f "$src" >"$out"; }
            echo "$out" ;;
        at-rich)
            out=$WORK/genomes/at-rich-$AT_LEN.fa
            if [[ ! -s $out || scripts/data/make-test-genomes.py -nt $out ]]; then
                echo "   generating $out" >&2
                python3 scripts/data/make-test-genomes.py at-rich "$AT_LEN" "$out.tmp" >&2
                mv "$out.tmp" "$out"
            fi
            echo "$out" ;;
        tandem)
            out=$WORK/genomes/tandem-$TANDEM_LEN.fa
            if [[ ! -s $out || scripts/data/make-test-genomes.py -nt $out ]]; then
                echo "   generating $out" >&2
                python3 scripts/data/make-test-genomes.py tandem "$TANDEM_LEN" "$out.tmp" >&2
                mv "$out.tmp" "$out"
            fi
            echo "$out" ;;
        all-a)
            out=$WORK/genomes/all-a-$ALLA_LEN.fa
            if [[ ! -s $out || scripts/data/make-test-genomes.py -nt $out ]]; then
                echo "   generating $out" >&2
                python3 scripts/data/make-test-genomes.py all-a "$ALLA_LEN" "$out.tmp" >&2
                mv "$out.tmp" "$out"
            fi
            echo "$out" ;;
    esac
}

# ---------------------------------------------------------------- runs
RESULTS=$WORK/results.tsv
printf '#genome\tbases\talgorithm\tstatus\twall_s\tpeak_rss_kb\tsa_s\trounds\tlast_unsorted\tsame_fmi\n' >"$RESULTS"
DIFFER=0

for g in $GENOMES; do
    echo "== $g"
    fa=$(fasta_of "$g")
    # Unambiguous bases: fmalign's own count when a run logs it, else ACGT letters.
    bases=""
    ref_fmi=""
    declare -A status=() wall=() rss=() sa=() rounds=() last=() same=()
    for a in $ALGOS; do
        tag=$g-$a
        log=$WORK/logs/$tag.log
        tim=$WORK/logs/$tag.time
        fmi=$WORK/idx/$tag.fmi
        rm -f "$fmi" "$log" "$tim"
        echo "-- $tag: $FMALIGN index -t $THREADS --sa $a --stats -p $fmi $fa"
        tcmd=()
        [[ $TIMEOUT != 0 ]] && tcmd=(timeout -k 30 "$TIMEOUT")
        rc=0
        /usr/bin/time -f '%e %M' -o "$tim" "${tcmd[@]}" \
            "$FMALIGN" index -t "$THREADS" --sa "$a" --stats -p "$fmi" "$fa" 2>"$log" || rc=$?
        { grep '^#sa' "$log" | head -n 1; grep $'^sa\t' "$log" || true; } >"$WORK/rounds-$tag.tsv"
        if [[ -z $bases ]]; then
            bases=$(sed -n 's/.*read [0-9]* sequences, \([0-9]*\) unambiguous bases.*/\1/p' "$log" | head -n 1)
        fi
        wall[$a]=$(tail -n 1 "$tim" 2>/dev/null | awk '{print $1}')
        rss[$a]=$(tail -n 1 "$tim" 2>/dev/null | awk '{print $2}')
        sa[$a]=$(sed -n 's/^\[fmalign\] suffix array \([0-9.]*\) s.*/\1/p' "$log" | tail -n 1)
        rounds[$a]=$(awk -F'\t' '$1 == "sa" && $4 ~ /^(double|recurse|unique)$/' "$WORK/rounds-$tag.tsv" | wc -l | tr -d ' ')
        last[$a]=$(awk -F'\t' '$1 == "sa" && $4 != "merge" {u = $6} END {print u}' "$WORK/rounds-$tag.tsv")
        same[$a]="-"
        if [[ $rc == 0 ]]; then
            status[$a]=ok
        elif [[ $TIMEOUT != 0 ]] && { [[ $rc == 124 ]] ||
                { [[ $rc == 137 ]] && awk -v w="${wall[$a]:-0}" -v t="$TIMEOUT" 'BEGIN {exit !(w >= t)}'; }; }; then
            status[$a]=timeout
            wall[$a]=">$TIMEOUT"
        else
            status[$a]="failed($rc)"
        fi
        echo "   ${status[$a]}: wall ${wall[$a]:-?} s, peak RSS ${rss[$a]:-?} kB, suffix array ${sa[$a]:--} s, ${rounds[$a]} rounds"
        if [[ ${status[$a]} != ok ]]; then
            echo "   last lines of $log:"
            tail -n 5 "$log" | sed 's/^/     /'
            rm -f "$fmi"
            continue
        fi
        if [[ -z $ref_fmi ]]; then
            ref_fmi=$fmi
            same[$a]="ref"
        elif cmp -s "$ref_fmi" "$fmi"; then
            same[$a]="yes"
        else
            same[$a]="DIFFERENT"
            DIFFER=1
            echo "   !! $fmi differs from $ref_fmi: $(cmp "$ref_fmi" "$fmi" 2>&1 | head -n 1)"
        fi
        [[ $KEEP_FMI == 1 || $fmi == "$ref_fmi" ]] || rm -f "$fmi"
    done
    [[ $KEEP_FMI == 1 || -z $ref_fmi ]] || rm -f "$ref_fmi"
    if [[ -z $bases ]]; then
        bases=$(grep -v '^>' "$fa" | tr -cd 'ACGTacgt' | wc -c | tr -d ' ')
    fi
    for a in $ALGOS; do
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$g" "$bases" "$a" "${status[$a]}" \
            "${wall[$a]:-}" "${rss[$a]:-}" "${sa[$a]:-}" "${rounds[$a]}" "${last[$a]:-}" "${same[$a]}" >>"$RESULTS"
    done
    unset status wall rss sa rounds last same
done

# ---------------------------------------------------------------- summary
# Markdown table from results.tsv; ratios against libsais on the same genome.
awk -F'\t' -v threads="$THREADS" '
    function num(x) { return x ~ /^[0-9.]+$/ }
    function fmt(x, f) { return num(x) ? sprintf(f, x) : (x == "" ? "-" : x) }
    $1 ~ /^#/ { next }
    { n++; G[n] = $1; B[n] = $2; A[n] = $3; S[n] = $4; W[n] = $5; R[n] = $6; SA[n] = $7
      RD[n] = $8; LU[n] = $9; SM[n] = $10
      if ($3 == "libsais" && $4 == "ok") LIB[$1] = $7 }
    END {
        print "| genome | bases | algorithm | status | wall s | peak RSS MB | RSS B/base | Mbp/s | SA s | SA Mbp/s | SA / libsais SA | rounds | same .fmi |"
        print "|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"
        for (i = 1; i <= n; i++) {
            ok = (S[i] == "ok")
            mb = num(R[i]) ? sprintf("%.1f", R[i] / 1024) : "-"
            bpb = (num(R[i]) && B[i] > 0) ? sprintf("%.2f", R[i] * 1024 / B[i]) : "-"
            mbps = (ok && W[i] > 0) ? sprintf("%.2f", B[i] / W[i] / 1e6) : "-"
            sambps = (ok && SA[i] > 0) ? sprintf("%.2f", B[i] / SA[i] / 1e6) : "-"
            ratio = "-"
            # (fmalign logs 2 decimals: no ratio against a libsais time of 0.00 s)
            if (ok && num(SA[i]) && (G[i] in LIB) && LIB[G[i]] > 0)
                ratio = sprintf("%.2f", SA[i] / LIB[G[i]])
            rd = RD[i]
            if (A[i] == "libsais") rd = "-"
            else if (!ok && LU[i] != "") rd = rd " (" LU[i] " unsorted)"
            printf "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", \
                G[i], B[i], A[i], S[i], fmt(W[i], "%.2f"), mb, bpb, mbps, fmt(SA[i], "%.2f"), \
                sambps, ratio, rd, SM[i]
        }
        print ""
        print "fmalign index -t " threads "; wall and peak RSS of the whole command (read FASTA,"
        print "suffix array, BWT/Occ/SA samples, write); B/base and Mbp/s per unambiguous base;"
        print "SA = the suffix-array stage as fmalign logs it; rounds = prefix-doubling rounds after"
        print "the first radix sort (hybrid, ls) or recursion levels (skew), from --stats; for a run"
        print "that did not finish, with the suffixes still unsorted after its last round;"
        print "same .fmi = byte-identical to the ref run (cmp)."
    }' "$RESULTS" >"$WORK/summary.md"

echo
echo "== summary ($WORK/summary.md)"
echo
cat "$WORK/summary.md"
echo
echo "rounds: $WORK/rounds-*.tsv  (plot: scripts/plot/sa-rounds.py -o docs $WORK/rounds-*.tsv)"
if [[ $DIFFER == 1 ]]; then
    echo "!! some algorithms wrote a different index (see 'same .fmi')"
    exit 1
fi
echo "indexes identical across algorithms: yes"
