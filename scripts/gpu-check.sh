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
# PART is one device call (each step has its own `timeout`, so a hang costs
# that step, not the call). A session lent a GPU has 15 minutes of device
# time in all, start and idle included: it runs `first`, alone.
#   first  in 420 s whatever happens, in priority order: info (nvidia-smi,
#          gpu-info), tests (the differential tests that matter most, one
#          by one, smallest first), index-chr20 (CPU libsais beside the GPU
#          hybrid, skew and ls: seconds, device memory, same bytes or not),
#          map-chr20 (4M reads, -v 0 and -v 2, GPU and 16 CPU cores: reads/s,
#          the kernel's bases/s, same SAM or not). summary.txt gets a line
#          per step as it ends: STEP SECONDS ok|FAIL: why|timeout|skipped: why.
#          Without a GPU it says so and ends; GPU_CHECK_DRY=1 runs the steps
#          anyway (on the CPU) to try the plumbing.
# The others, each at most 10 minutes, for a session with time left:
#   tests  the differential tests (tests/gpu.rs, tests/sa_algorithms.rs)
#   bench  chr20 builds on both devices, in parts, mapping 1M reads, and
#          the reads reader on the machine's 16 cores
#   scale  a 3.1 Gbp human-scale build on the GPU, then `check`
#   sanitize  the in-process device tests under compute-sanitizer's
#          memcheck: out-of-bounds and misaligned device accesses that a
#          differential test can miss when the result happens to match
# With the device tool (docs/GPU.md, "How to run the check"):
#   run(command="scripts/gpu-check.sh run first", carry=["gpu-carry"], timeout_s=480)
# then give_back unless a second call follows at once.
#
# `run first` writes summary.txt, gpu-info.txt, tests.log and chr20.log;
# `run tests` gpu-info.txt, tests.log (the differential tests, GPU
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
    cp scripts/data/make-human-scale.py "$CARRY/"
    # The test binaries name the fmalign binary by this checkout's absolute path.
    cp target/release/fmalign "$CARRY/bin/fmalign"
    strip "$CARRY/bin/fmalign"
    pwd >"$CARRY/origin"
    du -sh "$CARRY"
}

# environment: NVRTC on the library path, the kernel cache, the test
# binaries' data. Sets out, fm, work, det.
environment() {
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
    export FMALIGN_SHARED_DATA="$PWD/$CARRY/data" FMALIGN_REQUIRE_NVRTC=1
}

# setup: environment, then gpu-info.txt (tests, bench, scale, sanitize).
setup() {
    environment
    {
        date -u +"date: %Y-%m-%dT%H:%M:%SZ"
        nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
        timeout 120 "$fm" gpu-info 2>&1
    } | tee "$out/gpu-info.txt"
}

# GNU time where the machine has it, else the same two fields (%e, %M)
# from scripts/bench/time-rss.py: the GPU machine's image may lack GNU time.
if [ -x /usr/bin/time ]; then
    TIME=(/usr/bin/time)
else
    TIME=(python3 "$PWD/scripts/bench/time-rss.py")
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
        timeout 200 "${TIME[@]}" -f "%e %M" -o "$work/map.$dev.time" "$fm" map -t 16 --device "$dev" -v 0 \
            "$work/chr20.cpu.libsais.fmi" "$work/r4.fq" 2>"$det/map-$dev.log" | grep -v '^@PG' >"$work/map.$dev.sam"
        echo "map $dev: $(cat "$work/map.$dev.time") (wall s, peak RSS KB; 4M reads of 100 bases) $(grep -E 'kernel|failed' "$det/map-$dev.log" | tr '\n' ' ')" |
            tee -a "$out/bench.tsv"
    done
    { cmp -s "$work/map.cpu.sam" "$work/map.gpu.sam" && echo "map: same SAM on both devices" ||
        echo "map: SAM DIFFERS between devices"; } | tee -a "$out/bench.tsv"
    # The k-mer table on the device (the cost model: 92 -> 63 B per read base).
    timeout 200 "${TIME[@]}" -f "%e %M" -o "$work/map.k12.time" "$fm" map -t 16 --device gpu -v 0 --kmer 12 \
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

# ---------------------------------------------------------------------------
# `run first`: the one call a session with 15 minutes of device time makes.
# Four steps in priority order, each under its own `timeout`; the whole part
# ends within FIRST_BUDGET seconds (default 400, under the 420 asked of it)
# whatever happens: a step (or a test, or a build) that would start with too
# little of the budget left is skipped and says so. summary.txt gets a line
# per step as it ends ("STEP SECONDS OUTCOME: what"), so a call cut off still
# brings back what ran. Files in $OUT: summary.txt, gpu-info.txt, tests.log,
# chr20.log (4 of the 5 allowed).
# ---------------------------------------------------------------------------

now() { date +%s.%N; }
# Seconds left before the part's deadline (an integer, at least 1: never
# `timeout 0`, which is no limit at all).
left() { awk -v d="$deadline" -v t="$(now)" 'BEGIN { l = int(d - t); printf "%d", l < 1 ? 1 : l }'; }
# cap N: N, or the seconds left if fewer.
cap() {
    local l
    l=$(left)
    ((l < $1)) && echo "$l" || echo "$1"
}
# say STEP T0 OUTCOME: one summary line (STEP, seconds since T0, outcome).
say() {
    printf '%s %.1f %s\n' "$1" "$(seconds "$2" "$(now)")" "$3" | tee -a "$out/summary.txt"
}

# logged HEADER: HEADER and a command's stderr ($work/err) into chr20.log.
logged() {
    {
        echo "== $1"
        cat "$work/err"
    } >>"$out/chr20.log"
    rm -f "$work/err"
}

# no_gpu STEP T0: true, with the step's line said, when there is no GPU and
# no dry run (GPU_CHECK_DRY) asks for the steps anyway.
no_gpu() {
    [ "$gpu" = yes ] || [ -n "${GPU_CHECK_DRY:-}" ] && return 1
    say "$1" "$2" "skipped: no GPU"
}

# step_end STEP T0 BAD WHAT: the summary line of a step that ran, `ok`
# unless BAD names the outcome, saying when `--device gpu` fell back.
step_end() {
    local what=$4
    [ "$gpu" = yes ] || what="$what (no GPU: --device gpu ran on the CPU)"
    say "$1" "$2" "${3:-ok}: $what"
}

# Test names in the order they run: the steps of steps::Backend first
# (smallest inputs), then the algorithms, mapping, memory and parts.
FIRST_TESTS="gpu:device::radix_sort_matches_cpu gpu:device::scans_match_cpu
gpu:device::compact_gather_scatter_match_cpu gpu:device::maps_match_cpu
gpu:device::segmented_sort_matches_cpu gpu:device::merge_matches_cpu
gpu:device::algorithms_match_cpu gpu:device::mapping_matches_cpu
gpu:device::exact_batch_across_sub_batches_matches_cpu
gpu:device::map_device_gpu_writes_the_cpu_sam
gpu:device::device_memory_stays_within_the_plan
gpu:device::max_gpu_memory_falls_back_to_the_cpu
gpu:device::parts_sort_on_the_gpu_like_the_cpu gpu:device::index_in_parts_on_the_gpu
sa_algorithms:index_of_tiny_references sa_algorithms:index_with_holes_and_iupac_codes
sa_algorithms:index_of_many_tiny_contigs"

first_info() {
    local t0 smi cc
    t0=$(now)
    {
        date -u +"date: %Y-%m-%dT%H:%M:%SZ"
        smi=$(timeout -k 5 20 nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap \
            --format=csv,noheader 2>&1) && [ -n "$smi" ] || smi=""
        echo "nvidia-smi: ${smi:-none ($(command -v nvidia-smi >/dev/null && echo 'no device' || echo 'not installed'))}"
        cc=$(echo "$smi" | head -n 1 | awk -F', ' '{ gsub(/\./, "", $4); print $4 }')
        arch=sm_90
        [[ "$cc" =~ ^[0-9]+$ ]] && arch="sm_$cc"
        echo "gpu-info --arch $arch:"
        timeout -k 5 "$(cap 90)" "$fm" gpu-info --arch "$arch" 2>&1
        echo "gpu-info rc=$?"
    } >"$out/gpu-info.txt"
    cat "$out/gpu-info.txt"
    gpu=no
    [ -n "$smi" ] && grep -q '^device 0:' "$out/gpu-info.txt" && gpu=yes
    local what
    what="$(echo "$smi" | head -n 1)"
    what="${what:-no GPU}; $(grep -E '^(nvrtc|kernels|gpu: none)' "$out/gpu-info.txt" | tr '\n' '|' | sed 's/|$//; s/|/; /g')"
    if grep -q '^gpu-info rc=0' "$out/gpu-info.txt"; then
        say info "$t0" "ok: $what"
    elif grep -q '^gpu-info rc=124' "$out/gpu-info.txt"; then
        say info "$t0" "timeout: gpu-info; $what"
    else
        say info "$t0" "FAIL: $what"
    fi
}

first_tests() {
    local t0 end t name bin rc passed=0 failed="" skipped=0 timedout="" noskip=""
    t0=$(now)
    end=$(awk -v t="$t0" -v b="${FIRST_TESTS_S:-170}" 'BEGIN { printf "%d", t + b }')
    no_gpu tests "$t0" && return
    : >"$out/tests.log"
    for t in $FIRST_TESTS; do
        bin=${t%%:*} name=${t#*:}
        local budget
        budget=$(awk -v e="$end" -v t="$(now)" -v l="$(left)" 'BEGIN { b = e - t; if (l < b) b = l; if (b > 90) b = 90; printf "%d", b }')
        if ((budget < 10)); then
            echo "SKIPPED $name (time: ${budget} s left)" >>"$out/tests.log"
            skipped=$((skipped + 1))
            continue
        fi
        local s0
        s0=$(now)
        echo "== $bin $name (timeout $budget s)" >>"$out/tests.log"
        timeout -k 5 "$budget" "$CARRY/bin/$bin" --exact "$name" --test-threads=1 --nocapture >"$work/test.log" 2>&1
        rc=$?
        cat "$work/test.log" >>"$out/tests.log"
        echo "rc=$rc $name ($(seconds "$s0" "$(now)") s)" >>"$out/tests.log"
        # A device check that found no GPU passes with a SKIPPED notice:
        # counted apart, never as passed.
        ((rc == 0)) && grep -q 'SKIPPED' "$work/test.log" && rc=skip
        case $rc in
        skip) noskip="$noskip ${name##*::}" ;;
        0) passed=$((passed + 1)) ;;
        124) timedout="$timedout ${name##*::}" ;;
        *) failed="$failed ${name##*::}" ;;
        esac
    done
    local n
    n=$(echo $FIRST_TESTS | wc -w)
    local what="$passed of $n passed"
    [ -n "$failed" ] && what="$what; failed:$failed"
    [ -n "$timedout" ] && what="$what; timed out:$timedout"
    ((skipped > 0)) && what="$what; $skipped not started (time)"
    [ -n "$noskip" ] && what="$what; SKIPPED for want of a GPU:$noskip"
    if [ -n "$failed" ]; then
        say tests "$t0" "FAIL: $what"
    elif [ -n "$timedout" ]; then
        say tests "$t0" "timeout: $what"
    elif ((skipped > 0)) || [ -n "$noskip" ]; then
        say tests "$t0" "skipped: $what"
    else
        say tests "$t0" "ok: $what"
    fi
}

# build NAME DEVICE SA: one chr20 index build (16 threads), a line of
# chr20.log; sets b_wall, b_same, b_rc.
first_build() {
    local dev=$1 sa=$2 budget=$3 idx="$work/chr20.$1.$2.fmi" s0
    s0=$(now)
    timeout -k 5 "$budget" "${TIME[@]}" -f "%M" -o "$work/rss" "$fm" index -t 16 --device "$dev" \
        --sa "$sa" --stats -p "$idx" "$work/chr20.fa" 2>"$work/err"
    b_rc=$?
    b_wall=$(seconds "$s0" "$(now)")
    b_same=ref
    if [ "$dev.$sa" != cpu.libsais ]; then
        cmp -s "$idx" "$work/chr20.cpu.libsais.fmi" && b_same=same || b_same=DIFFERENT
    fi
    b_note=$(grep -E 'device memory|instead|fell back|falling back|notice|error' "$work/err" | tr '\n' ' ')
    logged "index chr20 --device $dev --sa $sa: rc=$b_rc, $b_wall s, peak RSS $(cat "$work/rss" 2>/dev/null) KB, bytes $b_same"
}

first_index() {
    local t0 end what="" bad="" sa
    t0=$(now)
    end=$(awk -v t="$t0" -v b="${FIRST_INDEX_S:-150}" 'BEGIN { printf "%d", t + b }')
    step_left() { awk -v e="$end" -v t="$(now)" -v l="$(left)" 'BEGIN { b = int(e - t); if (l < b) b = l; printf "%d", b < 1 ? 1 : b }'; }
    no_gpu index-chr20 "$t0" && return
    if (($(step_left) < 45)); then
        say index-chr20 "$t0" "skipped: $(step_left) s left for the step, 45 needed"
        return
    fi
    timeout -k 5 "$(cap 60)" gzip -dc "$CARRY/data/human_GRCh37_chr20.fa.gz" >"$work/chr20.fa"
    first_build cpu libsais "$(($(step_left) - 20))"
    if ((b_rc != 0)); then
        say index-chr20 "$t0" "FAIL: the CPU libsais build (rc $b_rc after $b_wall s)"
        return
    fi
    what="cpu libsais ${b_wall} s"
    local first_gpu=""
    for sa in hybrid skew ls; do
        local l
        l=$(step_left)
        # Skew and ls only where the hybrid's time twice over is left.
        if [ -n "$first_gpu" ] && awk -v l="$l" -v w="$first_gpu" 'BEGIN { exit !(l < 2 * w + 5) }'; then
            what="$what; $sa not run (time: $l s left)"
            continue
        fi
        if ((l < 10)); then
            what="$what; $sa not run (time)"
            continue
        fi
        first_build gpu "$sa" "$l"
        [ -z "$first_gpu" ] && first_gpu=$b_wall
        local peak
        peak=$(grep -o 'device memory: peak .*' "$out/chr20.log" | tail -n 1)
        if ((b_rc == 124)); then
            what="$what; gpu $sa timeout after $b_wall s"
            bad=timeout
        elif ((b_rc != 0)); then
            what="$what; gpu $sa rc $b_rc"
            bad=FAIL
        else
            what="$what; gpu $sa ${b_wall} s, bytes $b_same${b_note:+ [$b_note]}"
            [ "$b_same" = same ] || bad=FAIL
        fi
    done
    step_end index-chr20 "$t0" "$bad" "$what"
}

# Reads for map-chr20: N reads of 100 bases from chr20 at random places
# without N, half of them reverse-complemented, with 1 substitution in 200
# bases (so -v 2 has work and exact search still maps most). numpy where the
# machine has it (the GPU image does), else plain Python, 1M reads written
# N/1M times.
first_reads() {
    cat >"$work/reads.py" <<'PY'
import random, sys
fa, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
seq = "".join(l.strip() for l in open(fa) if not l.startswith(">")).upper()
L = 100
try:
    import numpy as np
except ImportError:
    np = None
with open(out, "wb") as f:
    if np is not None:
        t = np.frombuffer(seq.encode(), dtype=np.uint8)
        bad = np.concatenate(([0], np.cumsum(t == ord("N"))))
        comp = np.zeros(256, dtype=np.uint8)
        for a, b in zip(b"ACGT", b"TGCA"):
            comp[a] = b
        rng = np.random.default_rng(11)
        done, chunk = 0, 500_000
        while done < n:
            m = min(chunk, n - done)
            pos = rng.integers(0, len(t) - L, size=3 * m)
            pos = pos[bad[pos + L] == bad[pos]][:m]
            r = t[pos[:, None] + np.arange(L)]
            sub = rng.random(r.shape) < 0.005
            r[sub] = np.frombuffer(b"ACGT", dtype=np.uint8)[rng.integers(0, 4, size=sub.sum())]
            rev = rng.random(len(pos)) < 0.5
            r[rev] = comp[r[rev][:, ::-1]]
            # Fixed-width records, "@r%010d\nSEQ\n+\nQUAL\n", built as bytes.
            k = len(pos)
            rec = np.empty((k, 17 + 2 * L), dtype=np.uint8)
            rec[:, 0:2] = np.frombuffer(b"@r", dtype=np.uint8)
            ids = done + np.arange(k, dtype=np.int64)
            for d in range(10):
                rec[:, 11 - d] = ord("0") + (ids // 10**d) % 10
            rec[:, 12] = ord("\n")
            rec[:, 13:13 + L] = r
            rec[:, 13 + L:16 + L] = np.frombuffer(b"\n+\n", dtype=np.uint8)
            rec[:, 16 + L:16 + 2 * L] = ord("I")
            rec[:, 16 + 2 * L] = ord("\n")
            f.write(rec.tobytes())
            done += k
    else:
        random.seed(11)
        comp = str.maketrans("ACGT", "TGCA")
        recs = []
        while len(recs) < min(n, 1_000_000):
            p = random.randrange(len(seq) - L)
            s = seq[p:p + L]
            if "N" in s:
                continue
            s = "".join(random.choice("ACGT") if random.random() < 0.005 else c for c in s)
            if random.random() < 0.5:
                s = s.translate(comp)[::-1]
            recs.append(s)
        q = "I" * L
        for k in range(0, n, len(recs)):
            f.write("".join(f"@r{k + i}\n{s}\n+\n{q}\n" for i, s in enumerate(recs[: n - k])).encode())
PY
    timeout -k 5 "$2" python3 "$work/reads.py" "$work/chr20.fa" "$work/reads.fq" "$1"
}

# map MODE DEVICE BUDGET: map the reads; sets m_rc, m_wall, m_kernel.
first_map() {
    local mode=$1 dev=$2 budget=$3 s0
    s0=$(now)
    timeout -k 5 "$budget" "$fm" map -t 16 --device "$dev" -v "$mode" \
        "$work/chr20.cpu.libsais.fmi" "$work/reads.fq" 2>"$work/err" | grep -v '^@PG' >"$work/map.$mode.$dev.sam"
    m_rc=${PIPESTATUS[0]}
    m_wall=$(seconds "$s0" "$(now)")
    m_kernel=$(grep -o '[0-9.]* G bases/s' "$work/err" | tail -n 1)
    logged "map -v $mode --device $dev ($reads reads): rc=$m_rc, $m_wall s"
}

first_map_step() {
    local t0 end what="" bad="" mode
    t0=$(now)
    end=$(left)
    no_gpu map-chr20 "$t0" && return
    if [ ! -s "$work/chr20.cpu.libsais.fmi" ]; then
        say map-chr20 "$t0" "skipped: no chr20 index (index-chr20 did not build it)"
        return
    fi
    if ((end < 40)); then
        say map-chr20 "$t0" "skipped: $end s left of the part, 40 needed"
        return
    fi
    reads=${FIRST_READS:-4000000}
    first_reads "$reads" "$(cap 90)"
    if [ ! -s "$work/reads.fq" ]; then
        say map-chr20 "$t0" "FAIL: the reads were not made"
        return
    fi
    reads=$(($(wc -l <"$work/reads.fq") / 4))
    what="$reads reads of 100 bases"
    for mode in 0 2; do
        local l gw
        l=$(left)
        if ((l < 20)); then
            what="$what; -v $mode not run (time: $l s left)"
            bad=${bad:-skipped}
            continue
        fi
        # The GPU first, with two thirds of what is left at most.
        first_map "$mode" gpu "$((l * 2 / 3))"
        gw=$m_wall
        local grc=$m_rc gk=$m_kernel
        l=$(left)
        if ((grc != 0)); then
            what="$what; -v $mode gpu rc $grc after $gw s"
            bad=FAIL
            continue
        fi
        if ((l < 5)); then
            what="$what; -v $mode gpu $gw s (${gk:-no kernel figure}), cpu not run (time)"
            bad=${bad:-skipped}
            continue
        fi
        first_map "$mode" cpu "$l"
        if ((m_rc != 0)); then
            what="$what; -v $mode gpu $gw s (${gk:-no kernel figure}), cpu rc $m_rc after $m_wall s"
            bad=${bad:-timeout}
            continue
        fi
        local same
        if cmp -s "$work/map.$mode.gpu.sam" "$work/map.$mode.cpu.sam"; then
            same="same SAM"
        else
            same="SAM DIFFERS"
            bad=FAIL
            {
                echo "== first differences, -v $mode (gpu <, cpu >)"
                diff "$work/map.$mode.gpu.sam" "$work/map.$mode.cpu.sam" | head -n 20
            } >>"$out/chr20.log"
        fi
        what="$what; -v $mode gpu $gw s = $(awk -v n="$reads" -v s="$gw" 'BEGIN { printf "%.0f", n / s }') reads/s (kernel ${gk:-no figure}), cpu -t 16 $m_wall s = $(awk -v n="$reads" -v s="$m_wall" 'BEGIN { printf "%.0f", n / s }') reads/s, $same"
        rm -f "$work/map.$mode.gpu.sam" "$work/map.$mode.cpu.sam"
    done
    step_end map-chr20 "$t0" "$bad" "$what"
}

run_first() {
    local t0
    t0=$(now)
    deadline=$(awk -v t="$t0" -v b="${FIRST_BUDGET:-400}" 'BEGIN { printf "%.3f", t + b }')
    : >"$out/summary.txt"
    : >"$out/chr20.log"
    first_info
    first_tests
    first_index
    first_map_step
    echo "first: $(seconds "$t0" "$(now)") s in all" | tee -a "$out/summary.txt"
    rm -rf "$work/chr20.fa" "$work/reads.fq" "$work"/*.fmi
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
    first)
        environment
        run_first
        ;;
    tests | bench | scale | sanitize)
        setup
        "run_$2"
        ;;
    *)
        echo "usage: scripts/gpu-check.sh run first|tests|bench|scale|sanitize (one device call each; first alone fits 15 minutes of device time)" >&2
        exit 2
        ;;
    esac
    ;;
*)
    echo "usage: scripts/gpu-check.sh prepare | run first|tests|bench|scale|sanitize" >&2
    exit 2
    ;;
esac
