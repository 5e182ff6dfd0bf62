#!/usr/bin/env python3
"""GNU time's `-f FORMAT -o FILE COMMAND...` for machines without /usr/bin/time.

Only the two fields the benchmark scripts use: %e (wall seconds) and %M (peak
resident set of the command, KB). Runs COMMAND, writes FORMAT with those
filled in to FILE, and exits with COMMAND's status (128 + N when a signal N
ended it), as GNU time does. scripts/gpu-check.sh uses it where the GPU
machine's image has no GNU time.

Usage: time-rss.py -f FORMAT -o FILE COMMAND [ARG...]
"""

import os
import sys
import time


def main(argv):
    fmt, out = "%e %M", None
    args = argv[1:]
    while args and args[0] in ("-f", "-o"):
        if len(args) < 2:
            sys.exit(f"time-rss.py: {args[0]} needs a value")
        if args[0] == "-f":
            fmt = args[1]
        else:
            out = args[1]
        args = args[2:]
    if not args:
        sys.exit("usage: time-rss.py -f FORMAT -o FILE COMMAND [ARG...]")
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        try:
            os.execvp(args[0], args)
        except OSError as e:
            print(f"time-rss.py: cannot run {args[0]}: {e}", file=sys.stderr)
            os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    wall = time.monotonic() - t0
    text = fmt.replace("%e", f"{wall:.2f}").replace("%M", str(usage.ru_maxrss)) + "\n"
    if out is None:
        sys.stderr.write(text)
    else:
        with open(out, "w") as f:
            f.write(text)
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
