#!/usr/bin/env bash
# scripts/check/fuzz.sh: coverage-guided fuzzing of fmalign's readers and formatter with
# cargo fuzz (libFuzzer; stable Rust: no sanitizer, `-s none`), one target
# after the other, SECONDS each (default 60):
#
#   cargo fuzz run -s none -O TARGET fuzz/corpus/TARGET fuzz/seeds/TARGET -- -max_total_time=SECONDS
#
# Targets: fasta, fastq, index, sam (bodies in fuzz/harness.rs). New inputs go
# to fuzz/corpus/TARGET (not committed); a crash is saved under
# fuzz/artifacts/TARGET and the script stops: copy the file to
# test_data/fuzz/TARGET (tests/fuzz_replay.rs replays it) and fix the bug.
# The last libFuzzer status line per target (executions, coverage, corpus) is
# printed at the end; logs in bench-out/fuzz/TARGET.log.
#
# Usage: scripts/check/fuzz.sh [TARGET...]      Environment: SECONDS_EACH (60)
# Needs: cargo-fuzz (`cargo install cargo-fuzz`).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
each=${SECONDS_EACH:-60}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fasta fastq index sam)
mkdir -p bench-out/fuzz
for t in "${targets[@]}"; do
    mkdir -p "fuzz/corpus/$t"
    (cd fuzz && cargo fuzz run -s none -O "$t" "corpus/$t" "seeds/$t" -- \
        -max_total_time="$each" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1) \
        >"bench-out/fuzz/$t.log" 2>&1 || { echo "$t: FAILED, see bench-out/fuzz/$t.log"; tail -n 30 "bench-out/fuzz/$t.log"; exit 1; }
    printf '%s: %s\n' "$t" "$(grep -E '^#[0-9]+' "bench-out/fuzz/$t.log" | tail -n 1)"
    grep -E '^stat::(number_of_executed_units|peak_rss_mb|new_units_added)' "bench-out/fuzz/$t.log" | sed "s/^/  /"
done
