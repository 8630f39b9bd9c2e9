#!/usr/bin/env python3
"""LLDB front-end benchmark (results in docs/PERFORMANCE.md, section "LLDB").

Run after building the release preset with the LLDB plugin (target dscope_lldb):

    python3 bench/lldb_bench.py --build build/release            # about 8 minutes (bt is slow)
    python3 bench/lldb_bench.py --build build/release --quick    # 8 MiB stack only, fewer repeats

dispatch-trace against plain `bt` on a kernel core of samples/infinite_redispatch, crashed with an
8 MiB and a 64 MiB stack (cores made by bench/debuggers.py, as for GDB), in the same run:

  dispatch-trace  lldb-16 -b -O 'plugin load BUILD/lldb/libdscope_lldb.so' -c CORE PROG -o dispatch-trace
  bt              lldb-16 -b -O 'settings set target.process.thread.max-backtrace-depth 100000000'
                          -c CORE PROG -o bt > /dev/null
  start-up        lldb-16 -b -O 'plugin load ...' -c CORE PROG   (no command: loading the core alone)

Wall times of whole lldb-16 processes, best and median of --repeats runs, interleaved (bt:
--bt-repeats runs on the 8 MiB core, one on the 64 MiB core, each killed after --bt-timeout
seconds and then reported as a lower bound); also the CPU time of each process tree and, for
dispatch-trace, the command's own time measured inside lldb (start-up and core load excluded).
LLDB stops a backtrace at target.process.thread.max-backtrace-depth (600 000 frames by default)
without a word, so bt runs with the limit raised; the frame count LLDB unwinds with that setting
is checked once per core (SBThread.GetNumFrames) and printed. One "lldb_bench:" line per core.

op-table of the whole catalogue, side by side with GDB: `op-table --list`, then `op-table NAME` for
each of the 3 694 operators of a samples/op_catalog core, in one session of each debugger, timed
inside it (start-up and core load excluded), --optable-repeats sessions of each, alternating.
"""

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from debuggers import (LLDB, Debugger, fail, lldb_argv, log, make_core, optable_session, require,  # noqa: E402
                       run_timed, summary)

DEPTH_SETTING = "settings set target.process.thread.max-backtrace-depth 100000000"


def run_once(argv, timeout=None):
    """(wall s, CPU s of the whole process tree) of one run with stdout to /dev/null; wall is None
    for a run killed at the timeout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    seconds, rc, _ = run_timed(argv, timeout=timeout)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if rc is None:
        return None, cpu
    if rc != 0:
        fail("%s exited with %d" % (" ".join(argv), rc))
    return seconds, cpu


def fmt(runs):
    return " ".join("killed" if w is None else "%.2f" % w for w, _ in runs)


def best_median(runs):
    walls = [w for w, _ in runs if w is not None]
    cpus = [c for w, c in runs if w is not None]
    return min(walls), statistics.median(walls), min(cpus)


def bench_core(args, workdir, stack_kib, label, bt_repeats):
    prog = os.path.join(args.build, "samples", "infinite_redispatch")
    core = make_core(workdir, [prog], stack_kib, "redispatch-" + label)
    lldb = Debugger("lldb", args.build, prog, core)
    trace_argv = lldb.argv(["dispatch-trace"], plugin=True)

    # Check the output once: a dispatch-trace that failed fast would be a meaningless figure.
    _, rc, out = run_timed(trace_argv, stdout=subprocess.PIPE, timeout=60)
    m = re.search(r"dispatch depth ([\d ]+)", out or "")
    if rc != 0 or not m or "repeated" not in out or "Traceback" in out:
        fail("dispatch-trace did not print the chain on %s:\n%s" % (core, (out or "")[-2000:]))
    depth = m.group(1).strip()
    _, _, out = run_timed(lldb_argv(core, prog, "script print('FRAMES', lldb.thread.GetNumFrames())",
                                    pre=[DEPTH_SETTING]), stdout=subprocess.PIPE, timeout=args.bt_timeout)
    m = re.search(r"^FRAMES (\d+)", out or "", re.MULTILINE)
    frames = "{:,}".format(int(m.group(1))).replace(",", " ") if m else "?"

    bt_argv = lldb_argv(core, prog, "bt", pre=[DEPTH_SETTING])
    startup, trace, bt = [], [], []
    # Interleaved, so that the machine's load falls on all of them alike.
    for i in range(max(args.repeats, bt_repeats)):
        if i < args.repeats:
            startup.append(run_once(lldb.argv([], plugin=True)))
            trace.append(run_once(trace_argv))
        if i < bt_repeats and (not bt or bt[-1][0] is not None):  # one bound hit is enough
            bt.append(run_once(bt_argv, timeout=args.bt_timeout))
    inside = [lldb.timed("dispatch-trace", True, workdir)[0] for _ in range(args.repeats)]
    log("  %s stack: core %.1f MB, dispatch depth %s, %s frames (max-backtrace-depth raised)"
        % (label, os.path.getsize(core) / 1e6, depth, frames))
    log("    lldb start-up + plugin load + core load, no command: %s" % fmt(startup))
    log("    dispatch-trace: %s; the command alone, timed inside lldb: %s"
        % (fmt(trace), " ".join("%.3f" % t for t in inside)))
    log("    bt:             %s" % fmt(bt))
    t_best, t_med, t_cpu = best_median(trace)
    s_best, _, _ = best_median(startup)
    head = ("trace %-5s: dispatch-trace best %.3f s, median %.3f s (start-up alone %.3f s, the command alone %.3f s)"
            % (label, t_best, t_med, s_best, min(inside)))
    if bt[-1][0] is None:
        summary("%s; bt did not finish in %.0f s -> ratio >= %.0fx" % (head, args.bt_timeout, args.bt_timeout / t_best))
    else:
        b_best, b_med, b_cpu = best_median(bt)
        summary("%s; bt best %.1f s, median %.1f s (%d run%s) -> ratio %.0fx best/best, %.0fx median/median, "
                "%.0fx in CPU time (%.2f s vs %.1f s)"
                % (head, b_best, b_med, len(bt), "" if len(bt) == 1 else "s", b_best / t_best, b_med / t_med,
                   b_cpu / t_cpu, t_cpu, b_cpu))
    os.unlink(core)


def bench_optable(args, workdir):
    prog = os.path.join(args.build, "samples", "op_catalog")
    core = make_core(workdir, [prog, "--core"], 8192, "op_catalog")
    totals = {"gdb": [], "lldb": []}
    for _ in range(args.optable_repeats):
        for name in ("gdb", "lldb"):  # alternating, so that the machine's load falls on both alike
            ops, seconds = optable_session(name, args.build, prog, core, workdir, 3000)
            totals[name].append(seconds)
    g, l = min(totals["gdb"]), min(totals["lldb"])
    summary("optable: %s operators, --list + every op-table, inside the debugger: LLDB best %.2f s (%s), GDB best "
            "%.2f s (%s) -> LLDB/GDB %.2fx (goal <= 1.5x: %s)"
            % (ops, l, " ".join("%.2f" % t for t in totals["lldb"]), g,
               " ".join("%.2f" % t for t in totals["gdb"]), l / g, "met" if l / g <= 1.5 else "missed"))
    os.unlink(core)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default="build/release")
    parser.add_argument("--quick", action="store_true", help="8 MiB stack only, 3 repeats, one bt")
    parser.add_argument("--repeats", type=int, help="dispatch-trace runs per core (default 7, quick 3)")
    parser.add_argument("--bt-repeats", type=int, help="bt runs on the 8 MiB core (default 3, quick 1); "
                        "the 64 MiB core's bt (minutes) runs once")
    parser.add_argument("--bt-timeout", type=float, default=300.0, help="seconds before a bt is killed")
    parser.add_argument("--optable-repeats", type=int, default=3,
                        help="sessions of each debugger for the catalogue's op-tables (0: skip)")
    args = parser.parse_args()
    args.build = os.path.abspath(args.build)
    if args.repeats is None:
        args.repeats = 3 if args.quick else 7
    if args.bt_repeats is None:
        args.bt_repeats = 1 if args.quick else 3
    require(args.build, ("lldb/libdscope_lldb.so", "samples/infinite_redispatch", "samples/op_catalog"),
            " (the LLDB plugin needs liblldb-16-dev)")
    version = subprocess.run([LLDB, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    log("lldb_bench: %s, build %s, %s" % (version, args.build, "quick" if args.quick else "full"))
    start = time.monotonic()
    stacks = [(8192, "8MiB", args.bt_repeats)] + ([] if args.quick else [(65536, "64MiB", 1)])
    with tempfile.TemporaryDirectory(prefix="lldb_bench.") as workdir:
        if args.optable_repeats:
            bench_optable(args, workdir)
        for stack_kib, label, bt_repeats in stacks:
            bench_core(args, workdir, stack_kib, label, bt_repeats)
    log("lldb_bench: done in %.0f s" % (time.monotonic() - start))


if __name__ == "__main__":
    main()
