"""One batch-mode debugger session for the end-to-end tests (debugger.py, compare_debuggers.py):
its transcript, a time limit, and lldb-16's own teardown abort told apart from every other crash.

lldb-16 itself can abort after `process kill` has completed: glibc finds the heap corrupted
("free(): corrupted unsorted chunks"), and LLVM's crash handler then often deadlocks on the
malloc lock, so the process hangs. Plain lldb-16, without the plugin, did it once in 46 sessions
on a loaded machine (docs/USER-GUIDE.md, section 0; llvm-project issue 76057: the private state
thread still runs while the process is destroyed). A transcript that shows exactly that (the
kill done, then glibc's heap abort, and no later prompt) is LLDB's bug, and the caller may run
the session once more; every other crash fails the test."""

import os
import re
import shlex
import signal
import subprocess
import threading
import time

# The GDB the tests drive: gdb, or another build of it such as NVIDIA's cuda-gdb on a GPU
# machine (`DSCOPE_GDB=cuda-gdb ctest -L gdb`).
GDB = os.environ.get("DSCOPE_GDB") or "gdb"


def gdb_batch(*options):
    """A batch GDB command line that reads no init file and only trusts what the tests load."""
    return [GDB, "-nx", "-batch", "-iex", "set auto-load safe-path /"] + list(options)


def keep_file_pages_in_cores():
    """coredump_filter 0x37 for this process and its children (as tests/e2e/expect_crash.sh): cores
    keep the file-backed private pages too, so a debugger reads the binary's read-only data there."""
    with open("/proc/self/coredump_filter", "w") as f:
        f.write("0x37")


def gcore_argv(program, args, break_at, core):
    """GDB running program to a breakpoint on break_at and writing core there (generate-core-file).
    The program's own output is dropped; call keep_file_pages_in_cores() first."""
    run = " ".join(["run"] + [shlex.quote(x) for x in args] + [">/dev/null 2>&1 </dev/null"])
    return gdb_batch("-ex", "set breakpoint pending on", "-ex", "break " + break_at, "-ex", run,
                     "-ex", "generate-core-file " + core, "-ex", "kill", program)

CRASH_MARKER = b"PLEASE submit a bug report"
CRASH_GRACE_S = 10.0  # after the marker, the time a crashed debugger gets to print and exit

_KILL_DONE = re.compile(r"\(lldb\) process kill\n(?:[^\n]*\n){0,3}?Process \d+ exited with status = 9 ")
_HEAP_ABORT = re.compile(r"^(free\(\)|malloc\(\)|realloc\(\)|double free|corrupted |munmap_chunk\(\))", re.M)


class Result:
    def __init__(self, returncode, text, timed_out, hung_after_crash):
        self.returncode = returncode  # None when the session was killed
        self.text = text
        self.timed_out = timed_out
        self.hung_after_crash = hung_after_crash


def run(argv, timeout, env=None, crash_grace=CRASH_GRACE_S):
    """Runs argv (stdout and stderr in one stream, in order) in its own process group, killed
    after `timeout` seconds, or `crash_grace` seconds after a crash report that does not end."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            env=env, start_new_session=True)
    chunks, crashed = [], threading.Event()

    def read():
        tail = b""
        for chunk in iter(lambda: proc.stdout.read1(65536), b""):
            chunks.append(chunk)
            if CRASH_MARKER in tail + chunk:
                crashed.set()
            tail = chunk[-len(CRASH_MARKER):]

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    deadline = time.monotonic() + timeout
    crash_deadline = None
    killed = timed_out = False
    while proc.poll() is None:
        now = time.monotonic()
        if crashed.is_set() and crash_deadline is None:
            crash_deadline = now + crash_grace
        timed_out = now > deadline
        if timed_out or (crash_deadline is not None and now > crash_deadline):
            os.killpg(proc.pid, signal.SIGKILL)
            killed = True
            break
        time.sleep(0.05)
    proc.wait()
    reader.join()
    text = b"".join(chunks).decode(errors="replace")
    return Result(None if killed else proc.returncode, text, timed_out, killed and not timed_out)


def kill_group(popen):
    """SIGKILL to the process group a Popen started with start_new_session leads (a runner and what
    it started: a container's namespace with it), then reaps the Popen."""
    try:
        os.killpg(popen.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    popen.wait()


def text_failures(output, expect=(), reject=()):
    """A FAIL line for each expected text missing from output and each rejected text in it."""
    return (["FAIL: expected in the output: %r" % t for t in expect if t not in output] +
            ["FAIL: must not appear in the output: %r" % t for t in reject if t in output])


def lldb_teardown_abort(text):
    """Whether an lldb-16 transcript ends in LLDB's own abort after a completed `process kill`."""
    last = None
    for last in _KILL_DONE.finditer(text):
        pass
    if last is None:
        return False
    after = text[last.end():]
    return "(lldb) " not in after and _HEAP_ABORT.search(after) is not None


def run_lldb_aware(argv, timeout, env=None):
    """run(), and once more when lldb-16's teardown abort ended the first session. Returns the
    result and the first session's transcript when it was run again (else None)."""
    first = run(argv, timeout, env)
    if not lldb_teardown_abort(first.text):
        return first, None
    return run(argv, timeout, env), first.text
