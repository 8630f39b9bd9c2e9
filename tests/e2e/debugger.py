#!/usr/bin/env python3
"""Drives a real debugger in batch mode on a real program or core file and checks its output.

  debugger.py --gdb-script build/gdb/dscope-gdb.py --program P [--core C] [--args ...]
              --cmd "dispatch-trace" [--cmd ...] --expect TEXT [--expect ...] [--reject TEXT ...]
  debugger.py --debugger lldb --lldb-plugin build/lldb/libdscope_lldb.so --program P [--core C]
              [--lldb-setting "target.process.thread.max-backtrace-depth 100000"] [--on-crash CMD ...]
              --cmd "process launch" ...

GDB runs as `gdb -nx -batch`, LLDB as `lldb-16 --no-lldbinit -b` with the plugin loaded first;
--cmd takes that debugger's own commands (`run` / `process launch`). In LLDB's batch mode the
commands after one that crashes the program are skipped: --on-crash gives the ones to run then
(lldb -k). Every expected text must appear; rejected texts (always: Python tracebacks, a
crashed LLDB, an unknown command) must not. Exits 0 when all checks pass, 1 otherwise, printing
the whole debugger output either way."""

import argparse
import os
import sys
import time

import session

ALWAYS_REJECT = ["Traceback (most recent call last)", "Python Exception"]
# A crashed lldb prints LLVM's stack dump; a plugin that failed to load leaves our commands unknown.
LLDB_REJECT = ["PLEASE submit a bug report", "Stack dump:", "is not a valid command", "error: plugin load"]


def gdb_command(a):
    command = session.gdb_batch("-ex", "set pagination off", "-x", a.gdb_script)
    for c in a.cmd:
        command += ["-ex", c]
    if a.core:
        command += [a.program, a.core]
    elif a.program:
        command += ["--args", a.program] + a.args
    return command


def lldb_command(a):
    command = [a.lldb, "--no-lldbinit", "-b"]
    for setting in a.lldb_setting:
        command += ["-O", "settings set " + setting]
    command += ["-O", "plugin load " + a.lldb_plugin]
    for c in a.cmd:
        command += ["-o", c]
    for c in a.on_crash:
        command += ["-k", c]
    if a.core:
        command += ["-c", a.core, a.program]
    elif a.program:
        command += ["--", a.program] + a.args
    return command


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--debugger", choices=["gdb", "lldb"], default="gdb")
    p.add_argument("--gdb-script")
    p.add_argument("--lldb-plugin")
    p.add_argument("--lldb", default="lldb-16")
    p.add_argument("--lldb-setting", action="append", default=[])
    p.add_argument("--on-crash", action="append", default=[])
    p.add_argument("--program")
    p.add_argument("--core")
    p.add_argument("--args", nargs=argparse.REMAINDER, default=[])
    p.add_argument("--cmd", action="append", default=[])
    p.add_argument("--expect", action="append", default=[])
    p.add_argument("--reject", action="append", default=[])
    p.add_argument("--timeout", type=float, default=300)
    a = p.parse_args()
    if a.debugger == "gdb" and not a.gdb_script:
        p.error("--gdb-script is required with gdb")
    if a.debugger == "lldb" and not a.lldb_plugin:
        p.error("--lldb-plugin is required with lldb")

    command = gdb_command(a) if a.debugger == "gdb" else lldb_command(a)
    reject = a.reject + ALWAYS_REJECT + (LLDB_REJECT if a.debugger == "lldb" else [])
    env = dict(os.environ)
    if a.debugger == "lldb":
        env.setdefault("LLDB_DEBUGSERVER_PATH", "/usr/lib/llvm-16/bin/lldb-server")
    start = time.monotonic()
    run, aborted = session.run_lldb_aware(command, a.timeout, env)
    if aborted is not None:
        print(aborted)
        print("NOTE: lldb-16 aborted after `process kill` had completed, its own bug (tests/e2e/session.py): "
              "the session ran once more")
    output = run.text
    print(output)
    print("(debugger ran %.2f s)" % (time.monotonic() - start))
    if run.timed_out:
        print("FAIL: the debugger did not finish within %.0f s" % a.timeout)
        return 1
    ok = True
    if run.hung_after_crash:
        print("FAIL: the debugger crashed and hung in its crash handler")
        ok = False
    elif a.debugger == "lldb" and run.returncode < 0:
        print("FAIL: lldb died of signal %d" % -run.returncode)
        ok = False
    for failure in session.text_failures(output, a.expect, reject):
        print(failure)
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
