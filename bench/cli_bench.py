#!/usr/bin/env python3
"""dscope core (issue 25): `dispatch-trace` on a core without a debugger against `gdb -batch` with
DispatchScope running the same command on the same core, alternating, medians; wall time and peak
memory (ru_maxrss of the child).

  python3 bench/cli_bench.py [--build build/release] [--repeats 5]
  python3 bench/cli_bench.py --core CORE --executable EXE [--sysroot ROOT]   # 2. on a given core only

1. samples/infinite_redispatch's overflow core with an 8 MiB stack (goal: dscope >= 3x faster);
   the same with --frames (20 000 stack frames unwound by libdwfl against GDB's unwinder).
2. tests/torch/torch_loop.cpp's real-PyTorch overflow core (the same comparison, no goal set);
   with --core, that core (one written in a 2.x root: --sysroot gives the root to both, as
   `dscope core --sysroot ROOT` and GDB's `set sysroot ROOT`).
3. A batch of 100 cores of the samples (their five crashes, 20 copies each) through one
   `dscope core --json -j 2 DIR`: cores per second and the peak memory of a worker (goal >= 10/s).
Prints one summary line per measurement; the numbers go to docs/PERFORMANCE.md."""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from debuggers import fail, gdb_argv, make_core, summary  # noqa: E402


def timed(argv):
    """(wall seconds, peak RSS MB) of one run."""
    start = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.monotonic() - start
    if os.waitstatus_to_exitcode(status) != 0:
        fail("%s exited with %d" % (" ".join(argv[:3]), os.waitstatus_to_exitcode(status)))
    return seconds, usage.ru_maxrss / 1024


def compare(args, label, program, core, goal, command="dispatch-trace", sysroot=None):
    dscope = os.path.join(args.build, "cli", "dscope")
    roots = (["--sysroot", sysroot], ["-iex", "set sysroot " + sysroot, "-iex", "set debuginfod enabled off"]) if sysroot else ([], [])
    variants = {"dscope": [dscope, "core"] + roots[0] + [core, program] + command.split(),
                "gdb": gdb_argv(args.build, *roots[1], "-ex", command, program, core)}
    runs = {v: [] for v in variants}
    for _ in range(args.repeats):
        for name, argv in variants.items():
            runs[name].append(timed(argv))
    sec = {v: statistics.median(s for s, _ in r) for v, r in runs.items()}
    mem = {v: max(m for _, m in r) for v, r in runs.items()}
    ratio = sec["gdb"] / sec["dscope"]
    verdict = "" if goal is None else " (goal >= %gx: %s)" % (goal, "met" if ratio >= goal else "missed")
    summary("%s: dscope core %s %.3f s, %.0f MB vs gdb -batch %.3f s, %.0f MB -> %.1fx faster%s; medians of %d"
            % (label, command, sec["dscope"], mem["dscope"], sec["gdb"], mem["gdb"], ratio, verdict, args.repeats))


# The samples' crashes: program and arguments.
CRASHES = [("infinite_redispatch", []), ("multithread", []), ("missing_kernel", []), ("tls_leak", ["--core"]),
           ("op_catalog", ["--core"])]


def batch(args, workdir):
    dscope = os.path.join(args.build, "cli", "dscope")
    cores = [make_core(workdir, [os.path.join(args.build, "samples", name)] + argv, 8192, name) for name, argv in CRASHES]
    batch_dir = os.path.join(workdir, "batch")
    os.mkdir(batch_dir)
    for i in range(100):
        shutil.copy(cores[i % len(cores)], os.path.join(batch_dir, "%03d.core" % i))
    size = sum(os.path.getsize(os.path.join(batch_dir, f)) for f in os.listdir(batch_dir)) / 2**20
    # A Python between: the largest ru_maxrss of its children (dscope and its workers) is the batch's.
    measure = ("import resource, subprocess, sys; out = subprocess.run(sys.argv[1:], capture_output=True, text=True).stdout; "
               "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); print(out, end='')")
    runs, peak = [], 0
    for _ in range(args.repeats):
        start = time.monotonic()
        proc = subprocess.run([sys.executable, "-c", measure, dscope, "core", "--json", "-j", "2", batch_dir],
                              capture_output=True, text=True)
        runs.append(time.monotonic() - start)
        lines = proc.stdout.splitlines()
        peak = max(peak, int(lines[0]) / 1024)
        records = [json.loads(line) for line in lines[1:]]
        errors = [r for r in records if "error" in r]
        if len(records) != 100 or errors:
            fail("the batch gave %d records, %d errors: %s" % (len(records), len(errors), errors[:1]))
    sec = statistics.median(runs)
    summary("100 sample cores (%.0f MiB) through dscope core --json -j 2: %.2f s, %.0f cores/s (goal >= 10: %s), "
            "peak memory of one process %.0f MB; median of %d" % (size, sec, 100 / sec, "met" if 100 / sec >= 10 else "missed",
                                                                   peak, args.repeats))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default="build/release")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--core", help="only 2. on this overflow core of torch_loop")
    parser.add_argument("--executable", help="the program of --core")
    parser.add_argument("--sysroot", help="the root --core was written in")
    args = parser.parse_args()
    args.build = os.path.abspath(args.build)
    if bool(args.core) != bool(args.executable) or (args.sysroot and not args.core):
        parser.error("--core and --executable go together; --sysroot needs them")
    if args.core:
        compare(args, "real-PyTorch overflow core", os.path.abspath(args.executable), os.path.abspath(args.core), None,
                sysroot=args.sysroot)
        return
    with tempfile.TemporaryDirectory(prefix="cli_bench_") as workdir:
        program = os.path.join(args.build, "samples", "infinite_redispatch")
        overflow = make_core(workdir, [program], 8192, "redispatch")
        compare(args, "8 MiB overflow core", program, overflow, 3)
        compare(args, "8 MiB overflow core", program, overflow, None, "dispatch-trace --frames")
        batch(args, workdir)
        torch_loop = os.path.join(args.build, "tests", "torch_loop")
        if os.path.exists(torch_loop):
            compare(args, "real-PyTorch overflow core", torch_loop, make_core(workdir, [torch_loop, "self"], 8192, "torch"), None)


if __name__ == "__main__":
    main()
