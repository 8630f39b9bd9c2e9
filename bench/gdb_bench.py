#!/usr/bin/env python3
"""GDB front-end benchmarks (results in docs/PERFORMANCE.md, section "GDB").

Run after `cmake --build --preset release`:

    python3 bench/gdb_bench.py --build build/release            # about 4-5 minutes
    python3 bench/gdb_bench.py --build build/release --quick    # about 1-2 minutes
    python3 bench/gdb_bench.py --build build/release --only optable,break,idle --repeats 7

Four measurements, each side by side in one run. The machine is noisy: every figure is the best
of several runs, printed with the spread (min/median/max) and the number of runs.

  trace    dispatch-trace vs plain `bt` on a kernel core of samples/infinite_redispatch, crashed
           with an 8 MiB and a 64 MiB stack. Wall time of `gdb -batch -nx ... -ex dispatch-trace
           PROG CORE` (best of N) against `gdb -batch -nx -ex bt PROG CORE > /dev/null` (once,
           under a timeout and an address-space limit: a full bt of a stack overflow takes
           minutes and GDB needs ~11 KB per frame, so "did not finish in N s" is reported as
           such, with the ratio as a lower bound).
  optable  `op-table --list` and `op-table NAME` for every operator of a samples/op_catalog core,
           in one gdb session; timed inside GDB with time.monotonic (start-up excluded) and as
           the whole gdb wall time. The op-table calls stop after a time budget (--optable-budget)
           and the whole catalogue is then projected from the operators done.
  break    bench/break_loop (200 000 calls through the dispatcher, every 1000th aten::mm) under
           `dispatch-break aten::mm` (best of N gdb sessions) vs a native conditional breakpoint
           `break dscope::TypedOperatorHandle<Sig>::dispatch if $_streq(this->entry_->full_name_,
           "aten::mm")` on both signatures the loop dispatches (--native-repeats sessions, 1 by
           default: one takes a minute); each stop answered with `continue`; gdb wall time.
  idle     the loop's own time (as break_loop reports it, best of 5 loops per process) with
           `dispatch-break aten::relu` armed on an operator the loop never calls vs the same loop
           without a debugger (and in gdb with no filter, to tell the debugger's cost from the
           filter's); the three kinds of process alternate, N rounds.

Each measurement prints one summary line starting with "gdb_bench:".
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from debuggers import GDB, fail, gdb_argv, log, make_core, require, run_timed, summary  # noqa: E402


def median(values):
    return sorted(values)[len(values) // 2]


def spread(values, fmt="%.3f"):
    """'min/median/max of N' for a list of measurements (the machine is noisy: say how much)."""
    return "%s/%s/%s of %d" % (fmt % min(values), fmt % median(values), fmt % max(values), len(values))


# ---------------------------------------------------------------------------------------- trace

def bench_trace(args, workdir):
    prog = os.path.join(args.build, "samples", "infinite_redispatch")
    for stack_kib, label in ((8192, "8MiB"), (65536, "64MiB")):
        core = make_core(workdir, [prog], stack_kib, "redispatch-" + label)
        depth = "?"
        t0, rc, out = run_timed(gdb_argv(args.build, "-ex", "dispatch-trace", prog, core), stdout=subprocess.PIPE)
        m = re.search(r"dispatch depth ([\d ]+)", out or "")
        if m:
            depth = m.group(1).strip()
        times = [t0]
        for _ in range(args.repeats - 1):
            times.append(run_timed(gdb_argv(args.build, "-ex", "dispatch-trace", prog, core))[0])
        trace_s = min(times)
        log("  %s stack: core %.1f MB, dispatch depth %s; dispatch-trace best of %d: %.3f s (all: %s)"
            % (label, os.path.getsize(core) / 1e6, depth, len(times), trace_s,
               " ".join("%.2f" % t for t in times)))
        bt_s, rc, _ = run_timed([GDB, "-batch", "-nx", "-ex", "bt", prog, core], timeout=args.bt_timeout,
                                mem_limit=args.bt_mem_gib << 30)
        if rc is None:
            summary("trace %-5s: dispatch-trace %.3f s; bt did not finish in %.0f s -> ratio >= %.0fx"
                    % (label, trace_s, bt_s, bt_s / trace_s))
        elif rc != 0:
            summary("trace %-5s: dispatch-trace %.3f s; bt failed after %.1f s (exit %d, %d GiB address-space "
                    "limit: out of memory) -> ratio >= %.0fx" % (label, trace_s, bt_s, rc, args.bt_mem_gib,
                                                                 bt_s / trace_s))
        else:
            summary("trace %-5s: dispatch-trace %.3f s; bt %.1f s -> ratio %.0fx" % (label, trace_s, bt_s,
                                                                                      bt_s / trace_s))
        os.unlink(core)


# -------------------------------------------------------------------------------------- optable

OPTABLE_SCRIPT = r'''
import time, gdb
t0 = time.monotonic()
listing = gdb.execute("op-table --list", to_string=True)
t1 = time.monotonic()
names = [l.strip() for l in listing.splitlines() if "::" in l and " " not in l.strip()]
chars = 0
failed = 0
slowest = (0.0, "")
done = 0
for name in names:
    if time.monotonic() - t1 > BUDGET_S:
        break
    done += 1
    s = time.monotonic()
    out = gdb.execute("op-table " + name, to_string=True)
    d = time.monotonic() - s
    if d > slowest[0]:
        slowest = (d, name)
    chars += len(out)
    if "_dispatch_dump_table" not in out:
        failed += 1
t2 = time.monotonic()
print("OPTABLE ops=%d done=%d list_s=%.4f tables_s=%.4f total_s=%.4f chars=%d failed=%d slowest=%.4f:%s"
      % (len(names), done, t1 - t0, t2 - t1, t2 - t0, chars, failed, slowest[0], slowest[1]))
'''


def bench_optable(args, workdir):
    prog = os.path.join(args.build, "samples", "op_catalog")
    core = make_core(workdir, [prog, "--core"], 8192, "op_catalog")
    script = os.path.join(workdir, "optable.py")
    with open(script, "w") as f:
        f.write("BUDGET_S = %r\n" % args.optable_budget + OPTABLE_SCRIPT)
    startup = min(run_timed(gdb_argv(args.build, prog, core))[0] for _ in range(3))
    results = []
    for _ in range(args.optable_repeats):
        wall, rc, out = run_timed(gdb_argv(args.build, "-x", script, prog, core), stdout=subprocess.PIPE)
        m = re.search(r"OPTABLE ops=(\d+) done=(\d+) list_s=([\d.]+) tables_s=([\d.]+) total_s=([\d.]+) chars=(\d+) "
                      r"failed=(\d+) slowest=([\d.]+):(\S*)", out or "")
        if not m:
            fail("op-table run failed:\n" + (out or "")[-2000:])
        results.append((float(m.group(5)), wall, m))
        if int(m.group(2)) < int(m.group(1)):
            break  # over the budget: one projection is enough
    total, wall, m = min(results, key=lambda r: r[0])
    ops, done = int(m.group(1)), int(m.group(2))
    list_s, tables_s = float(m.group(3)), float(m.group(4))
    log("  op_catalog core %.1f MB; gdb start-up + core load alone (best of 3): %.2f s; op-table output %d chars; "
        "slowest op-table %.1f ms (%s); failed %s; in-GDB totals of %d run(s): %s"
        % (os.path.getsize(core) / 1e6, startup, int(m.group(6)), float(m.group(8)) * 1e3, m.group(9),
           m.group(7), len(results), " ".join("%.2f" % r[0] for r in results)))
    if done < ops:
        projected = list_s + tables_s / max(done, 1) * ops
        summary("optable: %d operators: --list %.3f s; op-table did not finish the catalogue in the %.0f s budget: "
                "%d of %d in %.2f s (%.2f ms/op) -> whole catalogue projected %.0f s inside GDB (goal 3 s: %.0fx over)"
                % (ops, list_s, args.optable_budget, done, ops, tables_s, tables_s / max(done, 1) * 1e3, projected,
                   projected / 3.0))
    else:
        summary("optable: %d operators: --list %.3f s + %d op-tables %.3f s (%.2f ms/op) = %.2f s inside GDB, best "
                "run (min/median/max %s s) (goal 3 s: %s); gdb wall %.2f s incl. start-up %.2f s"
                % (ops, list_s, ops, tables_s, tables_s / max(ops, 1) * 1e3, total,
                   spread([r[0] for r in results], "%.2f"),
                   "met, %.1fx under" % (3.0 / total) if total <= 3.0 else "missed, %.1fx over" % (total / 3.0),
                   wall, startup))
    os.unlink(core)


# ---------------------------------------------------------------------------------------- break

DRIVER_SCRIPT = r'''
import time, gdb
gdb.execute("set pagination off")
gdb.execute("set confirm off")
gdb.execute("set breakpoint pending on")
for command in COMMANDS:
    gdb.execute(command, to_string=True)
t0 = time.monotonic()
stops = 0
gdb.execute("run " + ARGS, to_string=True)
while gdb.selected_inferior().pid != 0:
    stops += 1
    gdb.execute("continue", to_string=True)
print("DRIVER stops=%d run_s=%.4f" % (stops, time.monotonic() - t0))
'''

SIG1 = "dscope::TypedOperatorHandle<dscope::Tensor (dscope::Tensor const&)>::dispatch"
SIG2 = "dscope::TypedOperatorHandle<dscope::Tensor (dscope::Tensor const&, dscope::Tensor const&)>::dispatch"
COND = 'if $_streq(this->entry_->full_name_, "aten::mm")'


def driver(workdir, name, commands, prog_args):
    path = os.path.join(workdir, name + ".py")
    with open(path, "w") as f:
        f.write("COMMANDS = %r\nARGS = %r\n" % (commands, prog_args) + DRIVER_SCRIPT)
    return path


def run_driver(args, script, prog, with_dscope, timeout=None):
    argv = (gdb_argv(args.build) if with_dscope else [GDB, "-batch", "-nx"]) + ["-x", script, prog]
    wall, rc, out = run_timed(argv, stdout=subprocess.PIPE, timeout=timeout)
    if rc is None:
        return wall, None, None, None
    d = re.search(r"DRIVER stops=(\d+) run_s=([\d.]+)", out or "")
    loop = re.search(r"loop_ns=(\d+)", out or "")
    if not d or not loop:
        fail("gdb run failed:\n" + (out or "")[-3000:])
    return wall, int(d.group(1)), float(d.group(2)), int(loop.group(1))


def bench_break(args, workdir):
    prog = os.path.join(args.build, "bench", "break_loop")
    n = args.break_iterations
    dscope = driver(workdir, "dscope", ["dispatch-break aten::mm"], str(n))
    native = driver(workdir, "native", ["break %s %s" % (SIG1, COND), "break %s %s" % (SIG2, COND)], str(n))
    runs = []  # (gdb wall, stops, run+continues, loop)
    for _ in range(args.break_repeats):
        runs.append(run_driver(args, dscope, prog, True))
    d_wall, d_stops, d_run, d_loop = min(runs)
    log("  %d calls (%d aten::mm): dispatch-break: %s stops; gdb wall min/median/max %s s (best: run+continues "
        "%.2f s, loop %.3f s)" % (n, n // 1000, d_stops, spread([r[0] for r in runs], "%.2f"), d_run, d_loop / 1e9))
    natives = []
    for _ in range(args.native_repeats):
        natives.append(run_driver(args, native, prog, False, timeout=args.native_timeout))
    finished = [r for r in natives if r[1] is not None]
    if not finished:
        n_wall = min(r[0] for r in natives)
        summary("break: %d calls: dispatch-break aten::mm %.2f s (best of %d); native conditional break did not "
                "finish in %.0f s -> ratio >= %.0fx" % (n, d_wall, len(runs), n_wall, n_wall / d_wall))
        return
    n_wall, n_stops, n_run, n_loop = min(finished)
    log("  native conditional breakpoint: %d stops, gdb wall %s s (best: run+continues %.2f s, loop %.3f s)"
        % (n_stops, spread([r[0] for r in finished], "%.1f"), n_run, n_loop / 1e9))
    d_median = median([r[0] for r in runs])
    summary("break: %d calls, %d stops each: dispatch-break aten::mm %.2f s (best of %d; median %.2f) vs native "
            "`break ...dispatch if $_streq(...)` %.1f s (best of %d) (gdb wall) -> ratio %.1fx (%.1fx from the "
            "median; goal 100x: %s); program's loop %.3f s vs %.3f s -> %.0fx"
            % (n, d_stops, d_wall, len(runs), d_median, n_wall, len(finished), n_wall / d_wall, n_wall / d_median,
               "met" if n_wall / d_wall >= 100 else "missed", d_loop / 1e9, n_loop / 1e9, n_loop / d_loop))


def bench_idle(args, workdir):
    """Filter armed on an operator the loop never calls: the program's own loop time, in gdb vs
    not, alternating, each process reporting its best of 5 loops."""
    prog = os.path.join(args.build, "bench", "break_loop")
    n = args.break_iterations
    idle = driver(workdir, "idle", ["dispatch-break aten::relu"], "%d 5" % n)
    nofilter = driver(workdir, "nofilter", [], "%d 5" % n)
    plain, bare, armed = [], [], []
    for _ in range(args.idle_rounds):
        _, rc, out = run_timed([prog, str(n), "5"], stdout=subprocess.PIPE)
        plain.append(int(re.search(r"loop_ns=(\d+)", out).group(1)))
        bare.append(run_driver(args, nofilter, prog, True)[3])
        _, stops, _, loop = run_driver(args, idle, prog, True)
        if stops:
            fail("dispatch-break aten::relu stopped %d times" % stops)
        armed.append(loop)
    ms = lambda values: [v / 1e6 for v in values]
    log("  loop ms (best of 5 loops per process), min/median/max of %d processes each: without debugger %s; "
        "under gdb, no filter %s; under gdb, dispatch-break aten::relu armed %s"
        % (args.idle_rounds, spread(ms(plain), "%.2f"), spread(ms(bare), "%.2f"), spread(ms(armed), "%.2f")))
    ratio = min(armed) / min(plain)
    summary("idle: %d calls, best loop %.2f ms without a debugger vs %.2f ms in gdb with dispatch-break aten::relu "
            "armed -> %.3fx (medians: %.3fx; goal 1.1x: %s) (%.1f vs %.1f ns/call; in gdb with no filter %.1f "
            "ns/call, %.3fx)"
            % (n, min(plain) / 1e6, min(armed) / 1e6, ratio, median(armed) / median(plain),
               "met" if ratio <= 1.1 else "missed", min(plain) / n, min(armed) / n, min(bare) / n,
               min(bare) / min(plain)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default="build/release")
    parser.add_argument("--quick", action="store_true", help="fewer repeats, shorter bt timeouts, 20 000 calls")
    parser.add_argument("--only", default="trace,optable,break,idle")
    parser.add_argument("--repeats", type=int, help="runs of each measured side (default 5, quick 3; optable 3/1)")
    parser.add_argument("--native-repeats", type=int, default=1, help="native conditional-breakpoint sessions")
    parser.add_argument("--bt-timeout", type=float, help="seconds for each plain bt (default 45, quick 20)")
    parser.add_argument("--bt-mem-gib", type=int, default=12, help="address-space limit for bt's gdb (GiB)")
    parser.add_argument("--break-iterations", type=int, help="break_loop calls (default 200000, quick 20000)")
    parser.add_argument("--native-timeout", type=float, default=400.0)
    parser.add_argument("--optable-budget", type=float, help="seconds of op-table calls before stopping "
                        "and projecting (default 60, quick 20)")
    args = parser.parse_args()
    args.build = os.path.abspath(args.build)
    if args.repeats is None:
        args.repeats = 3 if args.quick else 5
        args.optable_repeats = 1 if args.quick else 3
    else:
        args.optable_repeats = args.repeats
    args.break_repeats = args.repeats
    if args.optable_budget is None:
        args.optable_budget = 20.0 if args.quick else 60.0
    args.idle_rounds = args.repeats
    if args.bt_timeout is None:
        args.bt_timeout = 20.0 if args.quick else 45.0
    if args.break_iterations is None:
        args.break_iterations = 20_000 if args.quick else 200_000
    require(args.build, ("gdb/dscope-gdb.py", "samples/infinite_redispatch", "samples/op_catalog", "bench/break_loop"))
    log("gdb_bench: %s, build %s, %s" % (subprocess.run([GDB, "--version"], capture_output=True, text=True)
                                         .stdout.splitlines()[0], args.build, "quick" if args.quick else "full"))
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="gdb_bench.") as workdir:
        for name in args.only.split(","):
            t = time.monotonic()
            {"trace": bench_trace, "optable": bench_optable, "break": bench_break, "idle": bench_idle}[name](args, workdir)
            log("  (%s: %.0f s)" % (name, time.monotonic() - t))
    log("gdb_bench: done in %.0f s" % (time.monotonic() - start))


if __name__ == "__main__":
    main()
