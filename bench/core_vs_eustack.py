#!/usr/bin/env python3
"""dscope core against elfutils' eu-stack (issue 35): the tool a user reaches for first on a core.

  python3 bench/core_vs_eustack.py [--build build/release] [--repeats 5]
  python3 bench/core_vs_eustack.py --core CORE --executable EXE [--sysroot DIR]   # any core (DIR: as root)
  python3 bench/core_vs_eustack.py --baseline OTHER_BUILD                         # before/after

On an overflow core (by default tests/torch/torch_loop.cpp's `self` scenario, made here with an
8 MiB stack: real PyTorch, ~80 000 frames), `dscope core CORE EXE` (the default summary, which
must name the loop) against `eu-stack -n 400 --core CORE --executable EXE` (every thread's 400
innermost frames, symbolized): goal dscope <= 2x eu-stack's wall time. The two run in turn
(A B A B ...), each run a whole process; the ratio is taken pair by pair and its median quoted,
with median wall and CPU seconds and the largest peak RSS (ru_maxrss) of each. With --baseline, a
second dscope build runs in the same rotation (the same core, the same arguments): its own ratio
to eu-stack and the new build's to it. Prints one summary line per figure; the numbers go to
docs/PERFORMANCE.md.

eu-stack (elfutils 0.188) has no sysroot option: it opens the files a core names at their own
paths. With --sysroot DIR (a core written in a container whose root is DIR, a merged-/usr Debian
root), eu-stack runs in a private mount namespace with DIR/usr bound over /usr, so each path the
core names is DIR's file; eu-stack itself is this machine's binary with this machine's libraries,
copied beforehand with its dynamic loader and started through it (/usr is the root's inside). That
needs root (unshare -m); the copy's start-up costs what the installed binary's does."""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from debuggers import fail, log, make_core, summary  # noqa: E402

EU_STACK = "eu-stack"
GOAL = 2.0


def timed(argv, accept=(0,)):
    """(wall seconds, CPU seconds, peak RSS MiB, stdout) of one run."""
    start = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.monotonic() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in accept:
        fail("%s exited with %d" % (" ".join(argv[:4]), code))
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out.decode(errors="replace")


def eu_stack_in_root(workdir, sysroot):
    """The argv prefix that runs this machine's eu-stack with sysroot's /usr in place of /usr."""
    if os.geteuid() != 0:
        fail("--sysroot runs eu-stack in a private mount namespace (unshare -m, mount --bind): run as root")
    binary = shutil.which(EU_STACK) or fail("eu-stack missing (apt-get install elfutils)")
    copy = os.path.join(workdir, "eu-stack-host")
    os.mkdir(copy)
    ldd = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
    loader = None
    for library in re.findall(r"(/\S+) \(0x", ldd):
        shutil.copy(os.path.realpath(library), os.path.join(copy, os.path.basename(library)))
        if "ld-linux" in library:
            loader = os.path.join(copy, os.path.basename(library))
    shutil.copy(binary, copy)
    if not loader:
        fail("no dynamic loader in ldd %s:\n%s" % (binary, ldd))
    return ["unshare", "-m", "--propagation", "private", "sh", "-c", 'mount --bind "$0/usr" /usr && exec "$@"',
            os.path.abspath(sysroot), loader, "--library-path", copy, os.path.join(copy, os.path.basename(binary))]


def check_summary(text):
    """The summary must have found and named the loop, as the default summary does on an overflow."""
    if "loop: a cycle of" not in text or "signature: infinite-redispatch" not in text:
        fail("dscope core's summary names no loop:\n" + text[-2000:])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default="build/release")
    parser.add_argument("--baseline", help="a second build (its cli/dscope) run in the same rotation")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--core", help="an overflow core (default: torch_loop self's, made here)")
    parser.add_argument("--executable", help="the program of --core")
    parser.add_argument("--sysroot", help="passed to dscope core (a core written in another root)")
    parser.add_argument("--frames", type=int, default=400, help="eu-stack -n (default 400)")
    args = parser.parse_args()
    if bool(args.core) != bool(args.executable):
        fail("--core and --executable go together")
    builds = {"dscope": os.path.abspath(args.build)}
    if args.baseline:
        builds["baseline"] = os.path.abspath(args.baseline)
    for build in builds.values():
        if not os.path.exists(os.path.join(build, "cli", "dscope")):
            fail("%s/cli/dscope missing: cmake --build %s" % (build, build))
    with tempfile.TemporaryDirectory(prefix="core_vs_eustack_") as workdir:
        if args.core:
            core, program = os.path.abspath(args.core), os.path.abspath(args.executable)
        else:
            program = os.path.join(builds["dscope"], "tests", "torch_loop")
            if not os.path.exists(program):
                fail("%s missing: cmake --build %s" % (program, args.build))
            core = make_core(workdir, [program, "self"], 8192, "torch_loop")
        log("core: %s (%d MB), program %s" % (core, os.path.getsize(core) >> 20, program))
        sysroot = ["--sysroot", args.sysroot] if args.sysroot else []
        variants = {name: ([os.path.join(build, "cli", "dscope"), "core"] + sysroot + [core, program], (0,))
                    for name, build in builds.items()}
        # eu-stack exits 1 when a thread has more frames than -n shows.
        eu_stack = eu_stack_in_root(workdir, args.sysroot) if args.sysroot else [EU_STACK]
        variants["eu-stack"] = (eu_stack + ["-n", str(args.frames), "--core", core, "--executable", program], (0, 1))
        for argv, accept in variants.values():  # a warm-up each: the core and the libraries in the page cache
            timed(argv, accept)
        runs = {v: [] for v in variants}
        for _ in range(args.repeats):
            for name, (argv, accept) in variants.items():
                runs[name].append(timed(argv, accept))
                if name != "eu-stack":
                    check_summary(runs[name][-1][3])
        wall = {v: statistics.median(r[0] for r in rs) for v, rs in runs.items()}
        cpu = {v: statistics.median(r[1] for r in rs) for v, rs in runs.items()}
        mem = {v: max(r[2] for r in rs) for v, rs in runs.items()}

        def ratio(a, b, i=0):
            return statistics.median(x[i] / y[i] for x, y in zip(runs[a], runs[b]))

        for name in builds:
            r = ratio(name, "eu-stack")
            summary("%s: dscope core (summary) %.3f s wall, %.3f s cpu, %.0f MiB vs eu-stack -n %d %.3f s, %.3f s cpu, "
                    "%.0f MiB -> %.2fx wall, %.2fx cpu (goal <= %gx: %s); medians of %d pairs"
                    % (name, wall[name], cpu[name], mem[name], args.frames, wall["eu-stack"], cpu["eu-stack"],
                       mem["eu-stack"], r, ratio(name, "eu-stack", 1), GOAL, "met" if r <= GOAL else "missed",
                       args.repeats))
        if args.baseline:
            summary("dscope / baseline: %.3f wall, %.3f cpu; medians of %d pairs"
                    % (ratio("dscope", "baseline"), ratio("dscope", "baseline", 1), args.repeats))


if __name__ == "__main__":
    main()
