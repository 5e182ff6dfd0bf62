# Sourced by the scripts under scripts/ (bench/, check/): what they share.
#
#   source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
#
# - the working directory becomes the repository root ($ROOT), so paths such
#   as target/release/fmalign and scripts/plot/speed.py work from anywhere;
#   SELF is the sourcing script's absolute path (for its --help);
# - DATA: the shared data folder (FMALIGN_DATA, else DATA, else
#   $ROOT/../shared/data; its README says what each file is);
# - die MESSAGE: the script's name and the message on stderr, exit 1.
# Settings of one script (WORK, THREADS, read counts) stay in its header.

SELF=$(readlink -f "$0")
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1
DATA=${FMALIGN_DATA:-${DATA:-$ROOT/../shared/data}}

die() {
    echo "$(basename "$0"): $*" >&2
    exit 1
}
