#!/usr/bin/env python3
"""Runs the same DispatchScope commands in GDB and in lldb-16 on the same target and fails unless
each command prints the same text in both.

  compare_debuggers.py --gdb-script build/gdb/dscope-gdb.py --lldb-plugin build/lldb/libdscope_lldb.so
                       --program P (--core C | --launch [--break FUNC] | --attach-after TEXT)
                       [--args ...] --cmd "dispatch-trace" [--cmd ...]

Targets (the same state in both debuggers):
  --core C            both open the core file C (a kernel core, or one written by gdb's
                      generate-core-file: see --gcore-at).
  --gcore-at FUNC     first runs P under gdb to a breakpoint on FUNC and writes a core with
                      generate-core-file (coredump_filter 0x37, as tests/e2e/expect_crash.sh),
                      then compares on that core.
  --attach-after TEXT this script starts P itself (stdin and stderr /dev/null), reads its stdout
                      until TEXT has appeared --attach-count times, waits --attach-delay seconds
                      and stops it with SIGSTOP. gdb attaches (-p), runs the commands, detaches;
                      then lldb-16 attaches to the same, still stopped process. Both see the very
                      same process state: thread ids, memory, every thread's position. Both
                      select the main thread (tid == pid) before the commands.
  --launch            each debugger starts its own P (stdio /dev/null, address randomization off
                      in both: the debuggers' default). --break FUNC sets a breakpoint by function
                      name first (gdb `break FUNC`, lldb `breakpoint set -n FUNC`); the command
                      "@run" in the --cmd list starts the program there (default: before the
                      first command), so commands can also run before it (dispatch-break pending).
                      --up N then selects the frame N levels up in both (`up N`; lldb has the
                      same command), e.g. the caller's locals. --exits: the program runs to its
                      end at "@run" (no breakpoint), and the commands run with no process.

A command written "@silent COMMAND" must print nothing at all in either debugger (e.g.
`dispatch-break --delete N`); every other command must print something in gdb.

Each command's output is cut out of each debugger's transcript between unique marker lines
(gdb `echo`, lldb `script print`), printed before every command and after the last one. lldb
echoes each command as "(lldb) COMMAND"; that echo line is removed, at its known position only.
The commands run with lldb's `command source -e false` so that an error does not end the batch.

Normalization rules (the only ones; everything else must match byte for byte):
  * --launch only: the two debuggers ran two processes, so their process ids differ. Each
    debugger reports its inferior's pid; that number, as a whole word, becomes "<pid>" in that
    debugger's outputs. (In a single-threaded program the main thread's tid is the pid.) This
    cannot hide a real difference: any other number that happens to equal one of the two pids
    is replaced in that debugger's output only and shows up as a difference. The other modes
    need no rule: both debuggers read one core or one process.
  * The output of "@run" is the debugger's own (process started, stop report) and is not
    compared, except its lines that DispatchScope prints (starting "dispatch-break" or
    "dscope:"), which are compared as a list.
  * An expression the debugger cannot evaluate: "dscope: cannot evaluate 'EXPR': REASON" ends
    with the debugger's own diagnostic (GDB: 'No symbol "x" in current context.', LLDB: "use of
    undeclared identifier 'x'"); REASON becomes "<debugger's reason>". The rest of the line,
    and that it is one line, must match.

The test fails on any difference (a unified diff per command), when a command printed nothing
in gdb (the command did not run), when a marker is missing (a debugger ended early), on a Python
traceback or an "error:" line in either transcript, on a crashed debugger, or when a debugger
does not finish within --timeout seconds."""

import argparse
import difflib
import os
import re
import secrets
import shlex
import signal
import subprocess
import sys
import tempfile
import time

import session

LLDB = "lldb-16"
RUN = "@run"
SILENT = "@silent "  # "@silent COMMAND": a command that must print nothing in either debugger
# Text no clean session prints (a traceback, a Python error, an LLDB or GDB internal failure).
ALWAYS_REJECT = ["Traceback (most recent call last)", "Python Exception", "Error occurred in Python",
                 "PLEASE submit a bug report", "Stack dump:", "internal-error"]
ERROR_LINE = re.compile(r"^error:", re.MULTILINE)


class Failure(Exception):
    pass


def run_debugger(argv, timeout, what):
    """The debugger's whole transcript (stdout and stderr in one stream, in order). lldb-16's own
    abort after a completed `process kill` (tests/e2e/session.py) runs the session once more."""
    start = time.monotonic()
    run, aborted = session.run_lldb_aware(argv, timeout)
    if aborted is not None:
        print("---- %s: lldb-16 aborted after `process kill` had completed, its own bug: ran once more ----\n%s"
              % (what, aborted[-3000:]))
    if run.timed_out:
        raise Failure("%s did not finish within %g s" % (what, timeout))
    lines = run.text.splitlines()
    if len(lines) > 120:  # the diffs below show what matters; keep the log readable
        lines = lines[:60] + ["[... %d lines ...]" % (len(lines) - 100)] + lines[-40:]
    print("---- %s (%.2f s, exit %s) ----" % (what, time.monotonic() - start, run.returncode))
    print("\n".join(lines))
    if run.hung_after_crash:
        raise Failure("%s crashed and hung in its crash handler" % what)
    if run.returncode < 0:
        raise Failure("%s died of signal %d" % (what, -run.returncode))
    return run.text


class Session:
    """One debugger's command line for a list of steps; knows its own marker and echo syntax."""

    def __init__(self, nonce, program_args):
        self.nonce = nonce
        self.program_args = " ".join(shlex.quote(a) for a in program_args)

    def marker(self, i):
        return "@@DSCOPE-CMP %s %d@@" % (self.nonce, i)


class GdbSession(Session):
    name = "gdb"

    def __init__(self, nonce, program_args, script):
        super().__init__(nonce, program_args)
        self.argv = session.gdb_batch("-ex", "set pagination off", "-ex", "set confirm off",
                                      "-ex", "set breakpoint pending on", "-x", script)

    def commands(self, steps):
        for step in steps:
            self.argv += ["-ex", step]

    def print_marker(self, i):
        return "echo %s\\n" % self.marker(i)

    def print_pid(self):
        return 'python print("@@DSCOPE-PID %s", gdb.selected_inferior().pid)' % self.nonce

    def select_main_thread(self):
        return ("python [t.switch() for t in gdb.selected_inferior().threads() "
                "if t.ptid[1] == gdb.selected_inferior().pid]")

    def break_at(self, func):
        return "break " + func

    def launch(self):
        return "run %s >/dev/null 2>&1 </dev/null" % self.program_args

    kill = "kill"
    detach = "detach"

    def target(self, program, core, pid):
        return ["-p", str(pid)] if pid else [program] + ([core] if core else [])

    def echo_of(self, _command):
        return None  # gdb does not echo -ex commands


class LldbSession(Session):
    name = "lldb-16"

    def __init__(self, nonce, program_args, plugin, workdir):
        super().__init__(nonce, program_args)
        self.argv = [LLDB, "-b", "-O", "plugin load " + plugin]
        self.source = os.path.join(workdir, "lldb-commands.txt")

    def commands(self, steps):
        # One sourced file: -e false keeps going after an error (-o would end the batch), -c false
        # keeps going after the program is started. Echo stays on: -s true would hide errors too.
        with open(self.source, "w") as f:
            f.write("".join(step + "\n" for step in steps))
        self.argv += ["-o", "command source -e false -c false " + self.source]

    def print_marker(self, i):
        # Split in two literals so that lldb's echo of this command is not itself a marker.
        return 'script print("@@DSCOPE-" "%s")' % self.marker(i)[len("@@DSCOPE-"):]

    def print_pid(self):
        return 'script print("@@DSCOPE-" "PID %s", lldb.process.GetProcessID())' % self.nonce

    def select_main_thread(self):
        return "script lldb.process.SetSelectedThreadByID(lldb.process.GetProcessID())"

    def break_at(self, func):
        return "breakpoint set -n " + func

    def launch(self):
        return "process launch -i /dev/null -o /dev/null -e /dev/null -- %s" % self.program_args

    kill = "process kill"
    detach = "process detach"

    def target(self, program, core, pid):
        return ["-p", str(pid)] if pid else (["-c", core] if core else []) + [program]

    def echo_of(self, command):
        return "(lldb) " + command


def build_steps(session, a, commands):
    """The debugger commands for one session: setup, then marker/command pairs, then teardown."""
    steps = []
    if a.launch and a.break_at:
        steps.append(session.break_at(a.break_at))
    if a.attach_after:
        steps.append(session.select_main_thread())
    for i, command in enumerate(commands):
        steps.append(session.print_marker(i))
        if command == RUN:
            steps.append(session.launch())
            if a.up:
                steps.append("up %d" % a.up)
            steps.append(session.print_pid())
        else:
            steps.append(debugger_command(command))
    steps.append(session.print_marker(len(commands)))
    if a.launch and not a.exits:
        steps.append(session.kill)
    elif a.attach_after:
        steps.append(session.detach)  # leaves the process stopped for the next debugger
    return steps


def debugger_command(command):
    return command[len(SILENT):] if command.startswith(SILENT) else command


def sections(session, transcript, commands):
    """{index: output} of each command, cut between consecutive markers."""
    positions = []
    for i in range(len(commands) + 1):
        m = re.search(re.escape(session.marker(i)) + r"\n?", transcript[positions[-1][1] if positions else 0:])
        if not m:
            raise Failure("%s: no output marker before %s: the session ended early"
                          % (session.name, "command %d (%r)" % (i, commands[i]) if i < len(commands) else "the end"))
        offset = positions[-1][1] if positions else 0
        positions.append((offset + m.start(), offset + m.end()))
    result = {}
    for i, command in enumerate(commands):
        lines = transcript[positions[i][1]:positions[i + 1][0]].splitlines(keepends=True)
        # Remove the debugger's echo of this command (first line) and of the next marker (last).
        sent = session.launch() if command == RUN else debugger_command(command)
        for echo, where in ((session.echo_of(sent), 0),
                            (session.echo_of(session.print_marker(i + 1)), -1)):
            if echo is None:
                continue
            if not lines or lines[where].rstrip("\n") != echo:
                raise Failure("%s: expected the echo %r around command %d's output, got %r"
                              % (session.name, echo, i, lines[where] if lines else ""))
            del lines[where]
        result[i] = "".join(lines)
    return result


def normalize_pid(session, transcript, text):
    m = re.search(r"@@DSCOPE-PID %s (\d+)" % session.nonce, transcript)
    if not m or m.group(1) == "0":
        raise Failure("%s: the program did not start (no process id)" % session.name)
    return re.sub(r"\b%s\b" % m.group(1), "<pid>", text)


DSCOPE_LINE = re.compile(r"^(dispatch-break|dscope:).*\n?", re.MULTILINE)
EVALUATE_REASON = re.compile(r"^(dscope: cannot evaluate '.*?'): .*$", re.MULTILINE)


def by_rule(text):
    """The documented normalization rules (module docstring) that apply to every target."""
    return EVALUATE_REASON.sub(r"\1: <debugger's reason>", text)


def compare(commands, outputs):
    """outputs: {debugger name: {index: text}}; prints a unified diff per differing command."""
    (gname, gdb_out), (lname, lldb_out) = outputs.items()
    ok = True
    for i, command in enumerate(commands):
        g, l = by_rule(gdb_out[i]), by_rule(lldb_out[i])
        if command == RUN:
            g = "".join(m.group(0) for m in DSCOPE_LINE.finditer(g))
            l = "".join(m.group(0) for m in DSCOPE_LINE.finditer(l))
        elif command.startswith(SILENT):
            if g or l:
                print("FAIL: %r must print nothing; gdb: %r, lldb-16: %r" % (command, g, l))
                ok = False
            else:
                print("same: %r (no output, as expected)" % command)
            continue
        elif not g.strip():
            print("FAIL: %r printed nothing in gdb (the command did not run?)" % command)
            ok = False
            continue
        if g == l:
            print("same: %r (%d lines)" % (command, g.count("\n")))
            continue
        ok = False
        print("FAIL: %r prints different text:" % command)
        sys.stdout.writelines(difflib.unified_diff(g.splitlines(keepends=True), l.splitlines(keepends=True),
                                                   "%s: %s" % (gname, command), "%s: %s" % (lname, command)))
        for gl, ll in zip(g.splitlines(), l.splitlines()):
            if gl != ll and max(len(gl), len(ll)) > 160:  # a long line (JSON): show where it differs
                col = next((k for k, (x, y) in enumerate(zip(gl, ll)) if x != y), min(len(gl), len(ll)))
                print("  first difference at column %d:\n    gdb:     ...%s\n    lldb-16: ...%s"
                      % (col, gl[max(col - 40, 0):col + 80], ll[max(col - 40, 0):col + 80]))
        if not g.endswith("\n") or not l.endswith("\n"):
            print("\n(one output does not end with a newline)")
    return ok


def check_clean(name, transcript):
    bad = [t for t in ALWAYS_REJECT if t in transcript]
    bad += [m.group(0) + transcript[m.end():].split("\n", 1)[0] for m in ERROR_LINE.finditer(transcript)]
    for b in bad:
        print("FAIL: %s printed %r" % (name, b))
    return not bad


# ------------------------------------------------------------------------------- targets

def process_state(pid):
    """The kernel's one-letter state (T: stopped, Z: exited), or "gone"."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return "gone"


def wait_stopped(pid, timeout=5.0):
    deadline = time.monotonic() + timeout
    while process_state(pid) != "T":
        if time.monotonic() > deadline:
            raise Failure("process %d is not stopped (state %s)" % (pid, process_state(pid)))
        time.sleep(0.005)


def start_stopped(a):
    """Starts the program, waits for its marker text, stops it with SIGSTOP; returns the Popen."""
    proc = subprocess.Popen([a.program] + a.args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL, text=True)
    seen = 0
    deadline = time.monotonic() + a.timeout
    while seen < a.attach_count:
        line = proc.stdout.readline()
        if not line or time.monotonic() > deadline:
            proc.kill()
            proc.wait()
            raise Failure("the program ended or hung before printing %r %d times" % (a.attach_after, a.attach_count))
        seen += a.attach_after in line
    time.sleep(a.attach_delay)
    os.kill(proc.pid, signal.SIGSTOP)
    wait_stopped(proc.pid)
    return proc


def make_gcore(a, workdir):
    """A core of the program stopped at a breakpoint on a.gcore_at, written by gdb."""
    core = os.path.join(workdir, "gcore.core")
    argv = session.gcore_argv(a.program, a.args, a.gcore_at, core)
    session.keep_file_pages_in_cores()
    run_debugger(argv, a.timeout, "gdb (writing the core)")
    if not os.path.exists(core):
        raise Failure("gdb wrote no core at a breakpoint on %s" % a.gcore_at)
    return core


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gdb-script", required=True)
    p.add_argument("--lldb-plugin", required=True)
    p.add_argument("--program", required=True)
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("--core")
    target.add_argument("--gcore-at", metavar="FUNC")
    target.add_argument("--launch", action="store_true")
    target.add_argument("--attach-after", metavar="TEXT")
    p.add_argument("--break", dest="break_at", metavar="FUNC", help="--launch: breakpoint by function name")
    p.add_argument("--up", type=int, default=0, help="--launch: after @run, select the frame N levels up")
    p.add_argument("--exits", action="store_true", help="--launch: the program ends at @run")
    p.add_argument("--attach-count", type=int, default=1)
    p.add_argument("--attach-delay", type=float, default=0.0)
    p.add_argument("--cmd", action="append", default=[], required=True)
    p.add_argument("--timeout", type=float, default=60.0, help="seconds for each debugger session")
    p.add_argument("--args", nargs=argparse.REMAINDER, default=[])
    a = p.parse_args()
    commands = list(a.cmd)
    if a.launch and RUN not in commands:
        commands.insert(0, RUN)
    if not a.launch and RUN in commands:
        p.error("@run is for --launch")

    nonce = secrets.token_hex(4)
    proc = None
    try:
        with tempfile.TemporaryDirectory(prefix="compare_debuggers.") as workdir:
            sessions = [GdbSession(nonce, a.args, a.gdb_script), LldbSession(nonce, a.args, a.lldb_plugin, workdir)]
            core = a.core or (make_gcore(a, workdir) if a.gcore_at else None)
            if a.attach_after:
                proc = start_stopped(a)
            outputs, clean = {}, True
            for s in sessions:  # one after the other: never two debuggers on one process
                s.commands(build_steps(s, a, commands))
                s.argv += s.target(a.program, core, proc.pid if proc else None)
                transcript = run_debugger(s.argv, a.timeout, s.name)
                clean = check_clean(s.name, transcript) and clean
                out = sections(s, transcript, commands)
                if a.launch and not a.exits:
                    out = {i: normalize_pid(s, transcript, t) for i, t in out.items()}
                outputs[s.name] = out
                if proc and process_state(proc.pid) != "T":
                    raise Failure("the process is no longer stopped after %s detached" % s.name)
        same = compare(commands, outputs)
    except Failure as e:
        print("FAIL: %s" % e)
        return 1
    finally:
        if proc:
            proc.kill()
            proc.wait()
    if same and clean:
        print("PASS: %d command(s) print the same text in gdb and %s" % (len(commands), LLDB))
        return 0
    return 1


if __name__ == "__main__":
    sys.exit(main())
