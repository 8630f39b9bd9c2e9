#!/usr/bin/env python3
"""`dispatch-trace --frames` benchmark, GDB and LLDB side by side (docs/PERFORMANCE.md, section
"dispatch-trace --frames").

Run after building the release preset with the LLDB plugin:

    python3 bench/frames_bench.py --build build/release              # about 2 minutes
    python3 bench/frames_bench.py --build build/release --repeats 3

`--frames` rebuilds the dispatch chain from the native stack (for runtimes built without the
dispatch records), so its cost grows with the frames it walks: --max-frames stack frames (20 000 by
default) on a kernel core of samples/infinite_redispatch (8 MiB stack, as bench/debuggers.py makes
it). The fair native yardstick is a `bt` over the same stack frames: each debugger lists inlined
calls as extra frames (GDB 6 per my_add cycle, LLDB 5, for 3 stack frames), so the bench first asks
each debugger how many of its frames the first --max-frames stack frames hold (N), then times, in
the same rounds, interleaved:

  frames  gdb -batch -nx -x BUILD/gdb/dscope-gdb.py -ex 'dispatch-trace --frames' PROG CORE
          lldb-16 -b -O 'plugin load BUILD/lldb/libdscope_lldb.so' -c CORE PROG -o 'dispatch-trace --frames'
  walk    a Python loop that only walks those frames (gdb.Frame.older, SBThread.GetFrameAtIndex):
          the floor for any walk through the debugger's Python API
  bt N    gdb -batch -nx -ex 'bt N' PROG CORE > /dev/null
          lldb-16 -b -c CORE PROG -o 'bt N' > /dev/null

Each figure is the command's own time, measured inside the debugger (start-up and core load
excluded), best and median of --repeats; the whole process's wall time is printed beside it.
One "frames_bench:" line per debugger, then one comparing the two.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from debuggers import Debugger, fail, log, make_core, require  # noqa: E402

# Walks the stack as the inspect library counts it (a stack frame is counted when a frame that is
# not inlined is read) and writes how many of the debugger's frames hold the first {k} stack frames.
COUNT_GDB = r'''
import gdb
f, listed, stack = gdb.newest_frame(), 0, 0
while f is not None and stack < {k}:
    listed += 1
    stack += f.type() != gdb.INLINE_FRAME
    f = f.older()
open({out!r}, "w").write("%d %d" % (listed, stack))
'''
COUNT_LLDB = r'''
thread, listed, stack = lldb.process.GetSelectedThread(), 0, 0
while listed < thread.GetNumFrames() and stack < {k}:
    stack += not thread.GetFrameAtIndex(listed).IsInlined()
    listed += 1
open({out!r}, "w").write("%d %d" % (listed, stack))
'''


def unwind_command(dbg, workdir, stack_frames):
    """(a command that walks the innermost stack_frames stack frames in the debugger's Python API and
    nothing else, how many frames the debugger lists for them)."""
    out = os.path.join(workdir, dbg.name + "_frames")
    script = COUNT_GDB if dbg.name == "gdb" else COUNT_LLDB
    command = dbg.script_command(script.format(k=stack_frames, out=out), workdir)
    dbg.timed(command, False, workdir)
    listed, stack = map(int, open(out).read().split())
    if stack != stack_frames:
        fail("%s unwound only %d stack frames" % (dbg.name, stack))
    return command, listed


def check_frames_output(dbg, workdir, stack_frames):
    """dispatch-trace --frames must have walked the whole bound; returns its dispatch depth."""
    _, _, out = dbg.timed("dispatch-trace --frames", True, workdir, stdout=subprocess.PIPE)
    walked = "{:,} frames walked".format(stack_frames).replace(",", " ")
    m = re.search(r"dispatch depth ([\d ]+)", out)
    if walked not in out or not m or "Traceback" in out:
        fail("%s dispatch-trace --frames did not walk %s:\n%s" % (dbg.name, walked, out[-2000:]))
    return m.group(1).strip()


def best_median(values):
    return min(values), statistics.median(values)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default="build/release")
    parser.add_argument("--repeats", type=int, default=5, help="rounds (default 5)")
    args = parser.parse_args()
    args.build = os.path.abspath(args.build)
    require(args.build, ("lldb/libdscope_lldb.so", "gdb/dscope-gdb.py", "samples/infinite_redispatch"))
    stack_frames = 20000  # dispatch-trace --frames' default bound (docs/USER-GUIDE.md, section 4.3)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="frames_bench.") as workdir:
        prog = os.path.join(args.build, "samples", "infinite_redispatch")
        core = make_core(workdir, [prog], 8192, "redispatch-8MiB")
        debuggers = [Debugger(name, args.build, prog, core) for name in ("gdb", "lldb")]
        depth = {d.name: check_frames_output(d, workdir, stack_frames) for d in debuggers}
        unwind = {d.name: unwind_command(d, workdir, stack_frames) for d in debuggers}
        listed = {n: unwind[n][1] for n in unwind}
        log("frames_bench: core %.1f MB; the first %d stack frames are %s; dispatch depth walked: %s"
            % (os.path.getsize(core) / 1e6, stack_frames,
               ", ".join("%d %s frames" % (listed[n], n) for n in listed),
               ", ".join("%s %s" % (depth[n], n) for n in depth)))
        results = {}
        for _ in range(args.repeats):  # interleaved, so the machine's load falls on all alike
            for d in debuggers:
                for kind, (command, plugin) in (("frames", ("dispatch-trace --frames", True)),
                                                ("unwind", (unwind[d.name][0], False)),
                                                ("bt", ("bt %d" % listed[d.name], False))):
                    results.setdefault((d.name, kind), []).append(d.timed(command, plugin, workdir)[:2])
        best = {}
        for d in debuggers:
            fig = {}
            for kind in ("frames", "unwind", "bt"):
                runs = results[d.name, kind]
                log("  %-4s %-6s command: %s; wall: %s" % (d.name, kind, " ".join("%.2f" % c for c, _ in runs),
                                                          " ".join("%.2f" % w for _, w in runs)))
                fig[kind] = best_median([c for c, _ in runs])
            best[d.name] = fig["frames"][0]
            print("frames_bench: %-4s %d stack frames (%d %s frames): dispatch-trace --frames %.2f s (median %.2f); "
                  "Python frame walk %.2f s (median %.2f); bt %.2f s (median %.2f) -> --frames / walk %.2fx, "
                  "bt / --frames %.2fx (best/best)"
                  % (d.name, stack_frames, listed[d.name], d.name, fig["frames"][0], fig["frames"][1],
                     fig["unwind"][0], fig["unwind"][1], fig["bt"][0], fig["bt"][1],
                     fig["frames"][0] / fig["unwind"][0], fig["bt"][0] / fig["frames"][0]), flush=True)
        print("frames_bench: dispatch-trace --frames, lldb / gdb: %.2fx (best)" % (best["lldb"] / best["gdb"]),
              flush=True)
    log("frames_bench: done in %.0f s, %d rounds" % (time.monotonic() - start, args.repeats))


if __name__ == "__main__":
    main()
