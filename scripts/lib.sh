# Sourced by the scripts under scripts/ (bench/, check/): what they share.
#
#   source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
#
# - the working directory becomes the repository root ($ROOT), so paths such
#   as target/release/fmalign and scripts/plot/speed.py work from anywhere;
# - DATA: the shared data folder (FMALIGN_DATA, else DATA, else
#   $ROOT/../shared/data; its README says what each file is);
# - die MESSAGE: the script's name and the message on stderr, exit 1;
# - need TOOL...: die unless every TOOL is on the PATH (or an executable path);
# - fmalign_binary [DEFAULT]: $FMALIGN, else DEFAULT (target/release/fmalign),
#   as an absolute path; `cargo build --release` first when it is the release
#   default and missing.
# Settings of one script (WORK, THREADS, read counts) stay in its header.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1
DATA=${FMALIGN_DATA:-${DATA:-$ROOT/../shared/data}}

die() {
    echo "$(basename "$0"): $*" >&2
    exit 1
}

need() {
    local t
    for t in "$@"; do
        command -v "$t" >/dev/null || [[ -x $t ]] || die "$t not found"
    done
}

fmalign_binary() {
    local default=${1:-target/release/fmalign}
    local bin=${FMALIGN:-$default}
    if [[ ! -x $bin && $bin == target/release/fmalign ]]; then
        cargo build --release >&2 || die "cargo build --release failed"
    fi
    [[ -x $bin ]] || die "fmalign binary $bin not found (cargo build --release)"
    readlink -f "$bin"
}
