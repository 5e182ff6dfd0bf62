#!/usr/bin/env bash
# Locate on an exactly periodic reference (issue 39): one random 1 kb unit
# repeated 50,000 times (50 Mbp), 200 reads of 100 bases from it, each with
# 50,000 exact hits. fmalign locates every hit to count them (-v 0, -v 2);
# with the version-2 sampling (every K-th row) most walks ran to the start of
# the text (about 8 s a read), with one hashed row per block they take about
# K steps. Beside it, for scale, bowtie -v 0 and bwa mem on the same reads
# (each reports one of the hits), and OLD=path/to/fmalign, an older binary,
# on its own index (5 reads, under a time limit). Then chr20 is not slower:
# set CHR20=1 to map 1M reads of chr20 with -v 0 and -v 2 by both binaries.
#
#   scripts/bench/locate.sh            # fmalign, peers where installed
#   OLD=/path/fmalign scripts/bench/locate.sh
# Output in bench-out/locate/ (git-ignored); one run at a time on 2 cores.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
out=bench-out/locate
mkdir -p "$out"
fm=${FMALIGN:-target/release/fmalign}
[ -x "$fm" ] || cargo build --release
t=${THREADS:-2}
python3 - "$out" <<'PY'
import random, sys
out = sys.argv[1]
random.seed(7)
unit = "".join(random.choice("ACGT") for _ in range(1000))
s = unit * 50000
with open(f"{out}/periodic.fa", "w") as f:
    f.write(">sat\n")
    for i in range(0, len(s), 80):
        f.write(s[i:i + 80] + "\n")
with open(f"{out}/r200.fq", "w") as f:
    for k in range(200):
        p = random.randrange(1000)
        f.write(f"@r{k}\n{(unit * 2)[p:p + 100]}\n+\n{'I' * 100}\n")
PY
secs() { /usr/bin/time -f %e -o "$out/t" "$@" >/dev/null 2>"$out/err" || echo "failed: $(tail -n 1 "$out/err")" >&2; cat "$out/t"; }
"$fm" index -q -t "$t" -p "$out/new.fmi" "$out/periodic.fa"
v0=$(secs "$fm" map -q -t "$t" -v 0 "$out/new.fmi" "$out/r200.fq")
v2=$(secs "$fm" map -q -t "$t" -v 2 "$out/new.fmi" "$out/r200.fq")
echo "fmalign -v 0: $v0 s for 200 reads of 50,000 hits each (target: 30 s)"
echo "fmalign -v 2: $v2 s"
# The peers' index builds under a limit (bowtie-build ran for over 20 minutes
# on this text).
limit=${PEER_LIMIT:-300}
if command -v bowtie-build >/dev/null; then
    if timeout "$limit" bowtie-build -q --threads "$t" "$out/periodic.fa" "$out/bt" >/dev/null; then
        b=$(secs timeout "$limit" bowtie -p "$t" -v 0 -S "$out/bt" "$out/r200.fq")
        echo "bowtie -v 0: $b s ($(awk -v a="$v0" -v b="$b" 'BEGIN { printf "%.2f", a / b }')x fmalign/bowtie)"
    else
        echo "bowtie-build: not done in $limit s"
    fi
fi
if command -v bwa >/dev/null; then
    if timeout "$limit" bwa index "$out/periodic.fa" >/dev/null 2>&1; then
        b=$(secs timeout "$limit" bwa mem -t "$t" "$out/periodic.fa" "$out/r200.fq")
        echo "bwa mem: $b s ($(awk -v a="$v0" -v b="$b" 'BEGIN { printf "%.2f", a / b }')x fmalign -v 0/bwa mem)"
    else
        echo "bwa index: not done in $limit s"
    fi
fi
if [ -n "${OLD:-}" ]; then
    "$OLD" index -q -t "$t" -p "$out/old.fmi" "$out/periodic.fa"
    head -n 20 "$out/r200.fq" >"$out/r5.fq"
    o=$(timeout 120 /usr/bin/time -f %e "$OLD" map -q -t "$t" -v 0 "$out/old.fmi" "$out/r5.fq" 2>&1 >/dev/null | tail -n 1)
    echo "old fmalign -v 0: $o s for 5 reads"
fi
if [ -n "${CHR20:-}" ] && [ -n "${OLD:-}" ]; then
    data=${FMALIGN_DATA:-../shared/data}
    gzip -dc "$data/human_GRCh37_chr20.fa.gz" >"$out/chr20.fa"
    wgsim -S 11 -N 1000000 -1 100 -2 100 -e 0.005 -r 0 -R 0 "$out/chr20.fa" "$out/c1.fq" /dev/null >/dev/null 2>&1
    "$fm" index -q -t "$t" -p "$out/c20new.fmi" "$out/chr20.fa"
    "$OLD" index -q -t "$t" -p "$out/c20old.fmi" "$out/chr20.fa"
    for v in 0 2; do
        a=$(secs "$OLD" map -q -t "$t" -v $v "$out/c20old.fmi" "$out/c1.fq")
        b=$(secs "$fm" map -q -t "$t" -v $v "$out/c20new.fmi" "$out/c1.fq")
        echo "chr20 1M reads -v $v: old $a s, new $b s ($(awk -v a="$b" -v b="$a" 'BEGIN { printf "%.2f", a / b }')x)"
    done
fi
