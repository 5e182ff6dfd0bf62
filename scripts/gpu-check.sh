#!/usr/bin/env bash
# GPU check: every CUDA step and algorithm against the CPU backend, then the
# GPU benchmarks. Two halves, because the GPU machine has no cargo:
#
#   scripts/gpu-check.sh prepare   # here: release binary, test binaries and
#                                  # data into gpu-carry/ (git-ignored)
#   scripts/gpu-check.sh run PART  # there, from the repository root, with
#                                  # gpu-carry carried (stripped binaries: the
#                                  # device tool carries 64 MiB at most);
#                                  # results under $OUT (default ./gpu-out)
#
# PART is one device call of at most 10 minutes (each step has its own
# `timeout`, so a hang costs that step, not the call); the three take 30
# minutes at most, the device tool's whole budget:
#   tests  the differential tests (tests/gpu.rs, tests/sa_algorithms.rs)
#   bench  chr20 builds on both devices, in parts, mapping 1M reads, and
#          the reads reader on the machine's 16 cores
#   scale  a 3.1 Gbp human-scale build on the GPU, then `check`
#   sanitize  (when device time is left) the in-process device tests under
#          compute-sanitizer's memcheck: out-of-bounds and misaligned device
#          accesses that a differential test can miss when the result
#          happens to match
# With the device tool, one call each, tests first (the most valuable):
#   run(command="scripts/gpu-check.sh run tests", carry=["gpu-carry"], timeout_s=600)
#
# `run tests` writes gpu-info.txt, tests.log (the differential tests, GPU
# against CPU, the device memory peaks against the plan, the index builds on
# both devices); `run bench` bench.tsv (index builds: device, algorithm, wall
# seconds, peak RSS, identical bytes or not, device memory peak) and
# bench-details.tgz (rounds-*.tsv, --stats per round; map-*.log, with the
# search kernel's G bases/s); `run scale` human-scale.txt and
# scale-details.tgz; `run sanitize` sanitize.log; each a summary.txt. At most
# 5 files a part: the device tool brings back 8.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
CARRY=gpu-carry

prepare() {
    set -e
    cargo build --release
    local log
    log=$(mktemp)
    cargo test --release --no-run --test gpu --test sa_algorithms 2>&1 | tee "$log"
    cargo bench --no-run --bench fastq_read 2>&1 | tee -a "$log"
    rm -rf "$CARRY"
    mkdir -p "$CARRY/bin" "$CARRY/data"
    # "Executable unittest tests/gpu.rs (target/release/deps/gpu-HASH)"
    for t in gpu sa_algorithms; do
        local exe
        exe=$(sed -n "s/.*Executable .*tests\/$t\.rs (\(.*\))/\1/p" "$log" | tail -n 1)
        cp "$exe" "$CARRY/bin/$t"
        strip --strip-debug "$CARRY/bin/$t" || true
    done
    # The reads reader on 16 cores (benches/fastq_read.rs; no GPU needed).
    exe=$(sed -n "s/.*Executable .*benches\/fastq_read\.rs (\(.*\))/\1/p" "$log" | tail -n 1)
    cp "$exe" "$CARRY/bin/fastq_read"
    strip "$CARRY/bin/fastq_read" || true
    rm -f "$log"
    local shared=../shared/data
    cp "$shared/lambda_virus.fa" "$shared/human_chrM_NC_012920.fa" \
        "$shared/ecoli_K12_MG1655.fa.gz" "$shared/human_GRCh37_chr20.fa.gz" "$CARRY/data/"
    cp scripts/make-human-scale.py "$CARRY/"
    # The test binaries name the fmalign binary by this checkout's absolute path.
    cp target/release/fmalign "$CARRY/bin/fmalign"
    strip "$CARRY/bin/fmalign"
    pwd >"$CARRY/origin"
    du -sh "$CARRY"
}

# setup: environment, NVRTC, gpu-info. Sets out, fm, work.
setup() {
    out=${OUT:-gpu-out}
    mkdir -p "$out"
    fm="$PWD/$CARRY/bin/fmalign"
    work=/tmp/gpu-check
    mkdir -p "$work"
    local origin
    origin=$(cat "$CARRY/origin")
    if [ ! -e "$origin/target/release/fmalign" ]; then
        mkdir -p "$origin/target/release"
        ln -sf "$fm" "$origin/target/release/fmalign"
    fi
    # NVRTC: the CUDA image has it; look in the usual places.
    for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib \
        "$(python3 -c 'import nvidia.cuda_nvrtc, os; print(os.path.dirname(nvidia.cuda_nvrtc.__file__) + "/lib")' 2>/dev/null)" \
        "$(python3 -c 'import nvidia, os; print(os.path.dirname(nvidia.__path__[0]) + "/nvidia/cu13/lib")' 2>/dev/null)"; do
        if [ -n "$d" ] && ls "$d"/libnvrtc.so* >/dev/null 2>&1; then
            export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
            break
        fi
    done
    # The device tool brings back at most 8 files from $OUT: the kernel
    # cache, --stats rounds and map logs stay in $work ($det), and each part
    # packs $det into one archive there at its end.
    export FMALIGN_CACHE="$work/kernel-cache"
    det="$work/details"
    rm -rf "$det"
    mkdir -p "$det"
    {
        date -u +"date: %Y-%m-%dT%H:%M:%SZ"
        nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
        "$fm" gpu-info 2>&1
    } | tee "$out/gpu-info.txt"

    export FMALIGN_SHARED_DATA="$PWD/$CARRY/data" FMALIGN_REQUIRE_NVRTC=1
}

# GNU time where the machine has it, else the same two fields (%e, %M)
# from scripts/time-rss.py: the GPU machine's image may lack GNU time.
if [ -x /usr/bin/time ]; then
    TIME=(/usr/bin/time)
else
    TIME=(python3 "$PWD/scripts/time-rss.py")
fi

# seconds T0 T1: T1 - T0 with three decimals (no bc needed).
seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

run_tests() {
    {
        echo "== tests/gpu.rs (every step and algorithm, GPU against CPU)"
        timeout 330 "$CARRY/bin/gpu" --test-threads=1 --nocapture 2>&1
        echo "rc=$?"
        echo "== tests/sa_algorithms.rs (index bytes on both devices)"
        timeout 200 "$CARRY/bin/sa_algorithms" --test-threads=4 2>&1
        echo "rc=$?"
    } | tee "$out/tests.log"
    {
        echo "== summary (tests)"
        cat "$out/gpu-info.txt"
        grep -E '^(test result|rc=|SKIPPED|test .* FAILED|device peak)' "$out/tests.log"
    } >"$out/summary.txt"
    cat "$out/summary.txt"
}

# bench GENOME FASTA DEVICE SA: one index build, a row of bench.tsv.
bench() {
    local g=$1 fa=$2 dev=$3 sa=$4
    local idx="$work/$g.$dev.$sa.fmi"
    local t0 t1 line
    t0=$(date +%s.%N)
    timeout "${STEP_TIMEOUT:-240}" "${TIME[@]}" -f "%M" -o "$work/rss" "$fm" index -t 16 \
        --device "$dev" --sa "$sa" --stats -p "$idx" "$fa" 2>"$work/err"
    t1=$(date +%s.%N)
    grep '^sa' "$work/err" >"$det/rounds-$g-$dev-$sa.tsv" || true
    line=$(grep -E 'suffix array|device memory|instead' "$work/err" | tr '\n' ' ')
    local same=ref
    if [ -e "$work/$g.cpu.libsais.fmi" ] && [ "$idx" != "$work/$g.cpu.libsais.fmi" ]; then
        cmp -s "$idx" "$work/$g.cpu.libsais.fmi" && same=yes || same=NO
    fi
    printf '%s\t%s\t%s\t%.3f\t%s\t%s\t%s\n' "$g" "$dev" "$sa" \
        "$(seconds "$t0" "$t1")" "$(cat "$work/rss" 2>/dev/null)" "$same" "$line" | tee -a "$out/bench.tsv"
}

run_bench() {
    gzip -dc "$CARRY/data/human_GRCh37_chr20.fa.gz" >"$work/chr20.fa"
    printf 'genome\tdevice\tsa\twall_s\tpeak_rss_kb\tsame_as_cpu_libsais\tlog\n' >"$out/bench.tsv"
    bench chr20 "$work/chr20.fa" cpu libsais
    for sa in hybrid skew ls; do bench chr20 "$work/chr20.fa" gpu "$sa"; done
    bench chr20 "$work/chr20.fa" gpu hybrid # warm kernel cache, second run
    bench chr20 "$work/chr20.fa" cpu hybrid
    # The build in parts (2 bytes per base): the parts sorted on the CPU,
    # then on the GPU (sa::partsort); both must give libsais' bytes.
    for dev in cpu gpu; do
        local idx="$work/chr20.parts.$dev.fmi" t0 t1 same
        t0=$(date +%s.%N)
        timeout 150 "${TIME[@]}" -f "%M" -o "$work/rss" "$fm" index -t 16 --device "$dev" \
            --max-memory 120M -p "$idx" "$work/chr20.fa" 2>"$work/err"
        t1=$(date +%s.%N)
        cmp -s "$idx" "$work/chr20.cpu.libsais.fmi" && same=yes || same=NO
        printf '%s\t%s\t%s\t%.3f\t%s\t%s\t%s\n' chr20-parts-120M "$dev" blockwise \
            "$(seconds "$t0" "$t1")" "$(cat "$work/rss")" "$same" \
            "$(grep -E 'in parts:|parts sorted|sorting the parts' "$work/err" | tr '\n' ' ')" | tee -a "$out/bench.tsv"
    done
    # Mapping: the same SAM on both devices, and the times.
    if command -v wgsim >/dev/null; then
        wgsim -S 11 -N 1000000 -1 100 -2 100 -e 0.01 -r 0 -R 0 "$work/chr20.fa" "$work/r1.fq" /dev/null >/dev/null 2>&1
    else
        python3 - "$work/chr20.fa" "$work/r1.fq" <<'PY'
import random, sys
seq = "".join(l.strip() for l in open(sys.argv[1]) if not l.startswith(">")).upper()
random.seed(11)
with open(sys.argv[2], "w") as f:
    for q in range(1000000):
        p = random.randrange(len(seq) - 100)
        f.write(f"@r{q}\n{seq[p:p + 100]}\n+\n{'I' * 100}\n")
PY
    fi
    # Four copies of the reads: 4M reads, 400 Mbp, two GPU batches (-K 200M).
    for _ in 1 2 3 4; do cat "$work/r1.fq"; done >"$work/r4.fq"
    for dev in cpu gpu; do
        timeout 200 "${TIME[@]}" -f "%e %M" -o "$work/map.$dev.time" "$fm" map -t 16 --device "$dev" \
            "$work/chr20.cpu.libsais.fmi" "$work/r4.fq" 2>"$det/map-$dev.log" | grep -v '^@PG' >"$work/map.$dev.sam"
        echo "map $dev: $(cat "$work/map.$dev.time") (wall s, peak RSS KB; 4M reads of 100 bases) $(grep -E 'kernel|failed' "$det/map-$dev.log" | tr '\n' ' ')" |
            tee -a "$out/bench.tsv"
    done
    { cmp -s "$work/map.cpu.sam" "$work/map.gpu.sam" && echo "map: same SAM on both devices" ||
        echo "map: SAM DIFFERS between devices"; } | tee -a "$out/bench.tsv"
    # The k-mer table on the device (the cost model: 92 -> 63 B per read base).
    timeout 200 "${TIME[@]}" -f "%e %M" -o "$work/map.k12.time" "$fm" map -t 16 --device gpu --kmer 12 \
        "$work/chr20.cpu.libsais.fmi" "$work/r4.fq" 2>"$det/map-gpu-kmer12.log" | grep -v '^@PG' >"$work/map.k12.sam"
    echo "map gpu --kmer 12: $(cat "$work/map.k12.time") $(grep -E 'kernel|failed' "$det/map-gpu-kmer12.log" | tr '\n' ' ') $(cmp -s "$work/map.cpu.sam" "$work/map.k12.sam" && echo same SAM || echo SAM DIFFERS)" |
        tee -a "$out/bench.tsv"
    # -v 2 (seeds searched, located and verified on the device), 1M reads.
    for dev in cpu gpu; do
        timeout 120 "${TIME[@]}" -f "%e %M" -o "$work/map2.$dev.time" "$fm" map -t 16 --device "$dev" -v 2 \
            "$work/chr20.cpu.libsais.fmi" "$work/r1.fq" 2>"$det/map-v2-$dev.log" | grep -v '^@PG' >"$work/map2.$dev.sam"
        echo "map -v 2 $dev: $(cat "$work/map2.$dev.time") (wall s, peak RSS KB; 1M reads) $(grep -E 'kernel|failed' "$det/map-v2-$dev.log" | tr '\n' ' ')" |
            tee -a "$out/bench.tsv"
    done
    { cmp -s "$work/map2.cpu.sam" "$work/map2.gpu.sam" && echo "map -v 2: same SAM on both devices" ||
        echo "map -v 2: SAM DIFFERS between devices"; } | tee -a "$out/bench.tsv"
    # Last (no GPU needed): the reads reader with 1, 2, 4 and 16 threads
    # (plain, gzip, BGZF; benches/fastq_read.rs).
    timeout 120 "$CARRY/bin/fastq_read" 2>&1 | sed 's/^/reader: /' | tee -a "$out/bench.tsv"
    tar czf "$out/bench-details.tgz" -C "$det" .
    {
        echo "== summary (bench)"
        cat "$out/gpu-info.txt"
        cat "$out/bench.tsv"
    } >"$out/summary.txt"
    cat "$out/summary.txt"
}

run_scale() {
    gzip -dc "$CARRY/data/human_GRCh37_chr20.fa.gz" >"$work/chr20.fa"
    printf 'genome\tdevice\tsa\twall_s\tpeak_rss_kb\tsame_as_cpu_libsais\tlog\n' >"$out/bench.tsv"
    timeout 200 python3 "$CARRY/make-human-scale.py" "$work/chr20.fa" 3100000000 "$work/human-scale.fa" \
        >"$out/human-scale.txt" 2>&1
    STEP_TIMEOUT=270 bench human-scale "$work/human-scale.fa" gpu hybrid
    timeout 100 "$fm" check "$work/human-scale.gpu.hybrid.fmi" >>"$out/human-scale.txt" 2>&1
    echo "check rc=$?" >>"$out/human-scale.txt"
    tar czf "$out/scale-details.tgz" -C "$det" .
    {
        echo "== summary (scale)"
        cat "$out/gpu-info.txt"
        cat "$out/bench.tsv" "$out/human-scale.txt"
    } >"$out/summary.txt"
    cat "$out/summary.txt"
}

# The device tests that run in-process (no fmalign child), smallest first.
SANITIZED="radix_sort_matches_cpu scans_match_cpu compact_gather_scatter_match_cpu
maps_match_cpu segmented_sort_matches_cpu merge_matches_cpu mapping_matches_cpu
exact_batch_across_sub_batches_matches_cpu algorithms_match_cpu"

run_sanitize() {
    local cs t rc
    cs=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
    if [ -z "$cs" ]; then
        echo "SKIPPED sanitize: compute-sanitizer not found" | tee "$out/summary.txt"
        return
    fi
    SECONDS=0
    {
        for t in $SANITIZED; do
            # The call's 10 minutes: no test is started after 7.
            if ((SECONDS > 420)); then
                echo "SKIPPED device::$t (time)"
                continue
            fi
            echo "== memcheck device::$t"
            timeout 150 "$cs" --tool memcheck --error-exitcode 9 --print-limit 20 \
                "$CARRY/bin/gpu" --test-threads=1 --exact "device::$t" 2>&1 | tail -n 40
            rc=$?
            echo "rc=$rc device::$t (${SECONDS} s)"
        done
    } | tee "$out/sanitize.log"
    {
        echo "== summary (sanitize)"
        cat "$out/gpu-info.txt"
        grep -E '^(rc=|SKIPPED|test result|=========.*ERROR SUMMARY)' "$out/sanitize.log"
    } >"$out/summary.txt"
    cat "$out/summary.txt"
}

case "${1:-}" in
prepare) prepare ;;
run)
    case "${2:-}" in
    tests | bench | scale | sanitize)
        setup
        "run_$2"
        ;;
    *)
        echo "usage: scripts/gpu-check.sh run tests|bench|scale|sanitize (one device call each)" >&2
        exit 2
        ;;
    esac
    ;;
*)
    echo "usage: scripts/gpu-check.sh prepare | run tests|bench|scale|sanitize" >&2
    exit 2
    ;;
esac
