#!/usr/bin/env bash
# scripts/check/ptxas.sh: the static check of the kernels that needs no GPU.
#
# `fmalign gpu-info --ptx-dir` writes the PTX NVRTC makes of every module of
# gpu/; ptxas (the assembler the driver's JIT runs; from PyPI's
# nvidia-cuda-nvcc wheel) assembles each for ARCH with -v, and this script
# tabulates what it reports per kernel: registers, stack frame, spill stores
# and loads, static shared memory, and the occupancy those allow on an
# sm_90 SM with the 256-thread blocks every launch uses (gpu/prelude.cu
# THREADS). It fails when a module does not assemble or a kernel spills.
#
# Usage: scripts/check/ptxas.sh [OUT.tsv]
# Environment: FMALIGN (default target/debug/fmalign), ARCH (sm_90),
#   PTXAS (default: the nvidia-cuda-nvcc==13.0.88 wheel, installed under
#   ~/.cache/fmalign-ci when missing), and NVRTC on LD_LIBRARY_PATH (as in
#   .ci/run). PTXAS_FLAGS: extra ptxas options (e.g. --maxrregcount 24
#   makes kernels spill: the check then fails, which shows it can).
# Prints one line per kernel, then a summary line:
#   ptxas: 95 kernels assemble for sm_90; 0 spill; registers at most 63; ...
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
FMALIGN=${FMALIGN:-target/debug/fmalign}
ARCH=${ARCH:-sm_90}
out=${1:-$(mktemp)}

if [ -z "${PTXAS:-}" ]; then
    dir=${FMALIGN_NVCC_DIR:-$HOME/.cache/fmalign-ci/nvidia-cuda-nvcc-13.0.88}
    PTXAS=$dir/nvidia/cu13/bin/ptxas
    if [ ! -x "$PTXAS" ]; then
        python3 -m pip install --quiet --disable-pip-version-check --no-deps \
            --target "$dir" nvidia-cuda-nvcc==13.0.88 </dev/null
    fi
fi
"$PTXAS" --version | tail -n 1

ptx=$(mktemp -d)
log=$(mktemp)
trap 'rm -rf "$ptx" "$log"' EXIT
"$FMALIGN" gpu-info --arch "$ARCH" --ptx-dir "$ptx" >/dev/null
modules=0
for f in "$ptx"/*.ptx; do
    m=$(basename "$f" .ptx)
    # shellcheck disable=SC2086 # PTXAS_FLAGS: extra options, word-split
    if ! "$PTXAS" -v --gpu-name "$ARCH" ${PTXAS_FLAGS:-} -o /dev/null "$f" >"$log.$m" 2>&1; then
        cat "$log.$m"
        echo "ptxas-check: gpu/$m.cu does not assemble for $ARCH" >&2
        exit 1
    fi
    sed "s/^/$m\t/" "$log.$m" >>"$log"
    rm -f "$log.$m"
    modules=$((modules + 1))
done

# ptxas -v prints, per entry:
#   ptxas info    : Compiling entry function 'K' for 'sm_90'
#       N bytes stack frame, N bytes spill stores, N bytes spill loads
#   ptxas info    : Used N registers, used N barriers, N bytes smem, ...
# Occupancy on sm_90 for 256-thread blocks: 64K registers per SM allocated
# per warp in units of 256, 228 KiB of shared memory per SM with 1 KiB
# reserved per block, at most 2048 threads and 32 blocks per SM.
awk -F'\t' -v arch="$ARCH" -v modules="$modules" '
function flush() {
    if (k == "") return
    regunit = int((regs * 32 + 255) / 256) * 256
    byregs = regunit ? int(int(65536 / regunit) / 8) : 8
    bysmem = int(233472 / (smem + 1024))
    blocks = 8
    if (byregs < blocks) blocks = byregs
    if (bysmem < blocks) blocks = bysmem
    occ = blocks * 8 / 64
    printf "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%.0f%%\n", kmod, k, regs, stack, sst, sld, smem, occ * 100 > out
    n++
    if (regs > maxregs) { maxregs = regs; maxk = k }
    if (stack > 0) { frames++; framed = framed (framed == "" ? "" : ",") k }
    if (sst + sld > 0) { spills++; spilled = spilled " " k }
    if (occ < 1) low++
    k = ""
}
BEGIN { out = "/dev/stdout"; print "module\tkernel\tregisters\tstack_bytes\tspill_stores\tspill_loads\tsmem_bytes\toccupancy" > out }
{
    mod = $1; line = $2
    if (line ~ /Compiling entry function/) {
        flush()
        kmod = mod
        k = line; sub(/.*function .\047?/, "", k); sub(/\047.*/, "", k)
        regs = 0; stack = 0; sst = 0; sld = 0; smem = 0
    } else if (line ~ /bytes stack frame/) {
        nw = split(line, w, /[ ,]+/)
        for (i = 1; i + 3 <= nw; i++) {
            if (w[i + 1] == "bytes" && w[i + 2] == "stack") stack = w[i]
            if (w[i + 1] == "bytes" && w[i + 3] == "stores") sst = w[i]
            if (w[i + 1] == "bytes" && w[i + 3] == "loads") sld = w[i]
        }
    } else if (line ~ /Used [0-9]+ registers/) {
        r = line; sub(/.*Used /, "", r); sub(/ registers.*/, "", r); regs = r + 0
        if (line ~ /bytes smem/) { s = line; sub(/ bytes smem.*/, "", s); sub(/.* /, "", s); smem = s + 0 }
    }
}
END {
    flush()
    printf "ptxas: %d kernels in %d modules assemble for %s; %d spill%s; registers at most %d (%s); %d with a stack frame (%s); %d below full occupancy\n",
        n, modules, arch, spills, spilled, maxregs, maxk, frames, framed, low > "/dev/stderr"
    if (n == 0) exit 2
    if (spills > 0) exit 1
}' "$log" >"$out" || { rc=$?; column -t -s$'\t' "$out" >&2 || cat "$out" >&2; echo "ptxas-check: a kernel spills registers (or none assembled)" >&2; exit "$rc"; }
column -t -s$'\t' "$out" 2>/dev/null || cat "$out"
