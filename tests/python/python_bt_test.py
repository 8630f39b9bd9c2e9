#!/usr/bin/env python3
"""`python-bt` against the process's own account of its Python stacks (the process is the oracle).

python_stacks_program.py runs under a real CPython with torch imported (the host's 3.11 with torch
1.13, or 3.13 / 3.14 in the trixie / sid root of scripts/torch-roots.sh, run there as a container
runs: own mount and pid namespaces, the root made / with pivot_root, /proc mounted), stops its
threads at known stacks and writes every Python thread's frames as traceback.format_stack() prints
them, by native thread id. dscope, GDB and lldb-16 then read the same process, each in one session:

  python-bt --all           every thread's block: a Python thread's frames equal the oracle's, line
                            for line, innermost first; the frameless Python thread "(0 frames, ...)";
                            the pthread_create thread "no Python thread state"; every thread of the
                            process (the kernel's list, its NSpid ids in a container) named as
                            ThreadIds::shown names it, once
  python-bt --all --json    schema, version, python (platform.python_version()), each thread's tid,
                            shown_tid and frames (name, qualname, file, line) equal to the oracle and
                            to the text, in the text's order
  python-bt                 live: the main thread's block (the debugger's selected thread); on a core
                            one block of --all
  python-bt --thread TID    that thread's block of --all (the main thread's; on a kernel core of a
                            container a tid past the thread count: a smaller N is the debugger's
                            thread N)
  python-bt --thread 999999 / python-bt --bogus
                            one dscope: line each (the usage for --bogus)
and the three front ends print the same text and JSON. A thread matches the oracle by the id the
process knows it by: its host tid, or in a container the N of "(tid N in its pid namespace)".

  --check host_live    the host's process: dscope pid, GDB attached, lldb-16 attached
  --check host_core    a gcore core of it: dscope core, GDB and lldb-16 (side by side)
  --check SUITE_live   (SUITE: trixie, sid) the process in the root, read from the host: dscope pid,
                       GDB (sysroot /proc/PID/root set before the attach) and lldb-16 (the root
                       mapped as a module search path before the attach)
  --check SUITE_core   a gcore core of it taken from the host (the host's tids), then its kernel core
                       (SIGABRT from the host, written inside the container: the namespace's tids,
                       so there a thread is named by one id; skipped when core_pattern is a pipe or
                       a path), each read with the root as sysroot: dscope core --sysroot ROOT, GDB's
                       set sysroot, lldb-16's remote-linux --sysroot, side by side. Where GDB's
                       gcore could not read a thread's stack block (sid's glibc 2.42+ guard pages:
                       the core holds zeros for it), that thread's frames are the oracle's innermost
                       ones, at least one, up to one corrupt frame saying the core lacks the memory,
                       and it is named with its namespace id when a Python thread state says it
  --check bad_input    a process that runs no Python (the op_catalog sample, live and its gcore
                       core): one "dscope: this process runs no Python interpreter (no _PyRuntime)"
                       line for each python-bt in each front end

  python_bt_test.py --check C --dscope D --gdb-script G [--lldb-plugin P] [--roots-script S]
                    [--samples DIR] --workdir W
Exits 0 when every answer holds, 1 naming the first problems, 77 when the check cannot run here
(not root, for a container)."""

import argparse
import json
import os
import pathlib
import re
import select
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "e2e"))
sys.path.insert(0, str(HERE.parent / "torch"))
import session  # noqa: E402
import roots  # noqa: E402

PROGRAM = HERE / "python_stacks_program.py"
TORCH_PYTHON = os.environ.get("DSCOPE_TORCH_PYTHON", "/usr/bin/python3")  # Debian's, with python3-torch
READY_S = 120      # torch's import on a loaded machine, in a root a few seconds more
SESSION_S = 180    # one front end's session
SKIP = 77

NO_RUNTIME = "dscope: this process runs no Python interpreter (no _PyRuntime)"
SHOWN = r"(\d+)(?: \(tid (\d+) in its pid namespace\))?"
HEADER = re.compile(r"^Python stack of thread %s \((\d+) frames?, innermost first\):$" % SHOWN)
NO_STATE = re.compile(r"^Python stack of thread %s: no Python thread state \(a thread Python never ran on\)$" % SHOWN)
FRAME = re.compile(r'^  File ".*", line -?\d+, in .*$')
CORRUPT = re.compile(r"^  <corrupt Python frame at (0x[0-9a-f]+): (.*)>$")
# What python-bt says of a frame where a core holds zeros (PythonView::readThread).
LOST_FRAME = "it runs nothing (zeros: memory the core lacks, or corrupt memory)"
# What a build without the command answers (today's build, or a front end that lacks it).
NO_COMMAND = ['Undefined command: "python-bt"', "'python-bt' is not a valid command", "unknown command 'python-bt'"]
REJECT = ["Traceback (most recent call last)", "Python Exception", "PLEASE submit a bug report", "Stack dump:"]


def commands_for(thread_tid):
    """(name, command) of one session, in order."""
    return [("all", "python-bt --all"), ("json", "python-bt --all --json"), ("selected", "python-bt"),
            ("thread", "python-bt --thread %d" % thread_tid), ("no-thread", "python-bt --thread 999999"),
            ("bogus", "python-bt --bogus")]


# ---- the program


def wait_for_line(popen, pattern, what, timeout=READY_S):
    """Reads popen's output (bytes, unbuffered: os.read) until a whole line matches the regular
    expression `pattern`, and returns that line; SystemExit with what it printed when it ends first
    or `timeout` seconds pass."""
    deadline, output = time.monotonic() + timeout, b""
    fd = popen.stdout.fileno()
    while time.monotonic() < deadline:
        if not select.select([fd], [], [], max(0.0, deadline - time.monotonic()))[0]:
            break
        chunk = os.read(fd, 65536)
        if not chunk:
            raise SystemExit("%s ended before it was ready:\n%s" % (what, output.decode(errors="replace")[-3000:]))
        output += chunk
        for line in output.decode(errors="replace").splitlines(keepends=True):
            if line.endswith("\n") and re.search(pattern, line.rstrip("\n")):
                return line.rstrip("\n")
    raise SystemExit("%s was not ready within %d s:\n%s" % (what, timeout, output.decode(errors="replace")[-3000:]))


def label(debugger):
    return "lldb-16" if debugger == "lldb" else "gdb"


def descendants(pid):
    found = []
    try:
        children = pathlib.Path("/proc/%d/task/%d/children" % (pid, pid)).read_text().split()
    except OSError:
        return found
    for child in map(int, children):
        found += [child] + descendants(child)
    return found


def status_field(pid_or_task, field):
    try:
        for line in pathlib.Path(pid_or_task, "status").read_text().splitlines():
            if line.startswith(field + ":"):
                return line.split()[1:]
    except OSError:
        pass
    return []


class StacksProgram:
    """python_stacks_program.py running on the host (suite None) or in a root as a container; its
    oracle, the host pid the front ends read, the interpreter's file as the host reaches it, and the
    sysroot a front end needs (None on the host; /proc/PID/root live, the root's folder for a core).
    The program runs in a folder of its own (its kernel cores land there), as `PROGRAM [ARGS...]
    ORACLE_JSON`, and writes "ready" once its oracle is whole; then it sleeps until killed, or (with
    until_exit) it ends by itself (python_dispatch_test.py's crash)."""

    PROGRAM = PROGRAM

    def __init__(self, workdir, suite=None, roots_script=None, args=(), until_exit=False):
        self.suite, self.root = suite, None
        if suite:
            self.root = roots.root_dir(roots_script, suite)
            if not (self.root / ".dscope-root").exists():
                raise SystemExit("no %s root at %s: run scripts/torch-roots.sh ensure %s" % (suite, self.root, suite))
            # The program's folder as the container sees it.
            self.inside = "/tmp/dscope-%s-%d" % (self.PROGRAM.stem, os.getpid())
            self.files = self.root / self.inside.lstrip("/")
            shown = self.inside
        else:
            self.files = pathlib.Path(workdir) / "program"
            shown = str(self.files)
        shutil.rmtree(self.files, ignore_errors=True)
        self.files.mkdir(parents=True)
        shutil.copy(self.PROGRAM, self.files)
        self.oracle_path = self.files / "oracle.json"
        shell = ("cd %s && ulimit -c unlimited && echo 0x37 > /proc/self/coredump_filter && exec %s %s/%s %s %s/oracle.json"
                 % (shown, "/usr/bin/python3" if suite else TORCH_PYTHON, shown, self.PROGRAM.name, " ".join(args), shown))
        argv = self.container_argv(shell.replace("&& exec ", "&& ") + "; exit $?") if suite else ["/bin/sh", "-c", shell]
        self.popen = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                      start_new_session=True)
        self.pid = None
        try:
            wait_for_line(self.popen, r"^ready$", self.PROGRAM.name)
            if until_exit:
                self.popen.wait(timeout=120)
            else:
                self.pid = self.find_pid()
                self.wait_asleep()  # past its print of "ready" (a write a front end could catch it in)
            self.oracle = json.loads(self.oracle_path.read_text())
        except BaseException:
            self.kill()
            raise
        executable = self.oracle["executable"]
        self.program = str(self.root / executable.lstrip("/")) if self.root else executable
        self.live_sysroot = "/proc/%d/root" % self.pid if self.root and self.pid else None
        self.core_sysroot = str(self.root) if self.root else None

    def container_argv(self, shell):
        """`sh -c shell` in the root as docker and podman run a container (container_test.py does the
        same): own mount and pid namespaces, the root made the namespace's root with pivot_root (the
        old one unmounted, so the host's paths do not reach the root's files), /proc mounted. The
        shell stays the namespace's init (`; exit $?`): the program is not, so a signal from the host
        (SIGABRT for its kernel core) acts as on any process."""
        old_root = self.inside.lstrip("/") + "/old-root"
        (self.root / old_root).mkdir(exist_ok=True)
        setup = ('set -e; mount --make-rprivate /; mount --bind "$0" "$0"; cd "$0"; pivot_root . "$1"; cd /; '
                 'mount -t proc proc /proc; umount -l "/$1"; exec /bin/sh -c "$2"')
        return ["unshare", "--mount", "--pid", "--fork", "/bin/sh", "-c", setup, str(self.root), old_root, shell]

    def wait_asleep(self):
        """Until the main thread sleeps in stop_main's time.sleep (x86-64 clock_nanosleep, 230): it
        prints "ready" inside write_report, which a front end that reads it at once still sees."""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if pathlib.Path("/proc/%d/syscall" % self.pid).read_text().split()[:1] == ["230"]:
                    return
            except OSError:
                return
            time.sleep(0.05)

    def find_pid(self):
        """The interpreter's host pid: the runner itself on the host; in a container the runner's
        descendant that runs python."""
        if not self.root:
            return self.popen.pid
        for pid in descendants(self.popen.pid):
            try:
                if pathlib.Path("/proc/%d/comm" % pid).read_text().startswith("python3"):
                    return pid
            except OSError:
                pass
        raise SystemExit("the program's host pid was not found below the container's runner %d" % self.popen.pid)

    def threads(self):
        """{host tid: the id the process knows the thread by} from the kernel (NSpid)."""
        ids = {}
        for task in pathlib.Path("/proc/%d/task" % self.pid).iterdir():
            nspid = status_field(task, "NSpid")
            if nspid:
                ids[int(nspid[0])] = int(nspid[-1])
        return ids

    def stopped(self):
        return status_field("/proc/%d" % self.pid, "State")[:1] == ["t"]

    def kernel_core(self):
        """SIGABRT from the host: the kernel writes the core in the program's folder (core_pattern
        names a file there)."""
        os.kill(self.pid, signal.SIGABRT)
        self.popen.wait(timeout=120)
        return self.found_core()

    def found_core(self):
        """The newest kernel core in the program's folder."""
        cores = sorted(self.files.glob("core*"), key=lambda p: p.stat().st_mtime)
        if not cores:
            raise SystemExit("no kernel core in %s (core_pattern %s)" % (
                self.files, pathlib.Path("/proc/sys/kernel/core_pattern").read_text().strip()))
        return cores[-1]

    def gcore(self, core):
        """The core, and the threads whose stacks it lacks: GDB's gcore writes a mapping by reads of
        1 MiB and leaves the rest of it unwritten (zeros) at the first that fails ("Memory read failed
        for corefile section, N bytes at START"). A glibc 2.42+ thread's stack block begins with guard
        pages (MADV_GUARD_INSTALL) that fail every read, so such a core holds zeros for the whole
        block: the thread's C stack, and at its top its struct pthread, the thread's id as glibc
        knows it."""
        sysroot = ["-iex", "set sysroot " + self.live_sysroot] if self.live_sysroot else []
        maps = pathlib.Path("/proc/%d/maps" % self.pid).read_text()
        out = subprocess.run(session.gdb_batch("-iex", "set debuginfod enabled off", *sysroot, "-p", str(self.pid),
                                               "-ex", "thread apply all p/x $sp", "-ex", "gcore " + str(core)),
                             capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
        if not core.exists():
            raise SystemExit("gcore wrote no core:\n" + (out.stdout + out.stderr)[-3000:])
        text = out.stdout + out.stderr
        starts = {int(m, 16) for m in re.findall(r"Memory read failed for corefile section, \d+ bytes at (0x[0-9a-f]+)", text)}
        lost = []
        for line in maps.splitlines():
            low, high = (int(x, 16) for x in line.split()[0].split("-"))
            if low in starts:
                lost.append((low, high))
        sps = {int(lwp): int(sp, 16) for lwp, sp in re.findall(r"^Thread \d+ \(.*?LWP (\d+).*\):\n\$\d+ = (0x[0-9a-f]+)$", text, re.M)}
        if len(sps) != len(self.threads()):
            raise SystemExit("gcore's session printed the stack pointers of %d threads, not %d:\n%s" % (
                len(sps), len(self.threads()), text[-3000:]))
        return core, {tid for tid, sp in sps.items() if any(low <= sp < high for low, high in lost)}

    def kill(self):
        for pid in ([self.pid] if self.pid and self.pid != self.popen.pid else []):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        session.kill_group(self.popen)

    def remove(self):
        shutil.rmtree(self.files, ignore_errors=True)


# ---- the front ends: one session each, an answer for each command


def marker(debugger, text):
    return 'echo @@ %s\\n' % text if debugger == "gdb" else 'script print("@@ %s")' % text


def sections(output):
    """{marker: the text after it}. The debugger's own lines are not the command's: lldb-16's echo
    of each command, and a "warning: " either debugger prints of its own (a core's thread registers
    read on a first switch to the thread, a library of another build)."""
    found, current = {}, None
    for line in output.splitlines(keepends=True):
        if line.startswith("(lldb) ") or line.startswith("warning: "):
            continue
        if line.startswith("@@ "):
            current = line[3:].strip()
            found[current] = ""
        elif current:
            found[current] += line
    return found


def debugger_session(debugger, plugin, commands, program=None, core=None, pid=None, sysroot=None):
    """(answers by name, transcript) of one batch session of gdb or lldb-16. Each command follows a
    marker (-ex / -o: a command GDB or LLDB does not know ends no session before the markers)."""
    extra = []
    for name, command in commands:
        extra += [marker(debugger, name), command]
    extra.append(marker(debugger, "end"))
    argv = roots.debugger_argv(debugger, plugin, program, core=core, pid=pid, extra=extra, sysroot=sysroot)
    if debugger == "gdb":
        out = session.run(argv, timeout=SESSION_S)
    else:
        out, _first = session.run_lldb_aware(argv, timeout=SESSION_S)
    text = out.text + ("" if out.returncode is not None else "\n(the session did not end within %d s)" % SESSION_S)
    return sections(out.text), text


def dscope_session(dscope, target, commands, workdir, sysroot=None):
    """dscope pid PID / dscope core [--sysroot ROOT] CORE PROGRAM, every command in one session
    (--commands); the transcript is split at its "(dscope) COMMAND" lines."""
    script = workdir / ("commands.dscope-%s" % target[0])
    script.write_text("".join(command + "\n" for _, command in commands))
    if target[0] == "core":
        argv = [dscope, "core"] + (["--sysroot", sysroot] if sysroot else []) + [str(t) for t in target[1:]]
    else:
        argv = [dscope, "pid", str(target[1])]
    out = subprocess.run(argv + ["--commands", str(script)], capture_output=True, text=True, timeout=SESSION_S,
                         stdin=subprocess.DEVNULL)
    text = out.stdout + out.stderr
    parts = re.split(r"^\(dscope\) .*\n", out.stdout, flags=re.M)
    if len(parts) != len(commands) + 1:
        return {}, text + "\n(%d answers to %d commands, exit %d)" % (len(parts) - 1, len(commands), out.returncode)
    answers = {name: part for (name, _), part in zip(commands, parts[1:])}
    answers["end"] = ""
    return answers, text


# ---- the checks


def parse_blocks(text):
    """The blocks of a python-bt text answer: [(host tid, own tid, shown, frame lines or None)] and
    the problems with its form (one blank line between blocks, each block a header and its frames)."""
    blocks, problems = [], []
    body = text.rstrip("\n")
    if not body:
        return blocks, ["an empty answer"]
    for chunk in body.split("\n\n"):
        lines = chunk.split("\n")
        header = HEADER.match(lines[0])
        no_state = NO_STATE.match(lines[0])
        if no_state and len(lines) == 1:
            host, own = int(no_state.group(1)), int(no_state.group(2) or no_state.group(1))
            blocks.append((host, own, lines[0][len("Python stack of thread "):lines[0].index(": no Python")], None))
            continue
        if not header:
            problems.append("not a block of python-bt: %r" % chunk[:300])
            continue
        host, own, count = int(header.group(1)), int(header.group(2) or header.group(1)), int(header.group(3))
        frames = lines[1:]
        bad = [line for line in frames if not FRAME.match(line) and not CORRUPT.match(line)]
        counted = [line for line in frames if FRAME.match(line)]
        if bad or len(counted) != count:
            problems.append("the block of thread %d says %d frames and has %d frame lines%s" % (
                host, count, len(counted), " (not frame lines: %r)" % bad[:3] if bad else ""))
        shown = lines[0][len("Python stack of thread "):lines[0].rindex(" (")]
        blocks.append((host, own, shown, frames))
    if text.rstrip("\n") + "\n" != text:
        problems.append("the answer does not end in one newline")
    return blocks, problems


def shown_of(host, own):
    return str(host) + ("" if host == own else " (tid %d in its pid namespace)" % own)


def has_thread_state(oracle, own):
    return own == oracle["frameless"] or any(t["native_id"] == own for t in oracle["threads"])


def lost_prefix(frames, want):
    """Whether a lost thread's frames (View.lost) are the account's innermost ones, at least one,
    then the frame where the core holds zeros."""
    if not frames or not want or not isinstance(want, list):
        return False
    last = CORRUPT.match(frames[-1])
    return bool(last) and last.group(2) == LOST_FRAME and 1 <= len(frames) - 1 < len(want) and frames[:-1] == want[:len(frames) - 1]


def expected_frames(oracle, own):
    """What the oracle says thread `own` shows: its frame lines, [] (a thread state without frames),
    None (no thread state), or "other" (a thread the program did not make: no frames either way)."""
    for thread in oracle["threads"]:
        if thread["native_id"] == own:
            return [f["text"] for f in thread["frames"]]
    if own == oracle["frameless"]:
        return []
    if own == oracle["native"]:
        return None
    return "other"


def check_all_text(who, text, oracle, threads, namespaced, lost):
    """python-bt --all against the oracle and the kernel's thread list; its blocks."""
    blocks, problems = parse_blocks(text)
    problems = ["%s python-bt --all: %s" % (who, p) for p in problems]
    seen = {}
    for host, own, shown, frames in blocks:
        if host in seen:
            problems.append("%s python-bt --all: thread %d has two blocks" % (who, host))
        seen[host] = own
        # A lost thread's namespace id is told by its Python thread state alone.
        known = threads.get(host, host)
        if host in lost and not has_thread_state(oracle, known):
            known = host
        if shown != shown_of(host, known):
            problems.append("%s python-bt --all: thread named %r; ThreadIds::shown names it %r (the kernel's NSpid: %s%s)" % (
                who, shown, shown_of(host, known), threads.get(host), "; its stack lost in the core" if host in lost else ""))
        want = expected_frames(oracle, own)
        if want == "other":
            if frames:
                problems.append("%s python-bt --all: thread %s, which the program did not start, shows frames:\n%s" % (
                    who, shown, "\n".join(frames)))
        elif frames != want and not (host in lost and lost_prefix(frames, want)):
            problems.append("%s python-bt --all: thread %s differs from the process's own account:\n--- the process "
                            "(traceback.format_stack, innermost first)\n%s\n--- %s\n%s" % (
                                who, shown, describe(want), who, describe(frames)))
    if set(seen) != set(threads):
        problems.append("%s python-bt --all: blocks for threads %s; the process has %s" % (
            who, sorted(seen), sorted(threads)))
    if namespaced and not any(host != own for host, own in seen.items()):
        problems.append("%s python-bt --all: no thread named with its pid namespace's id" % who)
    python_threads = [t["native_id"] for t in oracle["threads"]]
    found = [own for _h, own, _s, frames in blocks if frames]
    if not blocks or not all(n in found for n in python_threads):
        problems.append("%s python-bt --all: no frames for the program's Python threads %s (found frames for %s)" % (
            who, sorted(set(python_threads) - set(found)), sorted(found)))
    for thread in oracle["threads"]:  # the known functions, in so many words (the oracle has them)
        block = next((b for b in blocks if b[1] == thread["native_id"]), None)
        names = [re.sub(r'.*, in ', "", line) for line in (block[3] or [])] if block else []
        missing = [n for n in thread["names"] if n not in names]
        if block and missing and block[0] not in lost:
            problems.append("%s python-bt --all: thread %s (%s) lacks %s" % (who, block[2], thread["role"], missing))
    return blocks, problems


def describe(frames):
    if frames is None:
        return "(no Python thread state)"
    return "\n".join(frames) if frames else "(0 frames)"


def check_json(who, text, oracle, blocks, lost):
    """python-bt --all --json against the oracle and the text's blocks; the document."""
    try:
        doc = json.loads(text)
    except ValueError:
        return None, ["%s python-bt --all --json: not one JSON document: %r" % (who, text[-1500:])]
    problems = []
    head = {k: doc.get(k) for k in ("schema", "version", "python")}
    want = {"schema": "dscope-python-bt", "version": "1.0", "python": oracle["python"]}
    if head != want:
        problems.append("%s python-bt --all --json: %s, expected %s" % (who, head, want))
    threads = doc.get("threads")
    if not isinstance(threads, list) or not threads:
        return doc, problems + ["%s python-bt --all --json: no threads: %r" % (who, text[:1500])]
    if [(t.get("tid"), t.get("shown_tid")) for t in threads] != [(b[0], b[2]) for b in blocks]:
        problems.append("%s python-bt --all --json: threads %s; the text's, in its order: %s" % (
            who, [(t.get("tid"), t.get("shown_tid")) for t in threads], [(b[0], b[2]) for b in blocks]))
    by_own = {t["native_id"]: t for t in oracle["threads"]}
    for thread, block in zip(threads, blocks):
        frames = thread.get("frames")
        if frames is None:
            if block[3] is not None:
                problems.append("%s python-bt --all --json: thread %s has frames null; the text shows frames" % (who, block[2]))
            continue
        try:
            lines = ['  <corrupt Python frame at %s: %s>' % (f["address"], f["corrupt"]) if "corrupt" in f else
                     '  File "%s", line %d, in %s' % (f["file"], f["line"], f["name"]) for f in frames]
        except (KeyError, TypeError):
            problems.append("%s python-bt --all --json: thread %s: frames without name, file or line: %r" % (
                who, block[2], frames[:3]))
            continue
        if lines != block[3]:
            problems.append("%s python-bt --all --json: thread %s's frames differ from its text:\n%s\n--- text\n%s" % (
                who, block[2], describe(lines), describe(block[3])))
        if block[1] in by_own:
            want = [{k: f[k] for k in ("name", "qualname", "file", "line")} for f in by_own[block[1]]["frames"]]
            got = [{k: f.get(k) for k in ("name", "qualname", "file", "line")} for f in frames]
            if block[0] in lost and lost_prefix(lines, [l["text"] for l in by_own[block[1]]["frames"]]):
                got, want = got[:-1], want[:len(got) - 1]  # the text's check says where it ends
            if got != want:
                diff = next(i for i in range(max(len(got), len(want))) if got[i:i + 1] != want[i:i + 1])
                problems.append("%s python-bt --all --json: thread %s (%s), frame %d: %s; the process says %s" % (
                    who, block[2], by_own[block[1]]["role"], diff, got[diff:diff + 1], want[diff:diff + 1]))
    return doc, problems


def one_line(who, command, text, *parts):
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) != 1 or not lines[0].startswith("dscope: ") or any(p not in lines[0] for p in parts):
        return ["%s %s: expected one dscope: line with %s, got:\n%s" % (who, command, parts, text[-1500:])]
    return []


class View:
    """How a target names the program's threads: {the target's tid: the id the process knows it by}
    and the main thread's tid there. Live and on a core GDB writes (gcore), the host's tids; on a
    kernel core written inside a container, the namespace's own (the kernel writes each thread's id
    as the dumping process sees it): there the two ids agree."""

    def __init__(self, threads, main_tid, python_tids, lost=()):
        self.threads, self.main_tid = threads, main_tid
        # The threads whose stack block the core holds as zeros (StacksProgram.gcore): their Python
        # frames end where the chain goes through the C stack (3.12+ keep an evaluation loop's entry
        # frame there), in a frame python-bt calls corrupt; their namespace id is in the core only
        # where a Python thread state holds it (glibc's, in their struct pthread, is zeros).
        self.lost = set(lost)
        # The thread `--thread N` asks for: N is the debugger's thread N where it has one, else the
        # OS thread id N (Remote::chosenThread), so N must be past the thread count to mean a tid
        # (a kernel core in a container has tids from 1 up): the main thread, else the highest.
        unambiguous = [t for t in [main_tid] + sorted(python_tids, reverse=True) if t > len(threads)]
        if not unambiguous:
            raise SystemExit("no thread id past the count of threads (%d) to ask --thread for: %s" % (
                len(threads), sorted(threads)))
        self.thread_tid = unambiguous[0]


def check_answers(who, answers, transcript, oracle, view, live):
    """Every answer of one front end's session: the problems, and its answers (None when it has none)."""
    missing = next((n for n in NO_COMMAND if n in transcript), None)
    if missing:
        return ["%s: this build has no python-bt command (%r)" % (who, missing)], None
    if "end" not in answers:
        return ["%s did not answer every command:\n%s" % (who, transcript[-3000:])], None
    problems = ["%s: %s" % (who, f) for f in session.text_failures(transcript, reject=REJECT)]
    namespaced = any(host != own for host, own in view.threads.items())
    blocks, found = check_all_text(who, answers["all"], oracle, view.threads, namespaced, view.lost)
    problems += found
    _doc, found = check_json(who, answers["json"].strip(), oracle, blocks, view.lost)
    problems += found
    by_host = {b[0]: b for b in blocks}
    main_tid, asked = view.main_tid, view.thread_tid
    one, one_problems = parse_blocks(answers["thread"])
    if one_problems or len(one) != 1 or one[0][0] != asked or one[0] != by_host.get(asked):
        problems.append("%s python-bt --thread %d: expected the block of --all for thread %d, got:\n%s" % (
            who, asked, asked, answers["thread"][-2000:]))
    selected, selected_problems = parse_blocks(answers["selected"])
    if selected_problems or len(selected) != 1 or selected[0] != by_host.get(selected[0][0]) or (
            live and selected[0][0] != main_tid):
        problems.append("%s python-bt: expected one block of --all%s, got:\n%s" % (
            who, ", the main thread's (the selected thread)" if live else "", answers["selected"][-2000:]))
    problems += one_line(who, "python-bt --thread 999999", answers["no-thread"], "999999")
    problems += one_line(who, "python-bt --bogus", answers["bogus"], "--bogus", "python-bt")
    return problems, answers


def same_everywhere(results, live):
    """The front ends' answers to the same commands are the same text (JSON: the same document).
    The selected thread only live: on a core each debugger selects the thread it likes."""
    problems = []
    names = ["all", "json", "thread", "no-thread", "bogus"] + (["selected"] if live else [])
    usable = [(who, a) for who, (p, a) in results.items() if a]
    for name in names:
        texts = {}
        for who, answers in usable:
            text = answers[name].strip()
            if name == "json":
                try:
                    text = json.dumps(json.loads(text), sort_keys=True)
                except ValueError:
                    pass
            texts.setdefault(text, []).append(who)
        if len(texts) > 1:
            problems.append("the front ends answer `%s` differently:\n%s" % (
                dict(commands_for(0))[name] if name != "thread" else "python-bt --thread TID",
                "\n".join("--- %s\n%s" % (", ".join(w), t[:1500]) for t, w in texts.items())))
    return problems


def front_ends(a):
    return [("gdb", a.gdb_script)] + ([("lldb", a.lldb_plugin)] if a.lldb_plugin else [])


def run_live(a, target, view):
    """dscope pid, GDB attached, lldb-16 attached, one after another (one tracer at a time)."""
    commands = commands_for(view.thread_tid)
    results, times = {}, []
    started = time.monotonic()
    answers, text = dscope_session(a.dscope, ["pid", target.pid], commands, a.workdir)
    times.append("dscope pid %.1f s" % (time.monotonic() - started))
    results["dscope pid"] = check_answers("dscope pid", answers, text, target.oracle, view, True)
    if target.stopped():
        results["dscope pid"][0].append("dscope pid left the process stopped")
    for debugger, plugin in front_ends(a):
        started = time.monotonic()
        answers, text = debugger_session(debugger, plugin, commands, program=target.program if target.root else None,
                                         pid=target.pid, sysroot=target.live_sysroot)
        who = "%s attached" % label(debugger)
        times.append("%s %.1f s" % (who, time.monotonic() - started))
        results[who] = check_answers(who, answers, text, target.oracle, view, True)
        if target.stopped():
            results[who][0].append("%s left the process stopped" % who)
    return results, times


def run_core(a, target, view, core, kind):
    """dscope core, GDB and lldb-16 on the core, side by side."""
    commands = commands_for(view.thread_tid)

    def dscope():
        return dscope_session(a.dscope, ["core", core, target.program], commands, a.workdir, sysroot=target.core_sysroot)

    def debugger(name, plugin):
        return lambda: debugger_session(name, plugin, commands, program=target.program, core=core,
                                        sysroot=target.core_sysroot)

    jobs = [("dscope core", dscope)] + [("%s" % label(d), debugger(d, p)) for d, p in front_ends(a)]
    results, times = {}, []

    def timed(job):
        started = time.monotonic()
        out = job()
        return out, time.monotonic() - started

    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        futures = [("%s on the %s" % (who, kind), pool.submit(timed, job)) for who, job in jobs]
    for who, future in futures:
        (answers, text), elapsed = future.result()
        times.append("%s %.1f s" % (who, elapsed))
        results[who] = check_answers(who, answers, text, target.oracle, view, False)
    return results, times


def check_python(a, where, mode):
    if where != "host" and os.geteuid() != 0:
        print("python_bt %s_%s: a container needs root (unshare, pivot_root)" % (where, mode))
        return SKIP
    session.keep_file_pages_in_cores()
    started = time.monotonic()
    target = StacksProgram(a.workdir, None if where == "host" else where, a.roots_script)
    cores, problems = [], []
    times = ["the program ready in %.1f s" % (time.monotonic() - started)]
    try:
        threads = target.threads()
        if len(target.oracle["threads"]) < 6 or len(threads) < 8:
            raise SystemExit("the program has %d Python threads with frames and %d threads, not 6 and 8 or more" % (
                len(target.oracle["threads"]), len(threads)))
        python_tids = [h for h, own in threads.items() if own in [t["native_id"] for t in target.oracle["threads"]]]
        host_view = View(threads, target.pid, python_tids)
        if mode == "live":
            results, more = run_live(a, target, host_view)
            times += more
            problems += sum((p for p, _ in results.values()), []) + same_everywhere(results, True)
        else:
            # A gcore core (GDB writes the host's tids); in a container also the kernel's core of its
            # SIGABRT (the namespace's tids), when core_pattern names a file (a pipe takes it elsewhere).
            step = time.monotonic()
            core, lost = target.gcore(a.workdir / "python.gcore")
            cores.append(("gcore core", core, View(threads, target.pid, python_tids, lost)))
            times.append("gcore %.1f s (%.0f MB%s)" % (time.monotonic() - step, core.stat().st_size / 1e6,
                                                       ", %d stacks lost" % len(lost) if lost else ""))
            pattern = pathlib.Path("/proc/sys/kernel/core_pattern").read_text().strip()
            if target.root and not pattern.startswith("|") and "/" not in pattern:
                step = time.monotonic()
                own = View({n: n for n in threads.values()}, target.oracle["pid"], [threads[h] for h in python_tids])
                cores.append(("kernel core", target.kernel_core(), own))
                times.append("kernel core %.1f s (%.0f MB)" % (time.monotonic() - step, cores[-1][1].stat().st_size / 1e6))
            elif target.root:
                times.append("no kernel core (core_pattern %r)" % pattern)
            target.kill()
            for kind, core, view in cores:
                results, more = run_core(a, target, view, core, kind)
                times += more
                problems += sum((p for p, _ in results.values()), []) + [
                    "%s: %s" % (kind, p) for p in same_everywhere(results, False)]
    finally:
        target.kill()
        for _kind, core, _view in cores:
            if core.exists():
                core.unlink()
        target.remove()
    o = target.oracle
    print("python-bt %s_%s: Python %s, torch %s, %d threads (%d with Python frames): %d problems; %s" % (
        where, mode, o["python"], o["torch"], len(threads), len(o["threads"]), len(problems), ", ".join(times)))
    return report(problems)


def report(problems):
    for problem in problems[:10]:
        print(problem[:4000])
    if len(problems) > 10:
        print("... and %d more" % (len(problems) - 10))
    return 1 if problems else 0


# ---- no Python at all


def check_bad_input(a):
    """A process that runs no Python: the op_catalog sample, live and a gcore core of it."""
    program = pathlib.Path(a.samples) / "op_catalog"
    session.keep_file_pages_in_cores()
    popen = subprocess.Popen([str(program)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, start_new_session=True)
    problems, core = [], a.workdir / "op_catalog.core"
    commands = [("selected", "python-bt"), ("all", "python-bt --all"), ("json", "python-bt --all --json"),
                ("thread", "python-bt --thread %d" % popen.pid)]
    results = {}
    try:
        wait_for_line(popen, r"^op_catalog: .*, ready$", "op_catalog")
        results["dscope pid"] = dscope_session(a.dscope, ["pid", popen.pid], commands, a.workdir)
        for debugger, plugin in front_ends(a):
            results["%s attached" % label(debugger)] = debugger_session(debugger, plugin, commands, pid=popen.pid)
        out = subprocess.run(session.gdb_batch("-iex", "set debuginfod enabled off", "-p", str(popen.pid),
                                               "-ex", "gcore " + str(core)), capture_output=True, text=True, timeout=300)
        if not core.exists():
            raise SystemExit("gcore wrote no core:\n" + (out.stdout + out.stderr)[-3000:])
    finally:
        session.kill_group(popen)
    try:
        with ThreadPoolExecutor(max_workers=3) as pool:
            jobs = {"dscope core": pool.submit(dscope_session, a.dscope, ["core", core, program], commands, a.workdir)}
            for debugger, plugin in front_ends(a):
                jobs["%s on the core" % label(debugger)] = pool.submit(debugger_session, debugger, plugin, commands,
                                                                 program=program, core=core)
        results.update({who: job.result() for who, job in jobs.items()})
    finally:
        core.unlink()
    for who, (answers, transcript) in results.items():
        missing = next((n for n in NO_COMMAND if n in transcript), None)
        if missing or "end" not in answers:
            problems.append("%s: this build has no python-bt command (%r)" % (who, missing) if missing else
                            "%s did not answer every command:\n%s" % (who, transcript[-3000:]))
            continue
        problems += ["%s: %s" % (who, f) for f in session.text_failures(transcript, reject=REJECT)]
        for name, command in commands:
            text = answers[name]
            if [line for line in text.splitlines() if line.strip()] != [NO_RUNTIME]:
                problems.append("%s %s: expected the one line %r, got:\n%s" % (who, command, NO_RUNTIME, text[-1500:]))
    print("python-bt bad_input (op_catalog, no Python): %d problems" % len(problems))
    return report(problems)


def main():
    p = argparse.ArgumentParser()
    checks = ["%s_%s" % (w, m) for w in ("host", "trixie", "sid") for m in ("live", "core")] + ["bad_input"]
    p.add_argument("--check", choices=checks, required=True)
    p.add_argument("--dscope", required=True)
    p.add_argument("--gdb-script", required=True)
    p.add_argument("--lldb-plugin", help="also lldb-16 with this plugin")
    p.add_argument("--roots-script", default=str(HERE.parent.parent / "scripts" / "torch-roots.sh"))
    p.add_argument("--samples", help="bad_input: the folder of the samples (op_catalog)")
    p.add_argument("--workdir", type=pathlib.Path, required=True)
    a = p.parse_args()
    shutil.rmtree(a.workdir, ignore_errors=True)
    a.workdir.mkdir(parents=True)
    if a.check == "bad_input":
        if not a.samples:
            p.error("bad_input needs --samples")
        return check_bad_input(a)
    where, mode = a.check.split("_")
    return check_python(a, where, mode)


if __name__ == "__main__":
    sys.exit(main())
