#!/usr/bin/env python3
"""Ctrl-C during a long DispatchScope command, in a real debugger: the command must end with one
`dscope: interrupted (Ctrl-C)` line, print no Python traceback, and leave the debugger working.

  interrupt.py (--gdb-script build/gdb/dscope-gdb.py | --lldb-plugin build/lldb/libdscope_lldb.so)
               --program P --core C --cmd "dispatch-trace --frames"
               --after "keyset 0x12800010001" --expect-after TEXT

The debugger runs interactively on a pseudo-terminal, as a user's does, on the core. The test
types the long command, and once it has started presses Ctrl-C (writes ^C to the terminal, whose
driver sends SIGINT to the debugger) eight times 2 ms apart (LLDB: once, see PRESSES), every 0.2 s,
until the command answers or the deadline passes: presses that come while the interrupted command
winds down land where a single one rarely does (in GDB, in a ctypes callback outside its `try`).
Then it types the --after command and `quit`.

Fails when: the interrupted command printed anything but its one `dscope: interrupted (Ctrl-C)`
line; a traceback, "Exception ignored", a KeyboardInterrupt or a crashed debugger shows; the
--after command does not print --expect-after (the debugger stopped working); the debugger does
not exit with status 0 within --timeout."""

import argparse
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time

import session

PROMPTS = {"gdb": "(gdb) ", "lldb": "(lldb) "}
READY = {"gdb": "(gdb) ", "lldb": "was loaded."}  # lldb echoes its -O commands after a prompt
REJECT = ["Traceback", "Exception ignored", "PLEASE submit a bug report", "Stack dump:", "KeyboardInterrupt"]
# Ctrl-C presses 2 ms apart, every 0.2 s. In LLDB one: lldb-16's SIGINT handler locks editline's
# output mutex, so a Ctrl-C that comes while lldb draws its prompt deadlocks it, and the next one
# ends it with _exit(2) (its bug; a press every 0.2 s that stops once the command has answered
# never comes then).
PRESSES = {"gdb": 8, "lldb": 1}
PRESS_GAP = 0.002
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r")


class Terminal:
    def __init__(self, argv, env):
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True,
                                     preexec_fn=lambda: __import__("fcntl").ioctl(0, __import__("termios").TIOCSCTTY, 0))
        os.close(slave)
        self.data = b""

    def pump(self, seconds):
        end = time.monotonic() + seconds
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return
            ready, _, _ = select.select([self.master], [], [], left)
            if not ready:
                return
            try:
                chunk = os.read(self.master, 65536)
            except OSError:  # the debugger closed the terminal (exited)
                return
            if not chunk:
                return
            self.data += chunk

    def text(self):
        return ANSI.sub("", self.data.decode(errors="replace"))

    def type(self, line):
        os.write(self.master, line.encode())

    def wait_for(self, pattern, since, deadline):
        while time.monotonic() < deadline and self.proc.poll() is None:
            if pattern in self.text()[since:]:
                return True
            self.pump(0.05)
        return pattern in self.text()[since:]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--gdb-script")
    p.add_argument("--lldb-plugin")
    p.add_argument("--lldb", default="lldb-16")
    p.add_argument("--program", required=True)
    p.add_argument("--core", required=True)
    p.add_argument("--cmd", required=True)
    p.add_argument("--after", required=True)
    p.add_argument("--expect-after", required=True)
    p.add_argument("--timeout", type=float, default=120)
    a = p.parse_args()
    if bool(a.gdb_script) == bool(a.lldb_plugin):
        p.error("one of --gdb-script and --lldb-plugin")
    debugger = "gdb" if a.gdb_script else "lldb"
    if debugger == "gdb":
        argv = session.gdb_batch()[:1] + ["-nx", "-q", "-iex", "set auto-load safe-path /", "-iex", "set style enabled off",
                                          "-iex", "set pagination off", "-iex", "set confirm off", "-x", a.gdb_script,
                                          a.program, a.core]
    else:
        argv = [a.lldb, "--no-lldbinit", "--no-use-colors", "-O", "plugin load " + a.lldb_plugin, "-c", a.core, a.program]
    env = dict(os.environ, TERM="dumb", COLUMNS="250", LINES="50")
    env.setdefault("LLDB_DEBUGSERVER_PATH", "/usr/lib/llvm-16/bin/lldb-server")
    prompt = PROMPTS[debugger]
    start = time.monotonic()
    deadline = start + a.timeout
    term = Terminal(argv, env)
    ok = True
    presses = 0
    if not term.wait_for(READY[debugger], 0, deadline):
        print(term.text())
        print("FAIL: no debugger prompt within %.0f s" % a.timeout)
        term.proc.kill()
        return 1
    term.pump(0.3)  # the rest of the core's stop report
    since = len(term.text())
    term.type(a.cmd + "\n")
    term.wait_for(a.cmd, since, deadline)  # the terminal's echo: the debugger has the line
    since_cmd = len(term.text())
    answered = False
    while not answered and time.monotonic() < deadline and term.proc.poll() is None:
        term.pump(0.2)
        for _ in range(PRESSES[debugger]):
            out = term.text()[since_cmd:]
            answered = prompt in out or "dscope:" in out or "Interrupted" in out
            if answered:
                break  # the command ended
            term.type("\x03")
            presses += 1
            term.pump(PRESS_GAP)
    term.pump(0.5)
    command_out = term.text()[since_cmd:]
    since = len(term.text())
    term.type(a.after + "\n")
    term.wait_for(a.expect_after, since, deadline)
    term.pump(0.3)
    term.type("quit\n")
    while time.monotonic() < deadline and term.proc.poll() is None:
        term.pump(0.1)
    term.pump(0.2)
    if term.proc.poll() is None:
        term.proc.kill()
        print(term.text())
        print("FAIL: the debugger did not exit within %.0f s (%d Ctrl-C presses)" % (a.timeout, presses))
        return 1
    out = term.text()
    print(out)
    print("(debugger ran %.2f s; %d Ctrl-C presses; exit status %s)" % (time.monotonic() - start, presses,
                                                                       term.proc.returncode))
    if presses == 0:
        print("FAIL: Ctrl-C was never pressed (the command ended at once)")
        ok = False
    if term.proc.returncode != 0:
        print("FAIL: the debugger exited with status %s" % term.proc.returncode)
        ok = False
    # The command's lines: what it printed before the next prompt (the terminal's ^C echoes aside).
    lines = [l.replace("^C", "").strip() for l in command_out.split(prompt)[0].splitlines()]
    lines = [l for l in lines if l]
    if lines != ["dscope: interrupted (Ctrl-C)"]:
        print("FAIL: the interrupted command must print exactly `dscope: interrupted (Ctrl-C)`, printed %r" % lines)
        ok = False
    if a.expect_after not in out[since:]:
        print("FAIL: the command after the interrupted one did not print %r" % a.expect_after)
        ok = False
    for failure in session.text_failures(out, reject=REJECT):
        print(failure)
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
