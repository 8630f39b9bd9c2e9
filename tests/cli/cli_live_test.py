#!/usr/bin/env python3
"""Live targets that change or hide under the reader (issue 33, items 5 and 6):

  dying            dscope pid on processes that die while they are read (SIGKILL at a seeded
                   random moment once dscope holds it, a program that ends on its own) and on one
                   that starts and ends threads in a tight loop, 50 runs in all: each ends with an
                   answer or one dscope: line, never a signal; a process that died says so ("exited
                   while it was read"), never "permission denied" or unreadable memory; the survivor
                   is left untraced.
  traced           a process one of whose threads another tracer holds (as when two dscope pid read
                   it at once): one line naming that tracer, not "permission denied ... root".
  namespace-dscope namespace_program in a pid namespace of its own (unshare), stopped inside its
  namespace-gdb    dispatches: dscope pid, GDB or lldb-16 attached from the host, and dscope core,
  namespace-lldb   GDB or lldb-16 on a gcore core taken from the host, print what dscope prints inside
                   the namespace, each thread named by its host tid with the namespace's in
                   parentheses; the tids are the program's own (it prints them) and the kernel's
                   NSpid map.

  cli_live_test.py --check NAME --dscope D --samples DIR --program NAMESPACE_PROGRAM
                   [--gdb-script S] [--lldb-plugin P] --workdir DIR
"""

import argparse
import ctypes
import os
import pathlib
import random
import re
import shutil
import signal
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "torch"))
import torch_oracle_test as sessions  # noqa: E402  (marker, debugger_argv, sections)

SKIP = 77
COMMANDS = ["dispatch-trace --all", "dispatch-summary", "dispatch-trace", "keyset --tls"]


def run(argv, timeout=120, **kwargs):
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, **kwargs)


def status_field(path, name):
    try:
        for line in pathlib.Path(path).read_text().splitlines():
            if line.startswith(name + ":"):
                return line.split(":", 1)[1].split()
    except OSError:
        pass
    return []


DIED = ("exited while it was read", "has exited", "no process with pid")


def answer_problems(out, what, died=None):
    """[] when a dscope run ended by itself with an answer, or with one dscope: line (and notes); a
    line saying why the process could not be read for a process that died under the read (`died`
    lists the lines that may say so)."""
    if out.returncode < 0:
        return ["%s: dscope died of signal %d: %r" % (what, -out.returncode, out.stderr[-500:])]
    lines = [l for l in out.stderr.splitlines() if not l.startswith("note: ")]
    if out.returncode == 0 and not lines:
        return []
    if out.returncode != 0 and not out.stdout and len(lines) == 1 and lines[0].startswith("dscope: ") and (
            died is None or any(d in lines[0] for d in died)):
        return []
    return ["%s: exit %d, stdout %r, stderr %r%s" % (what, out.returncode, out.stdout[:300], out.stderr[:500],
                                                     " (expected a line saying it died: %r)" % (died,) if died else "")]


def tracer(pid):
    fields = status_field("/proc/%d/status" % pid, "TracerPid")
    return int(fields[0]) if fields else -1


def started_threads(proc, count, pattern):
    """The tids the program printed for its first `count` threads (pattern's group 1)."""
    tids = []
    while len(tids) < count:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("the program ended before its threads started")
        found = re.search(pattern, line)
        if found:
            tids.append(int(found.group(1)))
    return tids


# ---- dying

CHURN = """
import threading
def work():
    pass
print("churning", flush=True)
while True:
    ts = [threading.Thread(target=work) for _ in range(8)]
    for t in ts: t.start()
    for t in ts: t.join()
"""


def check_dying(a):
    rng = random.Random(33)
    multithread = str(a.samples / "multithread")
    problems = []
    exited_seen = 0
    # A process killed at a random moment of the read: once dscope holds it (it is traced).
    for i in range(20):
        proc = subprocess.Popen([multithread, "--no-crash", "--until-killed"], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True, stdin=subprocess.DEVNULL)
        try:
            started_threads(proc, 8, r"thread \d+ started \(tid (\d+)\)")
            command = ["dispatch-trace", "--frames"] if i % 2 else ["dispatch-summary"]
            reader = subprocess.Popen([a.dscope, "pid", str(proc.pid)] + command,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            deadline = time.monotonic() + 30
            while tracer(proc.pid) == 0 and reader.poll() is None and time.monotonic() < deadline:
                time.sleep(0.0005)
            time.sleep(rng.uniform(0.0, 0.3))
            proc.kill()
            stdout, stderr = reader.communicate(timeout=60)
            out = subprocess.CompletedProcess(reader.args, reader.returncode, stdout, stderr)
            problems += answer_problems(out, "run %d (killed)" % i, DIED)
            exited_seen += "exited while it was read" in stderr
        finally:
            proc.kill()
            proc.wait()
    # A program that ends on its own while it is read again and again, from its first thread on
    # (before that its runtime may not be initialized yet, which is another answer).
    proc = subprocess.Popen([multithread, "--no-crash"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL, text=True)
    started_threads(proc, 1, r"thread \d+ started \(tid (\d+)\)")
    for i in range(15):
        out = run([a.dscope, "pid", proc.pid, "dispatch-summary"])
        problems += answer_problems(out, "run %d (ending)" % i, DIED)
        if proc.poll() is not None:
            break
    proc.kill()
    proc.wait()
    # Threads that start and end in a tight loop: the reads find them coming and going.
    churn = subprocess.Popen([sys.executable, "-c", CHURN], stdout=subprocess.PIPE, text=True,
                             stdin=subprocess.DEVNULL)
    try:
        churn.stdout.readline()
        for i in range(15):
            out = run([a.dscope, "pid", churn.pid, "op-table", "--list"])
            problems += answer_problems(out, "run %d (threads churning)" % i)
        time.sleep(0.05)
        if status_field("/proc/%d/status" % churn.pid, "TracerPid") != ["0"] or churn.poll() is not None:
            problems.append("the churning process is left traced or ended: %s" % status_field(
                "/proc/%d/status" % churn.pid, "TracerPid"))
    finally:
        churn.kill()
        churn.wait()
    if not exited_seen:
        problems.append("no run of the 20 killed ones said 'exited while it was read'")
    return problems


# ---- traced

PTRACE_SEIZE = 0x4206
WALL = 0x40000000  # waitpid's __WALL: a thread, not a child


def check_traced(a):
    proc = subprocess.Popen([str(a.samples / "multithread"), "--no-crash", "--until-killed"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, stdin=subprocess.DEVNULL)
    problems = []
    seized = None
    try:
        workers = started_threads(proc, 8, r"thread \d+ started \(tid (\d+)\)")
        # This process seizes one worker, as a first dscope pid holds the threads it stopped so far.
        libc = ctypes.CDLL(None, use_errno=True)
        libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
        if libc.ptrace(PTRACE_SEIZE, workers[3], None, None) != 0:
            return ["cannot seize thread %d: errno %d" % (workers[3], ctypes.get_errno())]
        seized = workers[3]
        name = pathlib.Path("/proc/self/comm").read_text().strip()
        out = run([a.dscope, "pid", proc.pid, "keyset", "--tls"])
        expected = "dscope: process %d is already traced by process %d (%s)" % (proc.pid, os.getpid(), name)
        lines = out.stderr.splitlines()
        if out.returncode != 1 or out.stdout or len(lines) != 1 or not lines[0].startswith(expected):
            problems.append("one thread traced by another: exit %d, stdout %r, stderr %r (expected one line "
                            "starting %r)" % (out.returncode, out.stdout[:300], out.stderr, expected))
    finally:
        proc.kill()
        if seized:  # its tracer reaps the killed thread, or the process never ends
            try:
                os.waitpid(seized, WALL)
            except ChildProcessError:
                pass
        proc.wait()
    return problems


# ---- namespace

THREAD_NAMES = re.compile(r"thread tid (\d+)( \(tid (\d+) in its pid namespace\))?")


def inside_view(text):
    """The text with each thread named by the id the process knows it by: "thread tid H (tid N in
    its pid namespace)" -> "thread tid N"."""
    return THREAD_NAMES.sub(lambda m: "thread tid " + (m.group(3) or m.group(1)), text)


def namespace_map(pid):
    """{host tid: namespace tid} from the kernel (NSpid of each task's status)."""
    ids = {}
    for task in pathlib.Path("/proc/%d/task" % pid).iterdir():
        nspid = status_field(task / "status", "NSpid")
        if len(nspid) >= 2:
            ids[int(nspid[0])] = int(nspid[-1])
    return ids


def debugger_texts(a, debugger, workdir, core=None, pid=None, program=None):
    lines = []
    for i, command in enumerate(COMMANDS):
        lines += [sessions.marker(debugger, str(i)), command]
    lines.append(sessions.marker(debugger, "end"))
    script = workdir / ("commands." + debugger)
    script.write_text("\n".join(lines) + "\n")
    plugin = a.gdb_script if debugger == "gdb" else a.lldb_plugin
    argv = sessions.debugger_argv(debugger, plugin, str(program) if program else None, core=core, pid=pid,
                                  commands=script)
    out = run(argv, timeout=180)
    found = sessions.sections(out.stdout)
    if "end" not in found:
        raise RuntimeError("%s did not run every command:\n%s" % (debugger, (out.stdout + out.stderr)[-3000:]))
    return [found.get(str(i), "") for i in range(len(COMMANDS))]


def dscope_texts(a, *target, prefix=(), commands=COMMANDS):
    texts = []
    for command in commands:
        out = run(list(prefix) + [a.dscope] + list(target) + command.split())
        texts.append(out.stdout + out.stderr)
    return texts


def end_namespace(unshare, pid):
    """Ends the program unshare started (pid 1 of the namespace: its end ends the namespace)."""
    if pid is not None:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    unshare.kill()
    unshare.wait()


def check_namespace(a, front_end):
    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("nsenter"):
        print("needs root, unshare and nsenter")
        return SKIP
    workdir = a.workdir / ("namespace-" + front_end)
    workdir.mkdir(parents=True, exist_ok=True)
    unshare = subprocess.Popen(["unshare", "--pid", "--fork", "--mount-proc", str(a.program)], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL)
    problems = []
    pid = None
    try:
        own_tids = started_threads(unshare, 3, r"thread \d holds \(tid (\d+)\)")
        ready = unshare.stdout.readline()
        if not ready.startswith("ready (pid 1)"):
            return ["namespace_program: expected 'ready (pid 1)' inside its namespace, got %r" % ready]
        children = pathlib.Path("/proc/%d/task/%d/children" % (unshare.pid, unshare.pid)).read_text().split()
        pid = int(children[0])  # the program, pid 1 in its namespace
        ids = namespace_map(pid)
        if sorted(own_tids) != sorted(n for h, n in ids.items() if n != 1) or ids.get(pid) != 1:
            return ["the kernel's NSpid map %r does not hold the program's tids %r" % (ids, own_tids)]

        # The oracle: dscope inside the namespace, where the ids are the process's own.
        inside = dscope_texts(a, "pid", "1", prefix=["nsenter", "-t", pid, "-p", "-m"])
        names = sorted(int(m.group(1)) for m in THREAD_NAMES.finditer(inside[0]))
        if names != sorted(own_tids) or "(alive): dispatch depth 2" not in inside[0]:
            return ["inside the namespace, dispatch-trace --all does not show the program's threads %r:\n%s" % (
                own_tids, inside[0])]

        core = workdir / "namespace.core"
        gcore = run(["gcore", "-o", workdir / "namespace", pid], timeout=180)
        core_files = sorted(workdir.glob("namespace.%d" % pid))
        if not core_files:
            return ["gcore wrote no core: %s" % (gcore.stdout + gcore.stderr)[-2000:]]
        core_files[0].replace(core)

        views = {}
        if front_end == "dscope":
            views["dscope pid (host)"] = dscope_texts(a, "pid", pid)
            views["dscope core (gcore)"] = dscope_texts(a, "core", core, a.program)
        else:
            views[front_end + " attached (host)"] = debugger_texts(a, front_end, workdir, pid=pid)
            views[front_end + " on the gcore core"] = debugger_texts(a, front_end, workdir, core=core, program=a.program)
        for what, texts in views.items():
            for command, ours, theirs in zip(COMMANDS, texts, inside):
                if inside_view(ours) != theirs:
                    problems.append("%s: `%s` differs from dscope's inside the namespace:\n--- %s\n%s--- inside\n%s" % (
                        what, command, what, ours, theirs))
            # Each thread is named by its host tid and, in parentheses, the namespace's (NSpid).
            for m in THREAD_NAMES.finditer(texts[0]):
                host, own = int(m.group(1)), m.group(3)
                if own is None or ids.get(host) != int(own):
                    problems.append("%s: '%s' is not a host tid with its namespace tid (NSpid: %r)" % (
                        what, m.group(0), ids))
    finally:
        end_namespace(unshare, pid)
    return problems


# A PyTorch process in its own pid namespace: a worker thread excludes AutogradCPU and prints its
# TLS sets as torch._C sees them (the oracle); read from the host, keyset --tls of that thread by its
# host tid (the thread lists of glibc hold the namespace's tid; it said "on none of glibc's thread
# lists").
TORCH_NAMESPACED = """
import threading, time, torch
def work():
    guard = torch._C.ExcludeDispatchKeyGuard(torch._C.DispatchKeySet(torch._C.DispatchKey.AutogradCPU))
    print("worker %d excluded %s" % (threading.get_native_id(), torch._C._dispatch_tls_local_exclude_set()), flush=True)
    time.sleep(600)
threading.Thread(target=work, daemon=True).start()
time.sleep(600)
"""


def check_namespace_torch(a):
    if os.geteuid() != 0 or not shutil.which("unshare"):
        print("needs root and unshare")
        return SKIP
    unshare = subprocess.Popen(["unshare", "--pid", "--fork", "--mount-proc", "/usr/bin/python3", "-c", TORCH_NAMESPACED],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL)
    problems = []
    pid = None
    try:
        line = unshare.stdout.readline()
        m = re.match(r"worker (\d+) excluded (DispatchKeySet\(.*\))$", line.strip())
        if not m:
            return ["the PyTorch program printed %r, not its worker's excluded set" % line]
        own_tid, excluded = int(m.group(1)), m.group(2)
        pid = int(pathlib.Path("/proc/%d/task/%d/children" % (unshare.pid, unshare.pid)).read_text().split()[0])
        host_tid = next((h for h, n in namespace_map(pid).items() if n == own_tid), None)
        if host_tid is None or host_tid == own_tid:
            return ["no host tid for the worker's namespace tid %d: %r" % (own_tid, namespace_map(pid))]
        command = "keyset --tls --thread %d" % host_tid
        texts = {"dscope pid": dscope_texts(a, "pid", pid, commands=[command])[0]}
        for debugger in ["gdb"] + (["lldb"] if a.lldb_plugin else []):
            plugin = a.gdb_script if debugger == "gdb" else a.lldb_plugin
            argv = sessions.debugger_argv(debugger, plugin, None, pid=pid, extra=[command])
            texts[debugger + " attached"] = run(argv, timeout=180).stdout
        for what, text in texts.items():
            if "excluded: " + excluded + " (raw" not in text or "dscope:" in text:
                problems.append("%s `%s` on the worker (namespace tid %d, host tid %d): expected 'excluded: %s', got:\n%s"
                                % (what, command, own_tid, host_tid, excluded, text[-2000:]))
    finally:
        end_namespace(unshare, pid)
    return problems


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--check", required=True,
                        choices=["dying", "traced", "namespace-dscope", "namespace-gdb", "namespace-lldb", "namespace-torch"])
    parser.add_argument("--dscope", required=True)
    parser.add_argument("--samples", type=pathlib.Path, required=True)
    parser.add_argument("--program", type=pathlib.Path)
    parser.add_argument("--gdb-script")
    parser.add_argument("--lldb-plugin")
    parser.add_argument("--workdir", type=pathlib.Path, required=True)
    a = parser.parse_args()
    a.workdir.mkdir(parents=True, exist_ok=True)
    if a.check == "dying":
        problems = check_dying(a)
    elif a.check == "traced":
        problems = check_traced(a)
    elif a.check == "namespace-torch":
        problems = check_namespace_torch(a)
    else:
        problems = check_namespace(a, a.check.split("-")[1])
    if problems == SKIP:
        return SKIP
    for p in problems:
        print("FAIL:", p)
    print("%s: %s" % (a.check, "FAILED" if problems else "ok"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
