#!/usr/bin/env python3
"""Python frames (issue 37): python-bt and dispatch-trace's Python frames, timed on real cores.

  python3 bench/python_frames.py [--build build/release] [--baseline OLD_BUILD] [--repeats 9]
                                 [--only stacks,trace,pybt] [--dbg-tree DIR] [--keep DIR]

Every figure is a whole process (start-up, the core's loading and the answer), run --repeats times
after one warm-up; medians of wall and CPU seconds (ru_utime + ru_stime) and the largest peak RSS;
two commands compared run in turn, A B A B ..., and their ratio is the median of the pairs' ratios.

  stacks  tests/python/python_stacks_program.py under /usr/bin/python3 (Debian 12: CPython 3.11,
          torch 1.13; 8 threads or more, 6 of them Python threads with frames), a gcore core of it:
          `dscope core CORE /usr/bin/python3.11 python-bt --all` (goal: <= 0.1 s) and the same
          command inside GDB (dscope-gdb.py, the core loaded; `gdb -batch` alone as its floor).
  trace   bench/python_recursion_program.py 200 (a Python CPU kernel calling its operator again
          through torch.ops, 200 deep, then SIGSEGV; its kernel core): `dscope core CORE PY
          dispatch-trace` of --build (Python frames under each _PyEval_EvalFrameDefault frame)
          against --baseline (a build from before Python support, 63182cd: `cmake --build --preset
          release --target dscope dscope_inspect` in a worktree of it) (goal: <= 1.3x), and the same
          in GDB: `gdb -batch -nx -ex "source B/gdb/dscope-gdb.py" -ex "core-file CORE" -ex
          dispatch-trace PY`, B each build. dispatch-trace walks the innermost 400 frames and folds
          the repeating cycle (two evaluation loops, two Python frames); so again with --full: every
          one of the stack's ~3 000 frames, ~400 evaluation loops with a Python frame each.
  pybt    GDB's own `thread apply all py-bt` (CPython's Tools/gdb/libpython.py, which needs the
          interpreter's debug info) against `python-bt --all` (dscope core, and inside GDB) on a
          gcore core of the stacks program run by an interpreter whose debug info is at hand: the
          host's python3.11 has none (installing python3.11-dbg would move the host's python3.11
          to the dbg package's version, and with it the build-id the shipped profile is for), so
          --dbg-tree DIR holds a private copy of Debian's python3.11 with python3.11-dbg beside it
          (made when missing: `apt-get download` of the candidate version's python3.11-minimal,
          libpython3.11-minimal, libpython3.11-stdlib, python3.11-dbg, python3.11-dev and
          libpython3.11-dev, each unpacked with `dpkg -x`; nothing installed), torch from the
          host's dist-packages (PYTHONPATH), and its profile written by dscope-python-profile into
          DIR/profiles (DSCOPE_PROFILE_PATH).

Each answer is checked before it is timed: python-bt's blocks name the program's functions, the
new trace shows op_cpu's Python frames and the baseline's none, py-bt shows the same functions.
Prints one summary line per figure; the numbers go to docs/PERFORMANCE.md ("Issue 37: Python
frames")."""

import argparse
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests", "python"))
from core_vs_eustack import timed  # noqa: E402
from debuggers import GDB, fail, log, make_core, summary  # noqa: E402
import python_bt_test  # noqa: E402 (the tests' own way to run the stacks program and gcore it)

SOURCE = os.path.dirname(HERE)
PYTHON = "/usr/bin/python3.11"
RECURSION = os.path.join(HERE, "python_recursion_program.py")
DEPTH = 200
STACKS_GOAL_S, TRACE_GOAL = 0.1, 1.3
DBG_PACKAGES = ["python3.11-minimal", "libpython3.11-minimal", "libpython3.11-stdlib", "python3.11-dbg",
                "python3.11-dev", "libpython3.11-dev"]
STACK_NAMES = ["nested_three", "walk", "step", "forward", "produce", "awaited", "stop_main"]


def dscope(build):
    return os.path.join(build, "cli", "dscope")


def gdb_session(build, program, core, commands, pre=()):
    """`gdb -batch -nx` with dscope-gdb.py sourced (build None: without), the core loaded, commands."""
    argv = [GDB, "-batch", "-nx", "-iex", "set debuginfod enabled off"] + list(pre)
    if build:
        argv += ["-ex", "source " + os.path.join(build, "gdb", "dscope-gdb.py")]
    argv += ["-ex", "file " + program, "-ex", "core-file " + core]
    for c in commands:
        argv += ["-ex", c]
    return argv


def measure(variants, repeats):
    """{name: [(wall, cpu, rss MiB, out)]}: a warm-up each, then the variants in turn."""
    for argv, check in variants.values():
        check(timed(argv)[3])
    runs = {name: [] for name in variants}
    for _ in range(repeats):
        for name, (argv, check) in variants.items():
            runs[name].append(timed(argv))
            check(runs[name][-1][3])
    return runs


def med(runs, name, i):
    return statistics.median(r[i] for r in runs[name])


def ratio(runs, a, b, i=0):
    return statistics.median(x[i] / y[i] for x, y in zip(runs[a], runs[b]))


def figure(runs, name):
    return "%.3f s wall, %.3f s cpu, %.0f MiB" % (med(runs, name, 0), med(runs, name, 1), max(r[2] for r in runs[name]))


# ---- the checks of each answer


def check_stacks(text):
    """python-bt --all on the stacks program's core: its Python threads' functions."""
    blocks = re.findall(r"^Python stack of thread .*$", text, re.M)
    missing = [n for n in STACK_NAMES if not re.search(r", in %s$" % n, text, re.M)]
    if len(blocks) < 8 or missing:
        fail("python-bt --all: %d blocks, missing %s:\n%s" % (len(blocks), missing, text[-3000:]))


def check_py_bt(text):
    missing = [n for n in STACK_NAMES if not re.search(r"\b%s\b" % n, text)]
    if missing or "Python Exception" in text:
        fail("py-bt names no %s:\n%s" % (missing, text[-3000:]))


FILE_LINE = re.compile(r'^  File "(.*)", line (\d+), in (.*)$')


def frames_by_thread(text, header):
    """{tid: [(file, line, function)]} of a py-bt or python-bt answer: each header line (its tid in
    group 1) followed by its frames' File lines."""
    found, tid = {}, None
    for line in text.splitlines():
        m = header.match(line)
        if m:
            tid = int(m.group(1))
            found[tid] = []
        elif tid is not None and FILE_LINE.match(line):
            found[tid].append(FILE_LINE.match(line).groups())
    return found


PY_BT_THREAD = re.compile(r"^Thread \d+ \(Thread 0x[0-9a-f]+ \(LWP (\d+)\)\):")
PYTHON_BT_THREAD = re.compile(r"^Python stack of thread (\d+)")


def same_frames(py_bt, python_bt):
    """The threads whose frames differ between GDB's py-bt and python-bt (file, line, function)."""
    a, b = frames_by_thread(py_bt, PY_BT_THREAD), frames_by_thread(python_bt, PYTHON_BT_THREAD)
    return len(b), [tid for tid in sorted(set(a) | set(b)) if a.get(tid) != b.get(tid)]


def check_trace(with_python, full):
    """dispatch-trace on the recursion core: the stack's evaluation loops, and under them (new) the
    Python frames that each runs: op_cpu's at every level with --full, in the folded cycle without."""
    def check(text):
        loops = text.count("_PyEval_EvalFrameDefault")
        frames = len(re.findall(r'File ".*python_recursion_program\.py", line \d+, in op_cpu', text))
        want = (DEPTH + 1 if full else 1) if with_python else 0
        if loops < (2 * DEPTH if full else 2) or frames < want or (not with_python and frames):
            fail("dispatch-trace%s: %d evaluation loops, %d op_cpu frames (expected %s%d):\n%s" % (
                " --full" if full else "", loops, frames, "" if with_python else "exactly ", want, text[-3000:]))
    return check


def accept(_text):
    pass


# ---- the cores


def stacks_core(workdir, python=None, env=None):
    """A gcore core of python_stacks_program.py (under python), as python_bt_test makes it."""
    saved = dict(os.environ)
    os.environ.update(env or {})
    python_bt_test.TORCH_PYTHON = python or "/usr/bin/python3"
    try:
        python_bt_test.session.keep_file_pages_in_cores()
        program = python_bt_test.StacksProgram(pathlib.Path(workdir))
        try:
            core, _lost = program.gcore(pathlib.Path(workdir) / "stacks.core")
            threads = len(program.threads())
        finally:
            program.kill()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    log("stacks core: %s (%d MB, %d threads, Python %s)" % (core, os.path.getsize(core) >> 20, threads,
                                                           program.oracle["python"]))
    return str(core), program.oracle["executable"]


def recursion_core(workdir):
    core = make_core(workdir, [PYTHON, RECURSION, str(DEPTH)], 8192, "recursion")
    log("recursion core: %s (%d MB)" % (core, os.path.getsize(core) >> 20))
    return core


def dbg_tree(path):
    """A private python3.11 with its debug info (see --dbg-tree); (interpreter, env, gdb options)."""
    python = os.path.join(path, "usr", "bin", "python3.11")
    if not os.path.exists(python):
        version = re.search(r"Candidate: (\S+)", subprocess.run(["apt-cache", "policy", "python3.11-dbg"],
                                                                capture_output=True, text=True).stdout)
        if not version:
            fail("apt-cache knows no python3.11-dbg")
        debs = os.path.join(path, "debs")
        os.makedirs(debs, exist_ok=True)
        subprocess.run(["apt-get", "download"] + ["%s=%s" % (p, version.group(1)) for p in DBG_PACKAGES], cwd=debs,
                       check=True, stdout=subprocess.DEVNULL)
        for deb in sorted(os.listdir(debs)):
            subprocess.run(["dpkg", "-x", os.path.join(debs, deb), path], check=True)
    profiles = os.path.join(path, "profiles")
    if not os.path.isdir(profiles):
        subprocess.run([sys.executable, os.path.join(SOURCE, "profiles", "probe", "dscope-python-profile"),
                        "--python", python, "--output", profiles], check=True)
    gdb_script = os.path.join(path, "usr", "share", "gdb", "auto-load", "usr", "bin", "python3.11-gdb.py")
    env = {"PYTHONPATH": "/usr/lib/python3/dist-packages", "DSCOPE_PROFILE_PATH": profiles}
    pre = ["-iex", "set debug-file-directory %s/usr/lib/debug" % path, "-iex", "set auto-load safe-path /"]
    return python, env, pre, gdb_script


# ---- the figures


def run_stacks(a, workdir):
    core, program = stacks_core(workdir)
    variants = {
        "dscope": ([dscope(a.build), "core", core, program, "python-bt", "--all"], check_stacks),
        "gdb": (gdb_session(a.build, program, core, ["python-bt --all"]), check_stacks),
        "gdb alone": (gdb_session(None, program, core, []), accept),
    }
    runs = measure(variants, a.repeats)
    wall = med(runs, "dscope", 0)
    summary("stacks: dscope core python-bt --all %s (goal <= %g s: %s); inside GDB %s, GDB loading the core alone %s; "
            "medians of %d" % (figure(runs, "dscope"), STACKS_GOAL_S, "met" if wall <= STACKS_GOAL_S else "missed",
                               figure(runs, "gdb"), figure(runs, "gdb alone"), a.repeats))


def run_trace(a, workdir):
    core = recursion_core(workdir)
    for options in ([], ["--full"]):
        full = bool(options)
        command = ["dispatch-trace"] + options
        variants = {"new": ([dscope(a.build), "core", core, PYTHON] + command, check_trace(True, full))}
        if a.baseline:
            variants["old"] = ([dscope(a.baseline), "core", core, PYTHON] + command, check_trace(False, full))
        variants["gdb new"] = (gdb_session(a.build, PYTHON, core, [" ".join(command)]), check_trace(True, full))
        if a.baseline:
            variants["gdb old"] = (gdb_session(a.baseline, PYTHON, core, [" ".join(command)]), check_trace(False, full))
        runs = measure(variants, a.repeats)
        for front, new, old in [("dscope core", "new", "old"), ("GDB", "gdb new", "gdb old")]:
            line = "trace, %s %s (%d Python kernels deep): new %s" % (front, " ".join(command), DEPTH, figure(runs, new))
            if a.baseline:
                r = ratio(runs, new, old)
                line += "; baseline %s; new / baseline %.3f wall, %.3f cpu (goal <= %g: %s)" % (
                    figure(runs, old), r, ratio(runs, new, old, 1), TRACE_GOAL, "met" if r <= TRACE_GOAL else "missed")
            summary(line + "; medians of %d" % a.repeats)


def run_pybt(a, workdir):
    python, env, pre, gdb_script = dbg_tree(os.path.abspath(a.dbg_tree))
    core, program = stacks_core(workdir, python, env)
    saved = dict(os.environ)
    os.environ.update(env)  # dscope's DSCOPE_PROFILE_PATH: the private interpreter's profile
    try:
        py_bt = gdb_session(None, program, core, ["source " + gdb_script, "thread apply all py-bt"], pre)
        variants = {
            "py-bt": (py_bt, check_py_bt),
            "dscope": ([dscope(a.build), "core", core, program, "python-bt", "--all"], check_stacks),
            "gdb python-bt": (gdb_session(a.build, program, core, ["python-bt --all"], pre), check_stacks),
            "gdb alone": (gdb_session(None, program, core, ["source " + gdb_script], pre), accept),
        }
        runs = measure(variants, a.repeats)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    threads, differ = same_frames(runs["py-bt"][-1][3], runs["dscope"][-1][3])
    if differ:
        fail("py-bt and python-bt --all differ for threads %s:\n%s\n---\n%s" % (
            differ, runs["py-bt"][-1][3][-3000:], runs["dscope"][-1][3][-3000:]))
    summary("py-bt: the same frames (file, line, function) as python-bt --all for all %d threads" % threads)
    summary("py-bt: GDB's thread apply all py-bt %s; dscope core python-bt --all %s (%.3f of py-bt's wall); GDB "
            "python-bt --all %s (%.3f of py-bt's wall); GDB loading the core and its debug info alone %s; medians of %d"
            % (figure(runs, "py-bt"), figure(runs, "dscope"), ratio(runs, "dscope", "py-bt"), figure(runs, "gdb python-bt"),
               ratio(runs, "gdb python-bt", "py-bt"), figure(runs, "gdb alone"), a.repeats))
    if a.keep:
        for name in ("py-bt", "dscope"):
            with open(os.path.join(a.keep, "pybt-%s.txt" % name.replace(" ", "-")), "w") as f:
                f.write(runs[name][-1][3])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default="build/release")
    parser.add_argument("--baseline", help="a build from before Python support (its cli/dscope and gdb/dscope-gdb.py)")
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--only", default="stacks,trace,pybt")
    parser.add_argument("--dbg-tree", default=os.path.expanduser("~/.cache/dscope/python3.11-dbg"),
                        help="pybt: the private python3.11 with its debug info (made when missing)")
    parser.add_argument("--keep", help="a folder for the last answers (pybt)")
    a = parser.parse_args()
    a.build = os.path.abspath(a.build)
    a.baseline = os.path.abspath(a.baseline) if a.baseline else None
    for build in [a.build] + ([a.baseline] if a.baseline else []):
        if not os.path.exists(dscope(build)):
            fail("%s missing: cmake --build %s" % (dscope(build), build))
    if open("/proc/sys/kernel/core_pattern").read().startswith("|"):
        fail("kernel.core_pattern pipes cores to a program; the trace needs a core file")
    with tempfile.TemporaryDirectory(prefix="python_frames_") as workdir:
        for part in a.only.split(","):
            os.makedirs(os.path.join(workdir, part))
            {"stacks": run_stacks, "trace": run_trace, "pybt": run_pybt}[part](a, os.path.join(workdir, part))


if __name__ == "__main__":
    main()
