#!/usr/bin/env python3
"""Python kernels and Python frames in the dispatch answers, against the process's own account
(issue 37; the process is the oracle).

python_dispatch_program.py runs under a real CPython with torch (the host's 3.11 with torch 1.13,
or 3.13 / 3.14 in the trixie / sid root, as a container runs): a Python CPU kernel re-enters its own
operator (dscopetest::again) through the dispatcher 40 levels deep, called from nested nn.Modules,
and writes its kernel's Python function and its threads' traceback.format_stack(). Checked:

  --check SUITE_stop   it stands still: dscope pid, GDB and lldb-16 attached, each in one session:
                       * `op-table dscopetest::again --key CPU` names the kernel by its Python
                         function, "module.qualname at file:LINE", as the program says; so does
                         `op-table OP --key CPU|Meta` for every other Python kernel it registered:
                         a Python meta kernel (Library.impl at Meta) and on 2.x a custom_op's CPU
                         and fake kernels and register_fake's, each by the function torch.library
                         handed the dispatcher (torch's own wrappers there, as the program says);
                       * `dispatch-trace --full` prints, under the native frames of the
                         interpreter's evaluation loop, exactly the main thread's Python frames,
                         in order; `dispatch-trace`'s loop diagnosis names the operator, CPU and
                         the Python kernel;
                       * `dispatch-summary`: the signature is infinite-redispatch dscopetest::again
                         CPU kernel=module.qualname, and each thread's innermost Python frame is
                         the program's;
                       and the three front ends print the same text.
                       `dispatch-trace --json` carries the same frames, loop and diagnosis.
  --check SUITE_crash  it segfaults inside the Python kernel (ctypes.string_at(0)): the kernel core,
                       read by dscope core and GDB, gives the same kernel names and signature and
                       the crashed thread's innermost Python frames (its ctypes frame, then the
                       program's).
  --check SUITE_gcore  it stands still as for stop, and GDB's gcore writes its core: dscope core,
                       GDB and lldb-16 on the core answer as the live process must.

SUITE is host, trixie or sid. Exits 0 when every answer holds, 1 naming the problems, 77 when the
check cannot run here."""

import argparse
import difflib
import json
import os
import pathlib
import re
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import python_bt_test as bt  # noqa: E402  (the program runner and the front ends' sessions)

PROGRAM = HERE / "python_dispatch_program.py"
SKIP = 77


class DispatchProgram(bt.StacksProgram):
    """python_dispatch_program.py MODE, as StacksProgram runs its program; "crash" ends by itself,
    its kernel core in its folder (found_core)."""

    PROGRAM = PROGRAM

    def __init__(self, workdir, mode, suite=None, roots_script=None):
        super().__init__(workdir, suite, roots_script, args=[mode], until_exit=mode == "crash")


COMMANDS = [("op-table", "op-table dscopetest::again --key CPU"), ("trace", "dispatch-trace --full"),
            ("loop", "dispatch-trace"), ("summary", "dispatch-summary"), ("trace json", "dispatch-trace --full --json"),
            ("loop json", "dispatch-trace --json")]
PY_LINE = re.compile(r'^\s+(File ".*", line (?:\d+|None), in .*)$')


def commands(o):
    """COMMANDS, then op-table OP --key K for every other Python kernel the program registered at
    CPU or Meta (a Python meta kernel; on 2.x a custom_op's kernel and fake kernel, register_fake's)."""
    return COMMANDS + [("kernel %s %s" % (op, key), "op-table %s --key %s" % (op, key))
                       for op, keys in sorted(o["registered"].items()) if op != "dscopetest::again" for key in sorted(keys)]


def python_lines(trace):
    """The Python frames a dispatch-trace text prints, in its order."""
    return [m.group(1) for m in (PY_LINE.match(line) for line in trace.splitlines()) if m]


def function_text(f):
    """A Python function as a Python kernel's name gives it, from the process's account of it (its
    __module__, __qualname__, __code__.co_filename and co_firstlineno): "module.qualname at
    file:LINE", without "module." where __module__ is no name."""
    return "%s%s at %s:%d" % (f["module"] + "." if f["module"] else "", f["qualname"], f["file"], f["line"])


def kernel_text(o):
    return function_text(o["kernel"])


def json_thread(answer):
    """The one thread of a dispatch-trace --json answer (None when it is not one)."""
    try:
        threads = json.loads(answer)["threads"]
        return threads[0] if len(threads) == 1 else None
    except (ValueError, KeyError, TypeError, IndexError):
        return None


def json_python(thread):
    """The Python frames a dispatch-trace --json thread holds, innermost first, as traceback prints them."""
    frames = thread["frames"] if thread["cycle"] is None else thread["top"] + thread["cycle"]["frames"]
    return ['File "%s", line %s, in %s' % (p["file"], p["line"], p["name"]) if "corrupt" not in p else "(corrupt)"
            for f in frames for p in f["python"]]


def check(who, answers, transcript, o, stopped):
    """The problems with one front end's answers."""
    problems = []
    asked = commands(o)
    if set(answers) < {name for name, _ in asked}:
        return ["%s answered %d of %d commands:\n%s" % (who, len(answers), len(asked), transcript[-3000:])]
    kernel = kernel_text(o)
    if "symbol: " + kernel not in answers["op-table"]:
        problems.append("%s op-table: no 'symbol: %s' in\n%s" % (who, kernel, answers["op-table"]))
    # Each other Python kernel by the function the registration handed the dispatcher, as the
    # process says of it.
    for op, keys in o["registered"].items():
        for key, function in keys.items():
            name = "kernel %s %s" % (op, key)
            if name in answers and "  symbol: " + function_text(function) not in answers[name].splitlines():
                problems.append("%s op-table %s --key %s: no 'symbol: %s' in\n%s" % (
                    who, op, key, function_text(function), answers[name]))
    # dispatch-trace --full: the Python frames under the evaluation loops, in order, are the thread's.
    trace = answers["trace"]
    python = python_lines(trace)
    want = [line.strip() for line in o["main"]["frames"]]
    if not stopped:  # the crashed thread: its ctypes frame first, then the program's own
        python = python[1:] if python and "ctypes" in python[0] else ["(no ctypes frame first)"] + python
    if python != want:
        diff = difflib.unified_diff(want, python, "the process", who, lineterm="", n=1)
        problems.append("%s dispatch-trace --full: its Python frames differ from the thread's own (%d and %d):\n%s" % (
            who, len(want), len(python), "\n".join(list(diff)[:30])))
    # --json: the same frames, and (stopped) the loop's kernel and the text's diagnosis.
    thread = json_thread(answers["trace json"])
    if not thread or json_python(thread) != [line.strip() for line in python_lines(trace)]:
        problems.append("%s dispatch-trace --full --json: not the text's Python frames:\n%s" % (who, answers["trace json"][:3000]))
    if stopped:
        # The loop in the innermost 400 frames (--full walks to main, where the cycle ends).
        diagnosis = next((line for line in answers["loop"].splitlines() if "diagnosis:" in line), "")
        for part in ("dscopetest::again", "CPU", kernel):
            if part not in diagnosis:
                problems.append("%s dispatch-trace: the diagnosis does not name %r: %r" % (who, part, diagnosis))
        thread = json_thread(answers["loop json"])
        kernels = thread["cycle"]["kernels"] if thread and thread["cycle"] else []
        if [(k["op"], k["key"], k["kernel"].split(", registered at")[0]) for k in kernels] != [("dscopetest::again", "CPU", kernel)] \
                or "diagnosis: %s" % thread["diagnosis"] != diagnosis.strip():
            problems.append("%s dispatch-trace --json: not the loop of %s at CPU, or not the text's diagnosis:\n%s" % (
                who, kernel, answers["loop json"][:3000]))
    # dispatch-summary: the signature and each thread's innermost Python frame.
    summary = answers["summary"]
    signature = "signature: infinite-redispatch dscopetest::again CPU kernel=%s.%s" % (o["kernel"]["module"],
                                                                                     o["kernel"]["qualname"])
    if signature not in summary.splitlines():
        problems.append("%s dispatch-summary: no line %r in\n%s" % (who, signature, summary))
    innermost = [line.strip() for line in summary.splitlines() if line.strip().startswith("python: ")]
    wanted = ["python: " + o["main"]["frames"][0].strip() if stopped else "(the crashed thread's ctypes frame)",
              "python: " + o["side"]["frames"][0].strip()]
    if stopped and sorted(innermost) != sorted(wanted):
        problems.append("%s dispatch-summary: innermost Python frames %s, the process says %s" % (who, innermost, wanted))
    if not stopped and wanted[1] not in innermost:
        problems.append("%s dispatch-summary: the side thread's innermost Python frame %r is not among %s" % (
            who, wanted[1], innermost))
    return problems


def run(a, suite, mode):
    if suite != "host" and os.geteuid() != 0:
        print("python_dispatch %s_%s: needs root for a container; skipped" % (suite, mode))
        return SKIP
    a.workdir.mkdir(parents=True, exist_ok=True)
    # gcore: the stopped program's gcore core (GDB, with the host's tids), read as the live one is.
    target = DispatchProgram(a.workdir, "crash" if mode == "crash" else "stop", None if suite == "host" else suite,
                             a.roots_script)
    results, problems = {}, []
    asked = commands(target.oracle)
    try:
        if mode == "stop":
            results["dscope pid"] = bt.dscope_session(a.dscope, ["pid", target.pid], asked, a.workdir)
            for debugger, plugin in bt.front_ends(a):
                results["%s attached" % bt.label(debugger)] = bt.debugger_session(
                    debugger, plugin, asked, program=target.program if target.root else None, pid=target.pid,
                    sysroot=target.live_sysroot)
        else:
            core = target.found_core() if mode == "crash" else target.gcore(a.workdir / "python_dispatch.gcore")[0]
            results["dscope core"] = bt.dscope_session(a.dscope, ["core", core, target.program], asked, a.workdir,
                                                       sysroot=target.core_sysroot)
            for debugger, plugin in bt.front_ends(a) if mode == "gcore" else [("gdb", a.gdb_script)]:
                results["%s on the core" % bt.label(debugger)] = bt.debugger_session(
                    debugger, plugin, asked, program=target.program, core=core, sysroot=target.core_sysroot)
            core.unlink()
    finally:
        target.kill()
        for core in target.files.glob("core*"):
            core.unlink()
    for who, (answers, transcript) in results.items():
        problems += check(who, answers, transcript, target.oracle, mode != "crash")
    texts = {who: {name: answers.get(name) for name, _ in asked} for who, (answers, _t) in results.items()}
    first = next(iter(texts))
    for who, text in texts.items():
        for name, _ in asked:
            if text[name] != texts[first][name]:
                problems.append("%s and %s answer %s differently:\n--- %s\n%s\n--- %s\n%s" % (
                    first, who, name, first, texts[first][name], who, text[name]))
    target.remove()
    o = target.oracle
    print("python_dispatch %s_%s: Python %s, torch %s, %s, depth %d: %d problems" % (
        suite, mode, o["python"], o["torch"], kernel_text(o), o["depth"], len(problems)))
    return bt.report(problems)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", required=True)
    p.add_argument("--dscope", required=True)
    p.add_argument("--gdb-script", required=True)
    p.add_argument("--lldb-plugin")
    p.add_argument("--roots-script", type=pathlib.Path)
    p.add_argument("--workdir", type=pathlib.Path, required=True)
    a = p.parse_args()
    suite, mode = a.check.split("_")
    sys.exit(run(a, suite, mode))


if __name__ == "__main__":
    main()
