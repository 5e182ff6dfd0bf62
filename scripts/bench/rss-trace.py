#!/usr/bin/env python3
"""Runs a command and samples its resident size (VmRSS, /proc) every 0.1 s.

Usage: scripts/bench/rss-trace.py TRACE.tsv CMD [ARGS...]
Writes "seconds<TAB>rss_bytes" lines to TRACE.tsv; prints
"wall_s peak_rss_bytes" (peak: the kernel's VmHWM, read at each sample, so
it includes peaks between samples) to stderr; exits with the command's status.
No dependencies.
"""
import subprocess
import sys
import time


def field(pid, name):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(name):
                    return int(line.split()[1]) * 1024
    except (FileNotFoundError, ProcessLookupError):
        return None
    return None


def main():
    out, cmd = sys.argv[1], sys.argv[2:]
    start = time.monotonic()
    p = subprocess.Popen(cmd)
    peak = 0
    with open(out, "w") as f:
        while p.poll() is None:
            rss, hwm = field(p.pid, "VmRSS:"), field(p.pid, "VmHWM:")
            if rss is not None:
                f.write(f"{time.monotonic() - start:.2f}\t{rss}\n")
                peak = max(peak, hwm or 0, rss)
            time.sleep(0.1)
    wall = time.monotonic() - start
    print(f"{wall:.2f} {peak}", file=sys.stderr)
    sys.exit(p.returncode)


if __name__ == "__main__":
    main()
