#!/usr/bin/env bash
# Issue 43's benchmark: the Python module's map_batch / map_pair_batch
# against `fmalign map` on the same reads, in one run, one command at a
# time, alternating, and the ratio the issue sets a target on (at most
# 1.2x the CLI's time).
#
# The CLI's time is the whole command (index load, FASTQ parse, mapping,
# SAM to /dev/null), wall and CPU (user + system) seconds by /usr/bin/time.
# The module's is Aligner() (index load) + map_batch (mapping and building
# the hit objects), the reads already in Python lists, wall and CPU
# (getrusage: every thread of the process); the FASTQ parse in Python and
# to_sam() of every hit are printed beside it, not counted. CPU seconds
# are steadier than wall ones on a busy machine.
#
#   scripts/bench/python.sh INDEX READS.fq [READS2.fq]
#   PY=/path/to/venv/bin/python T=2 REPEAT=3 scripts/bench/python.sh ...
#
# PY must import fmalign (pip install ./python); FMALIGN the CLI (default
# target/release/fmalign). MODE: local (default), end-to-end, ungapped.
# PY2: a second Python with another build of the module (say, the one
# before a change), run third in each round and compared the same way.
# The last lines are the medians of the rounds' ratios.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
[ $# -ge 2 ] || die "usage: $0 INDEX READS.fq [READS2.fq] (see the header of $SELF)"
INDEX=$(readlink -f "$1")
R1=$(readlink -f "$2")
R2=${3:+$(readlink -f "$3")}
PY=${PY:-python3}
T=${T:-2}
REPEAT=${REPEAT:-3}
MODE=${MODE:-local}
FMALIGN=$(readlink -f "${FMALIGN:-target/release/fmalign}")
"$PY" -c 'import fmalign' 2>/dev/null || die "$PY cannot import fmalign (pip install ./python)"
case $MODE in
    local) flags=() ;;
    end-to-end) flags=(--end-to-end) ;;
    ungapped) flags=(-v 2) ;;
    *) die "MODE: local, end-to-end or ungapped" ;;
esac
kw="mode='$MODE'"
[ "$MODE" = ungapped ] && kw="mode='ungapped', mismatches=2"

cli() {
    /usr/bin/time -f "%e %U %S" -o /tmp/fmalign-py-bench.time \
        "$FMALIGN" map -q -t "$T" "${flags[@]}" "$INDEX" "$R1" ${R2:+"$R2"} >/dev/null
    awk '{ printf "%s %.2f\n", $1, $2 + $3 }' /tmp/fmalign-py-bench.time
}

module() {
    "$1" - "$INDEX" "$R1" "${R2:-}" <<PYEOF
import resource, sys, time
import fmalign
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
index, r1, r2 = sys.argv[1], sys.argv[2], sys.argv[3]
def fastq(path):
    out = []
    with open(path) as f:
        while True:
            h = f.readline()
            if not h:
                return out
            s = f.readline().rstrip("\n"); f.readline(); q = f.readline().rstrip("\n")
            out.append((h[1:].split()[0], s, q))
t = time.perf_counter()
one = fastq(r1)
two = fastq(r2) if r2 else None
parse = time.perf_counter() - t
t, c = time.perf_counter(), cpu()
a = fmalign.Aligner(index, threads=$T, $kw)
if two:
    hits = a.map_pair_batch([(x[0], x[1], x[2], y[1], y[2]) for x, y in zip(one, two)])
else:
    hits = a.map_batch(one)
mapped, mapped_cpu = time.perf_counter() - t, cpu() - c
t = time.perf_counter()
n = sum(len(h.to_sam()) for hs in hits for h in hs)
sam = time.perf_counter() - t
print(f"{mapped:.3f} {mapped_cpu:.2f} {parse:.3f} {sam:.3f}")
PYEOF
}

if [ -n "${PY2:-}" ]; then
    "$PY2" -c 'import fmalign' 2>/dev/null || die "$PY2 cannot import fmalign"
fi
echo "reads: $R1${R2:+ + $R2}; mode $MODE; -t $T; $REPEAT rounds, CLI and module${PY2:+ and the PY2 module} alternating"
printf 'round\tcli_s\tmodule_s\tratio\tcli_cpu_s\tmodule_cpu_s\tcpu_ratio\tpy_parse_s\tto_sam_s%b\n' \
    "${PY2:+\tpy2_s\tpy2_ratio\tpy2_cpu_s\tpy2_cpu_ratio}"
ratios=$(mktemp)
trap 'rm -f "$ratios"' EXIT
for i in $(seq 1 "$REPEAT"); do
    read -r c cc < <(cli)
    read -r m mc p s < <(module "$PY")
    r=$(echo "$m / $c" | bc -l)
    rc=$(echo "$mc / $cc" | bc -l)
    line=$(printf '%s\t%s\t%s\t%.2f\t%s\t%s\t%.2f\t%s\t%s' "$i" "$c" "$m" "$r" "$cc" "$mc" "$rc" "$p" "$s")
    row="$r $rc"
    if [ -n "${PY2:-}" ]; then
        read -r m2 mc2 _ _ < <(module "$PY2")
        r2=$(echo "$m2 / $c" | bc -l)
        rc2=$(echo "$mc2 / $cc" | bc -l)
        line+=$(printf '\t%s\t%.2f\t%s\t%.2f' "$m2" "$r2" "$mc2" "$rc2")
        row+=" $r2 $rc2"
    fi
    echo "$line"
    echo "$row" >>"$ratios"
done
median() {
    sort -g | awk '{ v[NR] = $1 } END { printf "%.2f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
printf 'median ratio: wall %s, CPU %s' "$(cut -d' ' -f1 "$ratios" | median)" "$(cut -d' ' -f2 "$ratios" | median)"
if [ -n "${PY2:-}" ]; then
    printf '; PY2: wall %s, CPU %s' "$(cut -d' ' -f3 "$ratios" | median)" "$(cut -d' ' -f4 "$ratios" | median)"
fi
echo
