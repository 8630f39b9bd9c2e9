#!/usr/bin/env python3
"""Real PyTorch (Debian's 1.13, issue 23): DispatchScope reading a Python process with torch.

  python3 bench/torch_bench.py [--build build/release] [--repeats 5] [--only optable|trace|break]
  python3 bench/torch_bench.py --only optable --root sid     # PyTorch 2.x in a root of scripts/torch-roots.sh
  python3 bench/torch_bench.py --only optable|trace --core CORE --executable EXE [--sysroot ROOT]   # a core made before

1. op-table for every operator of tests/torch/oracle_program.py's gcore core, in one session,
   timed inside the debugger (start-up and core load excluded), GDB and lldb-16 alternating:
   goal <= 2 s in each. `dscope core` runs the same commands as one session (--commands FILE),
   timed as a whole process (start-up and core load included), and a sample of single op-tables,
   a process each.
   --root runs the program in that Debian root (a container) and reads its core with the root
   as sysroot; --core reads a core made before.
2. Attaching to the live process and answering the first `op-table aten::mm` (the operator list
   walked, the profile found and checked) against the same debugger's bare attach and detach,
   side by side: goal <= 1.5x.
3. dispatch-trace on tests/torch/torch_loop.cpp's overflow core against the bare core load
   (goal <= 1.3x) and against a backtrace that unwinds every frame (goal >= 4x faster). With
   --core/--executable/--sysroot, on a given core (torch_loop's, written in a 2.x root: the
   debuggers get the root as their sysroot, as tests/torch/torch_loop_test.py gives it).
4. dispatch-break on tests/torch/break_program.py: `dispatch-break aten::mm --key CPU` stops once
   per torch.mm call and on nothing else; with a breakpoint armed on an operator the program never
   calls (aten::bmm, every key), the program's own loop time against the same loop without a
   debugger, alternating, medians: goal <= 1.05x.
Prints one summary line per measurement; the numbers go to docs/PERFORMANCE.md."""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from debuggers import GDB, LLDB, Debugger, fail, gdb_argv, log, make_core, optable_session, run_timed, summary  # noqa: E402

TORCH_PYTHON = "/usr/bin/python3"
HERE = os.path.dirname(os.path.abspath(__file__))
ORACLE_PROGRAM = os.path.join(HERE, "..", "tests", "torch", "oracle_program.py")
BREAK_PROGRAM = os.path.join(HERE, "..", "tests", "torch", "break_program.py")
LOOP_OPS = 300000

def start_process(workdir):
    proc = subprocess.Popen([TORCH_PYTHON, ORACLE_PROGRAM, os.path.join(workdir, "oracle.txt")],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.stdout.readline().strip() != "ready":
        proc.kill()
        fail("the torch program did not start (is python3-torch installed?)")
    return proc


def gcore_of(pid, workdir):
    core = os.path.join(workdir, "python.core")
    with open("/proc/self/coredump_filter", "w") as f:
        f.write("0x37")
    subprocess.run([GDB, "-batch", "-nx", "-p", str(pid), "-ex", "gcore " + core], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return core


def bench_optable(args, workdir, core, prog=None, sysroot=None):
    prog = prog or os.path.realpath(TORCH_PYTHON)
    totals = {"gdb": [], "lldb": []}
    ops = 0
    for _ in range(args.repeats):
        for name in ("gdb", "lldb"):  # alternating, so that the machine's load falls on both alike
            ops, seconds = optable_session(name, args.build, prog, core, workdir, 3000, sysroot)
            totals[name].append(seconds)
    for name in ("gdb", "lldb"):
        best = min(totals[name])
        summary("optable %s: %d operators, --list + every op-table in one session on the core: best %.2f s, median "
                "%.2f s (%s; goal <= 2 s: %s)" % (name, ops, best, statistics.median(totals[name]),
                                                 " ".join("%.2f" % t for t in totals[name]),
                                                 "met" if statistics.median(totals[name]) <= 2 else "missed"))
    bench_optable_cli(args, core, prog, sysroot, workdir)


def bench_optable_cli(args, core, prog, sysroot, workdir):
    """dscope core: op-table --list, then every operator's op-table, as one session (--commands FILE:
    the core loaded once), the whole process timed (start-up and core load included); and a sample
    of single op-tables, a process each."""
    dscope = [os.path.join(args.build, "cli", "dscope"), "core"] + (["--sysroot", sysroot] if sysroot else []) + [core, prog]
    seconds, rc, out = run_timed(dscope + ["op-table", "--list"], timeout=600, stdout=subprocess.PIPE)
    names = [l.strip() for l in (out or "").splitlines() if "::" in l and " " not in l.strip()]
    if rc != 0 or not names:
        fail("dscope core op-table --list failed:\n%s" % (out or "")[-2000:])
    commands = os.path.join(workdir, "optable_commands")
    with open(commands, "w") as f:
        f.write("op-table --list\n" + "".join("op-table %s\n" % name for name in names))
    sessions = []
    for _ in range(args.repeats):
        t, rc, out = run_timed(dscope + ["--commands", commands], timeout=600, stdout=subprocess.PIPE)
        answered = (out or "").count("== torch._C._dispatch_dump_table(")
        if rc != 0 or answered != len(names):
            fail("dscope core --commands: %d of %d op-tables answered (exit %s)" % (answered, len(names), rc))
        sessions.append(t)
    session = statistics.median(sessions)
    summary("optable dscope core: %d operators, --list + every op-table in one session (--commands), the whole "
            "process: best %.2f s, median %.2f s (%s; goal <= 2 s: %s)"
            % (len(names), min(sessions), session, " ".join("%.2f" % t for t in sessions),
               "met" if session <= 2 else "missed"))
    sample = names[::max(1, len(names) // 20)][:20]
    times = []
    for name in sample:
        t, rc, out = run_timed(dscope + ["op-table", name], timeout=600, stdout=subprocess.PIPE)
        if rc != 0 or "_dispatch_dump_table" not in (out or ""):
            fail("dscope core op-table %s failed:\n%s" % (name, (out or "")[-2000:]))
        times.append(t)
    median = statistics.median(times)
    summary("optable dscope core: one command per process: --list %.2f s; op-table OP median %.2f s "
            "(min %.2f, max %.2f, %d operators of %d)"
            % (seconds, median, min(times), max(times), len(sample), len(names)))


def oracle_core_in_root(args, workdir):
    """A gcore core of tests/torch/oracle_program.py run in the root args.root: (core, program, sysroot)."""
    sys.path.insert(0, os.path.join(HERE, "..", "tests"))
    sys.path.insert(0, os.path.join(HERE, "..", "tests", "torch"))
    import pathlib
    import torch_oracle_test  # noqa: E402 (the tests' own way to run the program in a root and gcore it)
    target = torch_oracle_test.start_oracle(pathlib.Path(workdir),
                                            root=(pathlib.Path(HERE, "..", "scripts", "torch-roots.sh").resolve(), args.root))
    core = os.path.join(workdir, "python.core")
    try:
        torch_oracle_test.gcore(target, core)
    finally:
        target.kill()
    log("core: %d MB (%s root, %s)" % (os.path.getsize(core) >> 20, args.root, target.program))
    return core, target.program, target.core_sysroot


def attach_argv(debugger, build, pid, command):
    if debugger == "gdb":
        argv = [GDB, "-batch", "-nx", "-ex", "set debuginfod enabled off"]
        if command:
            argv += ["-x", os.path.join(build, "gdb", "dscope-gdb.py")]
        return argv + ["-p", str(pid)] + (["-ex", command] if command else []) + ["-ex", "detach"]
    argv = [LLDB, "--no-lldbinit", "-b"]
    if command:
        argv += ["-O", "plugin load " + os.path.join(build, "lldb", "libdscope_lldb.so")]
    return argv + ["-p", str(pid)] + (["-o", command] if command else []) + ["-o", "detach"]


def bench_attach(args, pid):
    for debugger in ("gdb", "lldb"):
        bare, first = [], []
        for _ in range(args.repeats):
            bare.append(run_timed(attach_argv(debugger, args.build, pid, None), timeout=300)[0])
            seconds, rc, out = run_timed(attach_argv(debugger, args.build, pid, "op-table aten::mm"), timeout=300,
                                         stdout=subprocess.PIPE)
            if rc != 0 or "_dispatch_dump_table" not in (out or ""):
                fail("%s: attach + op-table aten::mm failed:\n%s" % (debugger, (out or "")[-2000:]))
            first.append(seconds)
        b, f = statistics.median(bare), statistics.median(first)
        summary("attach %s: attach + first op-table aten::mm median %.2f s vs bare attach + detach %.2f s -> %.2fx "
                "(goal <= 1.5x: %s)" % (debugger, f, b, f / b, "met" if f / b <= 1.5 else "missed"))


def bench_trace(args, workdir):
    """dispatch-trace on the overflow core of tests/torch/torch_loop.cpp (issue 24): wall time
    against the debugger's bare loading of the same core and against a backtrace that must unwind
    every frame (GDB `bt -30`, LLDB `bt`), alternating, median."""
    if args.core:
        prog, core = os.path.abspath(args.executable), os.path.abspath(args.core)
    else:
        prog = os.path.abspath(os.path.join(args.build, "tests", "torch_loop"))
        if not os.path.exists(prog):
            fail("%s missing: cmake --build %s" % (prog, args.build))
        core = make_core(workdir, [prog], 8192, "torch_loop")
    variants = {
        "gdb": {"bare": [], "dispatch-trace": ["dispatch-trace"], "bt -30": ["bt -30"]},
        "lldb": {"bare": [], "dispatch-trace": ["dispatch-trace"], "bt": ["bt"]},
    }
    for name, commands in variants.items():
        times = {v: [] for v in commands}
        for _ in range(args.repeats):
            for variant, cmds in commands.items():
                plugin = variant == "dispatch-trace"
                argv = Debugger(name, args.build, prog, core, args.sysroot).argv(cmds, plugin)
                seconds, rc, out = run_timed(argv, timeout=600, stdout=subprocess.PIPE if plugin else subprocess.DEVNULL)
                if rc is None:
                    fail("%s %s: killed at 600 s" % (name, variant))
                if plugin and "loop: a cycle of" not in out:  # a trace that failed fast is no figure
                    fail("%s dispatch-trace found no loop:\n%s" % (name, out[-2000:]))
                times[variant].append(seconds)
        med = {v: statistics.median(t) for v, t in times.items()}
        slow = [v for v in commands if v not in ("bare", "dispatch-trace")][0]
        summary("trace %s: dispatch-trace %.2f s vs bare core load %.2f s -> %.2fx (goal <= 1.3x: %s); vs %s %.2f s -> "
                "%.1fx faster (goal >= 4x: %s); medians of %d"
                % (name, med["dispatch-trace"], med["bare"], med["dispatch-trace"] / med["bare"],
                   "met" if med["dispatch-trace"] / med["bare"] <= 1.3 else "missed", slow, med[slow],
                   med[slow] / med["dispatch-trace"], "met" if med[slow] / med["dispatch-trace"] >= 4 else "missed",
                   args.repeats))
    if not args.core:
        os.unlink(core)


def break_run(args, debugger, commands, program_args, workdir):
    """The output of break_program.py run under `debugger` (None: no debugger) with `commands`
    typed before it starts."""
    program = [TORCH_PYTHON, BREAK_PROGRAM, os.path.join(workdir, "oracle.json")] + program_args
    if debugger == "gdb":
        argv = gdb_argv(args.build)
        for c in commands:
            argv += ["-ex", c]
        argv += ["-ex", "run"] + ["-ex", "continue"] * 40 + ["--args"] + program
    elif debugger == "lldb":
        argv = [LLDB, "-b", "-O", "plugin load " + os.path.join(args.build, "lldb", "libdscope_lldb.so")]
        for c in commands + ["process launch"] + ["continue"] * 40:
            argv += ["-o", c]
        argv += ["--"] + program
    else:
        argv = program
    out = subprocess.run(argv, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    return out.stdout + out.stderr


def loop_seconds(text):
    line = next((l for l in text.splitlines() if l.startswith("loop seconds: ")), None)
    if line is None:
        fail("break_program printed no loop time:\n" + text[-2000:])
    return float(line.split()[-1])


def bench_break(args, workdir):
    """dispatch-break on a Python program (issue 24): stops only on the operator asked for, and the
    program's own speed with a breakpoint armed on an operator it never calls."""
    for name in ("gdb", "lldb"):
        text = break_run(args, name, ["dispatch-break aten::mm --key CPU"], ["--mm", "25"], workdir)
        stops = [l for l in text.splitlines() if l.startswith("dispatch-break: ")]
        other = [l for l in stops if not l.startswith("dispatch-break: aten::mm at CPU ")]
        summary("break %s: dispatch-break aten::mm --key CPU on 1000 operators with 25 torch.mm calls: %d stops, %d on "
                "another operator or key (goal: 25 and 0: %s)" % (name, len(stops), len(other),
                                                                   "met" if len(stops) == 25 and not other else "missed"))
    times = {"no debugger": [], "gdb": [], "lldb": []}
    loop = ["--mm", "0", "--ops", str(LOOP_OPS)]
    for _ in range(args.repeats):
        for variant in times:
            commands = [] if variant == "no debugger" else ["dispatch-break aten::bmm"]
            text = break_run(args, None if variant == "no debugger" else variant, commands, loop, workdir)
            times[variant].append(loop_seconds(text))
    med = {v: statistics.median(t) for v, t in times.items()}
    for name in ("gdb", "lldb"):
        ratio = med[name] / med["no debugger"]
        summary("break %s: %d operators with dispatch-break aten::bmm armed %.3f s vs no debugger %.3f s -> %.3fx "
                "(goal <= 1.05x: %s); the program's own loop time, medians of %d"
                % (name, LOOP_OPS, med[name], med["no debugger"], ratio, "met" if ratio <= 1.05 else "missed", args.repeats))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default="build/release")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", choices=["optable", "trace", "break"], help="run one part (1., 3. or 4.)")
    parser.add_argument("--root", help="optable: run the program in this root of scripts/torch-roots.sh (trixie, sid)")
    parser.add_argument("--core", help="optable: a gcore core of tests/torch/oracle_program.py; trace: an overflow "
                        "core of torch_loop (default: made here)")
    parser.add_argument("--executable", help="the program of --core (optable: its python3)")
    parser.add_argument("--sysroot", help="the root --core was written in, the debuggers' sysroot")
    args = parser.parse_args()
    if bool(args.core) != bool(args.executable) or (args.sysroot and not args.core):
        parser.error("--core and --executable go together; --sysroot needs them")
    if args.core and args.only not in ("optable", "trace"):
        parser.error("--core is for --only optable or trace")
    if args.only == "optable":
        with tempfile.TemporaryDirectory(prefix="torch_bench_") as workdir:
            if args.core:
                bench_optable(args, workdir, args.core, args.executable, args.sysroot)
            elif args.root:
                bench_optable(args, workdir, *oracle_core_in_root(args, workdir))
            else:
                proc = start_process(workdir)
                try:
                    core = gcore_of(proc.pid, workdir)
                finally:
                    proc.kill()
                    proc.wait()
                bench_optable(args, workdir, core)
        return
    if args.only:
        with tempfile.TemporaryDirectory(prefix="torch_bench_") as workdir:
            (bench_trace if args.only == "trace" else bench_break)(args, workdir)
        return
    with tempfile.TemporaryDirectory(prefix="torch_bench_") as workdir:
        proc = start_process(workdir)
        try:
            bench_attach(args, proc.pid)
            core = gcore_of(proc.pid, workdir)
        finally:
            proc.kill()
            proc.wait()
        log("core: %d MB" % (os.path.getsize(core) >> 20))
        bench_optable(args, workdir, core)
        bench_trace(args, workdir)
        bench_break(args, workdir)


if __name__ == "__main__":
    main()
