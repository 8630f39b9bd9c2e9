#!/usr/bin/env python3
"""Drives a real debugger in batch mode on a real program or core file and checks its output.

  debugger.py --gdb-script build/gdb/dscope-gdb.py --program P [--core C] [--args ...]
              --cmd "dispatch-trace" [--cmd ...] --expect TEXT [--expect ...] [--reject TEXT ...]

Every expected text must appear; rejected texts (always: Python tracebacks) must not. Exits 0
when all checks pass, 1 otherwise, printing the whole debugger output either way."""

import argparse
import subprocess
import sys
import time

ALWAYS_REJECT = ["Traceback (most recent call last)", "Python Exception"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--gdb-script", required=True)
    p.add_argument("--program")
    p.add_argument("--core")
    p.add_argument("--args", nargs=argparse.REMAINDER, default=[])
    p.add_argument("--cmd", action="append", default=[])
    p.add_argument("--expect", action="append", default=[])
    p.add_argument("--reject", action="append", default=[])
    p.add_argument("--timeout", type=float, default=300)
    a = p.parse_args()

    command = ["gdb", "-nx", "-batch", "-iex", "set auto-load safe-path /", "-ex", "set pagination off",
               "-x", a.gdb_script]
    for c in a.cmd:
        command += ["-ex", c]
    if a.core:
        command += [a.program, a.core]
    elif a.program:
        command += ["--args", a.program] + a.args
    start = time.monotonic()
    try:
        run = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=a.timeout,
                             stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        print("FAIL: the debugger did not finish within %.0f s" % a.timeout)
        return 1
    output = run.stdout.decode(errors="replace")
    print(output)
    print("(debugger ran %.2f s)" % (time.monotonic() - start))
    ok = True
    for text in a.expect:
        if text not in output:
            print("FAIL: expected in the output: %r" % text)
            ok = False
    for text in a.reject + ALWAYS_REJECT:
        if text in output:
            print("FAIL: must not appear in the output: %r" % text)
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
