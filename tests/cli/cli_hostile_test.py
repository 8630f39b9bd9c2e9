#!/usr/bin/env python3
"""dscope against hostile files, limits and environments (issue 33): one record per input or one
dscope: line, never a hang, a crash, unbounded memory or disk, or a record lost without a word.

  hang        a FIFO as the core, alone and in a batch's directory; a piped core (/dev/stdin,
              <(cat core)): one line saying it needs a file; DEBUGINFOD_URLS naming a server that
              accepts and never answers: dscope never connects to it.
  torch_core  the same server for GDB and lldb-16 on a PyTorch kernel core (the inspect
              library's symbolizer reads libtorch_cpu, which has no .symtab): no connection; dscope
              on that core under ulimit -v 300 000 and 600 000 KiB: one line naming the limit.
  bounds      2 000 PT_NOTE headers over one block of 30 000 thread notes (under a 2 GiB address
              space limit); a zstd file of 320 KiB that says it expands to 10 GiB, one that says
              nothing and expands past what its size allows, an xz file whose dictionary is 4 GiB,
              a compressed core under ulimit -f 0: one line each, naming the cause.
  records     a directory with a dangling link, a link loop, a FIFO and a subdirectory; a directory
              that cannot be listed; a process limit (ulimit -u) that stops workers from starting;
              stdout on /dev/full or closed; a worker killed by SIGKILL: every input its record (or
              the run fails, saying why), and what happened, not "took more than 300 s".
  traced      two dscope pid on one process at once: the one that loses says the process is being
              traced by the other, not "permission denied".
  names       cores named in UTF-8, in bytes that are no UTF-8, with a newline or ESC: JSON keeps the
              name (invalid bytes as U+DC80-U+DCFF, docs/JSON-SCHEMA.md), every record one line
              valid against the schema, and no control character reaches the terminal raw.

  cli_hostile_test.py --check NAME --dscope D --samples DIR --cores DIR --schema S --gdb-script S
                      [--lldb-plugin P] [--profiles DIR] --workdir DIR
"""

import argparse
import json
import lzma
import os
import pathlib
import resource
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import zlib

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "torch"))
import torch_oracle_test as sessions  # noqa: E402  (debugger_argv; tests/e2e on sys.path)

SKIP = 77
TIMEOUT = 120  # a hang fails the test here, never its time


class Result:
    def __init__(self, returncode, stdout, stderr):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def run(argv, timeout=TIMEOUT, limits=(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, env=None, user=False,
        cwd=None):
    """argv's exit status, stdout and stderr (bytes decoded losslessly); a timeout is a failure.
    limits: (resource, value) pairs set in the child; user: run as user 65534 (setpriv)."""
    argv = [a if isinstance(a, bytes) else str(a) for a in argv]
    if user:
        argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + argv

    def apply_limits():
        for which, value in limits:
            resource.setrlimit(which, (value, value))

    try:
        out = subprocess.run(argv, stdin=stdin, stdout=stdout, stderr=subprocess.PIPE, timeout=timeout,
                             preexec_fn=apply_limits, env=env, cwd=cwd)
    except subprocess.TimeoutExpired:
        return Result(-1, "", "(no answer in %d s: a hang)" % timeout)
    decode = lambda b: (b or b"").decode("utf-8", "surrogateescape")  # noqa: E731
    return Result(out.returncode, decode(out.stdout), decode(out.stderr))


def dscope(a, *argv, **kwargs):
    return run([a.dscope] + list(argv), **kwargs)


def one_line(out, expected, what):
    """[] when out is a failure with exactly one "dscope: " line on stderr containing expected."""
    lines = out.stderr.splitlines()
    if out.returncode > 0 and not out.stdout and len(lines) == 1 and lines[0].startswith("dscope: ") \
            and expected in lines[0]:
        return []
    return ["%s: exit %d, stdout %r, stderr %r (expected one dscope: line with %r)" % (
        what, out.returncode, out.stdout[:300], out.stderr[:1000], expected)]


def records(a, out, what):
    """The JSON records of a batch's stdout, each checked against the schema; problems."""
    import jsonschema
    validator = jsonschema.Draft202012Validator(json.loads(a.schema.read_text()))
    found, problems = [], []
    for i, line in enumerate(out.stdout.splitlines()):
        try:
            record = json.loads(line)
        except ValueError as e:
            problems.append("%s: line %d is not JSON (%s): %r" % (what, i, e, line[:300]))
            continue
        problems += ["%s: record %d against the schema: %s" % (what, i, error.message)
                     for error in validator.iter_errors(record)]
        found.append(record)
    return found, problems


def expect_records(a, out, expected, what, status=1):
    """Problems unless out holds one record per (core, error text or None for a summary) of
    expected, in order, and exits with status, nothing on stderr."""
    found, problems = records(a, out, what)
    got = [(r.get("core"), r.get("error")) for r in found]
    ok = len(got) == len(expected) and all(
        core == want_core and ((want is None and error is None and "summary" in r) or
                               (want is not None and error is not None and want in error))
        for (core, error), (want_core, want), r in zip(got, expected, found))
    if not ok or out.returncode != status or out.stderr:
        problems.append("%s: records %r, exit %d, stderr %r; expected %r, exit %d" % (
            what, got, out.returncode, out.stderr[:500], expected, status))
    return problems


def fresh(path):
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def good_core(a):
    return a.cores / "crash_infinite_redispatch.core", a.samples / "infinite_redispatch"


def release_fifo(fifo):
    """Lets a reader blocked opening the FIFO (today's dscope) go: it sees an empty file."""
    try:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass


# ---- hang

class SilentServer:
    """A TCP server on 127.0.0.1 that accepts connections and never answers: how many came."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = "http://127.0.0.1:%d" % self.sock.getsockname()[1]
        self.accepted = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                self.accepted.append(self.sock.accept()[0])
            except OSError:
                return


def check_hang(a):
    workdir = fresh(a.workdir / "hang")
    core, program = good_core(a)
    problems = []
    fifo = workdir / "fifo.core"
    os.mkfifo(fifo)
    try:
        problems += one_line(dscope(a, "core", fifo), "%s is a pipe (FIFO), not a file" % fifo, "dscope core FIFO")
        batch = fresh(workdir / "batch")
        os.symlink(core, batch / "a.core")
        os.mkfifo(batch / "b.core")
        out = dscope(a, "core", "--json", "-j", "2", batch)
        release_fifo(batch / "b.core")
        problems += expect_records(a, out, [(str(batch / "a.core"), None),
                                            (str(batch / "b.core"), "is a pipe (FIFO), not a file")], "a FIFO in a batch")
    finally:
        release_fifo(fifo)
    # A piped core: a pipe has no offsets to read a core's segments at.
    seek = "not a file: dscope reads a core from a file it can seek"
    with open(core, "rb") as f:
        cat = subprocess.Popen(["cat"], stdin=f, stdout=subprocess.PIPE)
        out = dscope(a, "core", "/dev/stdin", program, stdin=cat.stdout)
        cat.stdout.close()
        cat.kill()
        cat.wait()
    problems += one_line(out, "/dev/stdin is a pipe (FIFO), " + seek, "dscope core /dev/stdin < a pipe")
    out = run(["bash", "-c", '"$0" core <(cat "$1") "$2"', a.dscope, core, program])
    problems += one_line(out, seek, "dscope core <(cat core)")
    # debuginfod: no connection, the same answers as without it.
    server = SilentServer()
    commands = ["dispatch-trace --frames", "op-table aten::mm"]
    for i, command in enumerate(commands):
        plain = dscope(a, "core", core, program, *command.split())
        env = dict(os.environ, DEBUGINFOD_URLS=server.url, DEBUGINFOD_TIMEOUT="5",
                   DEBUGINFOD_CACHE_PATH=str(fresh(workdir / ("cache-dscope-%d" % i))))
        out = dscope(a, "core", core, program, *command.split(), env=env, timeout=300)
        if server.accepted or (out.stdout, out.stderr, out.returncode) != (plain.stdout, plain.stderr, plain.returncode):
            problems.append("dscope `%s` with DEBUGINFOD_URLS: %d connections to the server, %s the answer without it" % (
                command, len(server.accepted), "not" if out.stdout != plain.stdout else "and"))
        del server.accepted[:]
    return problems


def check_torch_core(a):
    """On a PyTorch kernel core: GDB and lldb-16 (the inspect library's own libdwfl use:
    libtorch_cpu has no .symtab) with DEBUGINFOD_URLS naming a server that never answers; and
    dscope under address-space limits (ulimit -v) too small for the core and its module files,
    where elfutils dereferenced what it could not map (SIGSEGV) or memory ran out (std::bad_alloc)."""
    pattern = pathlib.Path("/proc/sys/kernel/core_pattern").read_text().strip()
    if pattern.startswith("|") or "/" in pattern:
        print("SKIP: kernel.core_pattern (%s) does not write cores into the working directory" % pattern)
        return SKIP
    workdir = fresh(a.workdir / "torch_core")
    python = os.path.realpath("/usr/bin/python3")
    run(["bash", "-c", 'ulimit -c unlimited; echo 0x33 > /proc/self/coredump_filter; exec "$0" -c "$1"', python,
         "import os, torch; torch.ones(3).add(1); os.abort()"], cwd=workdir)
    cores = sorted(workdir.glob("core*"))
    if not cores:
        return ["no core from the aborted PyTorch process in %s" % workdir]
    # The answer: dscope's without the variable (GDB and lldb-16 print the same text), from its
    # first line on (GDB says ahead of it that it does not use the server).
    answer = lambda text: text[text.find("name: aten::mm"):] if "name: aten::mm" in text else text  # noqa: E731
    env = dict(os.environ, DSCOPE_PROFILE_PATH=str(a.profiles))
    plain = dscope(a, "core", cores[0], python, "op-table", "aten::mm", env=env)
    problems = [] if "CPU: " in plain.stdout else ["dscope core on the PyTorch core: %s" % (plain.stdout + plain.stderr)[-1500:]]
    server = SilentServer()
    debuggers = [("gdb", a.gdb_script)] + ([("lldb", a.lldb_plugin)] if a.lldb_plugin else [])
    for debugger, plugin in debuggers:
        argv = sessions.debugger_argv(debugger, str(plugin), python, core=cores[0], extra=["op-table aten::mm"])
        out = run(argv, timeout=300, env=dict(env, DEBUGINFOD_URLS=server.url, DEBUGINFOD_TIMEOUT="5",
                                             DEBUGINFOD_CACHE_PATH=str(fresh(workdir / ("cache-" + debugger)))))
        if server.accepted or answer(out.stdout) != answer(plain.stdout):
            problems.append("%s `op-table aten::mm` with DEBUGINFOD_URLS: %d connections to the server, %s:\n%s" % (
                debugger, len(server.accepted), "dscope's answer" if answer(out.stdout) == answer(plain.stdout) else
                "not dscope's answer", (out.stdout + out.stderr)[-1500:]))
        del server.accepted[:]
    for kib in (300000, 600000):
        out = dscope(a, "core", cores[0], python, "dispatch-summary", env=env,
                     limits=[(resource.RLIMIT_AS, kib * 1024)])
        problems += one_line(out, "under the address-space limit of %d KiB (ulimit -v)" % kib, "ulimit -v %d" % kib)
    return problems


# ---- bounds

GiB = 1 << 30


def note_bomb(core, path, headers=2000, notes=30000):
    """core with one block of `notes` copies of its first NT_PRSTATUS note and `headers` PT_NOTE
    headers over it, ahead of its own program headers (moved to the end of the file)."""
    data = bytearray(core.read_bytes())
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    phdrs = [bytes(data[phoff + i * phentsize:phoff + (i + 1) * phentsize]) for i in range(phnum)]
    note = next(p for p in phdrs if struct.unpack_from("<I", p, 0)[0] == 4)  # PT_NOTE
    offset, filesz = struct.unpack_from("<Q", note, 8)[0], struct.unpack_from("<Q", note, 32)[0]
    at, prstatus = offset, None
    while at < offset + filesz:
        namesz, descsz, kind = struct.unpack_from("<III", data, at)
        size = 12 + (namesz + 3) // 4 * 4 + (descsz + 3) // 4 * 4
        if kind == 1:  # NT_PRSTATUS
            prstatus = bytes(data[at:at + size])
            break
        at += size
    block_at = len(data)
    data += prstatus * notes
    bomb = struct.pack("<IIQQQQQQ", 4, 4, block_at, 0, 0, len(prstatus) * notes, 0, 4)
    new_phoff = len(data)
    data += bomb * headers + b"".join(phdrs)
    struct.pack_into("<Q", data, 0x20, new_phoff)
    struct.pack_into("<H", data, 0x38, headers + phnum)
    path.write_bytes(bytes(data))


def zstd_zeros(path, size, claim):
    """A zstd frame of RLE blocks that repeat a zero byte `size` bytes long, saying its size in
    its header (claim) or not."""
    block = 1 << 17
    header = b"\x28\xb5\x2f\xfd" + (bytes([0xc0, 0x38]) + struct.pack("<Q", size) if claim else bytes([0x00, 0x38]))
    count = size // block
    rle = struct.pack("<I", (block << 3) | (1 << 1))[:3] + b"\x00"
    last = struct.pack("<I", (block << 3) | (1 << 1) | 1)[:3] + b"\x00"
    path.write_bytes(header + rle * (count - 1) + last)


def xz_huge_dictionary(path):
    """An xz file whose LZMA2 filter declares a dictionary of 4 GiB (properties byte 40)."""
    data = bytearray(lzma.compress(b"dscope" * 1000, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC32,
                                   filters=[{"id": lzma.FILTER_LZMA2, "dict_size": 1 << 20}]))
    start = 12  # the block header, after the stream header
    size = (data[start] + 1) * 4
    flags = data[start + 1]
    at = start + 2
    for present in (0x40, 0x80):  # compressed, uncompressed size (variable-length integers)
        if flags & present:
            while data[at] & 0x80:
                at += 1
            at += 1
    assert data[at] == 0x21 and data[at + 1] == 1, "not an LZMA2 filter"
    data[at + 2] = 40
    struct.pack_into("<I", data, start + size - 4, zlib.crc32(bytes(data[start:start + size - 4])))
    path.write_bytes(bytes(data))


def check_bounds(a):
    workdir = fresh(a.workdir / "bounds")
    core, program = good_core(a)
    env = dict(os.environ, TMPDIR=str(workdir))
    problems = []
    bomb = workdir / "notes.core"
    note_bomb(core, bomb)
    out = dscope(a, "core", bomb, program, limits=[(resource.RLIMIT_AS, 2 * GiB)])
    problems += one_line(out, "%s is corrupt: its 2001 note segments (PT_NOTE) overlap in the file" % bomb,
                         "2 000 PT_NOTE x 30 000 NT_PRSTATUS")
    claims = workdir / "claims.core.zst"
    zstd_zeros(claims, 10 * GiB, claim=True)
    out = dscope(a, "core", claims, env=env, limits=[(resource.RLIMIT_FSIZE, 64 << 20)])
    # (On a disk with less than 1.3 GiB free, the free space is the smaller bound, and named.)
    problems += one_line(out, "cannot decompress %s (zstd): it says it expands to 10.0 GiB, more than " % claims,
                         "a 320 KiB .zst that says 10 GiB")
    # Saying nothing, it is stopped when it has written more than its size allows (1 GiB and 256
    # times its size), before the file size limit (ulimit -f) would stop it.
    silent = workdir / "silent.core.zst"
    zstd_zeros(silent, 2 * GiB, claim=False)
    out = dscope(a, "core", silent, env=env, limits=[(resource.RLIMIT_FSIZE, 3 * GiB // 2)])
    problems += one_line(out, "cannot decompress %s (zstd): it expands to more than " % silent,
                         "a 64 KiB .zst that expands to 2 GiB")
    dictionary = workdir / "dictionary.core.xz"
    xz_huge_dictionary(dictionary)
    out = dscope(a, "core", dictionary, env=env, limits=[(resource.RLIMIT_AS, GiB)])
    problems += one_line(out, "cannot decompress %s (xz): its dictionary needs 4.0 GiB of memory, more than the "
                              "256.0 MiB dscope gives a decoder" % dictionary, "an .xz with a 4 GiB dictionary")
    compressed = workdir / "core.zst"
    subprocess.run(["zstd", "-q", "-1", "-f", core, "-o", compressed], check=True, timeout=TIMEOUT)
    out = dscope(a, "core", compressed, program, env=env, limits=[(resource.RLIMIT_FSIZE, 0)])
    problems += one_line(out, "cannot decompress %s into %s: the file size limit (ulimit -f) is smaller than the "
                              "core" % (compressed, workdir), "a compressed core under ulimit -f 0")
    return problems


# ---- records

def check_records(a):
    workdir = fresh(a.workdir / "records")
    core, program = good_core(a)
    problems = []
    batch = fresh(workdir / "batch")
    os.symlink(core, batch / "a.core")
    os.symlink(workdir / "nowhere", batch / "b.core")
    os.symlink("c.core", batch / "c.core")
    (batch / "d").mkdir()
    os.mkfifo(batch / "e.core")
    out = dscope(a, "core", "--json", "-j", "2", batch)
    release_fifo(batch / "e.core")
    problems += expect_records(a, out, [
        (str(batch / "a.core"), None), (str(batch / "b.core"), "cannot open %s: No such file" % (batch / "b.core")),
        (str(batch / "c.core"), "cannot open %s: Too many levels of symbolic links" % (batch / "c.core")),
        (str(batch / "e.core"), "is a pipe (FIFO)")], "a directory of links, a loop, a FIFO")

    # Stdout that takes nothing: the run fails, saying so.
    with open("/dev/full", "wb") as full:
        for argv in (["core", core, program], ["core", "--json", core, core]):
            out = dscope(a, *argv, stdout=full)
            problems += one_line(out, "cannot write to standard output: No space left on device",
                                 "dscope %s > /dev/full" % argv[1])
    out = run(["bash", "-c", '"$0" core "$1" "$2" >&-', a.dscope, core, program])
    problems += one_line(out, "cannot write to standard output: Bad file descriptor", "dscope core with stdout closed")

    # A worker killed by SIGKILL (as the out-of-memory killer does) is said to be.
    many = fresh(workdir / "many")
    for i in range(12):
        os.symlink(core, many / ("%02d.core" % i))
    proc = subprocess.Popen([a.dscope, "core", "--json", "-j", "1", str(many)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    killed = None
    deadline = time.monotonic() + TIMEOUT
    while killed is None and proc.poll() is None and time.monotonic() < deadline:
        try:
            children = pathlib.Path("/proc/%d/task/%d/children" % (proc.pid, proc.pid)).read_text().split()
        except OSError:
            children = []
        if children:
            killed = int(children[0])
            os.kill(killed, signal.SIGKILL)
        time.sleep(0.002)
    try:
        stdout, stderr = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        stdout, stderr = proc.communicate()
    out = Result(proc.returncode, stdout.decode(errors="replace"), stderr.decode(errors="replace"))
    found, found_problems = records(a, out, "a batch with a worker killed")
    errors = [r.get("error") for r in found if "error" in r]
    if killed is None or len(found) != 12 or found_problems or len(errors) != 1 or \
            "was killed by SIGKILL before its 300 s were up" not in errors[0] or out.returncode != 1:
        problems.append("a worker killed by SIGKILL (pid %s): %d records, errors %r, exit %d %s" % (
            killed, len(found), errors, out.returncode, found_problems[:3]))

    # As another user: a directory it cannot list, and a process limit that stops workers.
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        print("(not root or no setpriv: the unlistable directory and the process limit are not checked)")
        return problems
    readable = workdir / "readable.core"
    shutil.copy(core, readable)
    os.chmod(readable, 0o644)
    closed = workdir / "closed"
    closed.mkdir()
    os.symlink(readable, closed / "x.core")
    os.chmod(closed, 0o000)
    out = dscope(a, "core", "--json", readable, closed, user=True)
    problems += expect_records(a, out, [(str(readable), None),
                                        (str(closed), "cannot list the directory %s: Permission denied" % closed)],
                               "a directory user 65534 cannot list")
    os.chmod(closed, 0o755)
    worker = "cannot start a worker for %s: Resource temporarily unavailable (the process limit, ulimit -u)"
    out = dscope(a, "core", "--json", "-j", "2", readable, readable, user=True, limits=[(resource.RLIMIT_NPROC, 1)])
    problems += expect_records(a, out, [(str(readable), worker % readable)] * 2, "ulimit -u 1: no worker starts")
    out = dscope(a, "core", "--json", "-j", "2", readable, readable, readable, user=True,
                 limits=[(resource.RLIMIT_NPROC, 2)])
    problems += expect_records(a, out, [(str(readable), None)] * 3, "ulimit -u 2: one worker at a time", status=0)
    return problems


# ---- names

def check_names(a):
    workdir = fresh(a.workdir / "names")
    core, program = good_core(a)
    batch = fresh(workdir / "batch")
    names = ["cœur-é.core", os.fsdecode(b"bad\xff\xfe.core"), "new\nline.core", "esc\x1b[31mred.core"]
    for name in names:
        os.symlink(core, os.path.join(os.fsencode(batch), os.fsencode(name)))
    gone = os.fsdecode(b"gone\n\x1b[2J\xff.core")
    os.symlink(workdir / "nowhere", os.path.join(os.fsencode(batch), os.fsencode(gone)))
    order = sorted(names + [gone], key=os.fsencode)
    problems = []
    out = dscope(a, "core", "--json", "-j", "2", batch)
    # The record's "core" is the name (json gives lone surrogates for the bytes that are no UTF-8).
    expected = [(str(batch) + "/" + n, "cannot open " if n == gone else None) for n in order]
    problems += expect_records(a, out, expected, "a batch of strange names")
    for record in records(a, out, "")[0]:
        if "error" in record and ("\x1b" in record["error"] or "\n" in record["error"]):
            problems.append("the error line of %r holds the name raw: %r" % (record["core"], record["error"]))
    # Text: one "core NAME:" line per core, names escaped, no control character but newlines.
    out = dscope(a, "core", "-j", "2", batch)
    heads = [line for line in out.stdout.splitlines() if line.startswith("core ")]
    shown = ["core %s/%s:" % (batch, n.replace("\n", "\\n").replace("\x1b", "\\x1b").replace("\udcff", "\\xff")
                                                .replace("\udcfe", "\\xfe")) for n in order]
    raw = [c for c in out.stdout + out.stderr if (ord(c) < 0x20 and c != "\n") or 0xdc80 <= ord(c) <= 0xdcff]
    if heads != shown or raw:
        problems.append("text batch: heads %r (expected %r), raw control characters or bytes %r" % (heads, shown, raw[:5]))
    out = dscope(a, "core", os.path.join(os.fsencode(batch), os.fsencode(gone)))
    problems += one_line(out, "gone\\n\\x1b[2J\\xff.core: No such file or directory", "dscope core on a strange name")
    return problems


# ---- traced

def check_traced(a):
    """Two dscope pid at once, 40 times (the race that gave "permission denied" came about once in
    15 tries): the one that loses says the process is traced."""
    proc = subprocess.Popen([str(a.samples / "multithread"), "--no-crash", "--until-killed"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL)
    problems = []
    try:
        started = 0
        while started < 8:
            line = proc.stdout.readline()
            if not line:
                return ["multithread ended before its 8 threads started"]
            started += line.startswith("thread ")
        for _ in range(40):
            pair = [subprocess.Popen([a.dscope, "pid", str(proc.pid), "dispatch-trace", "--all"], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL) for _ in range(2)]
            for p in pair:
                stdout, stderr = p.communicate(timeout=TIMEOUT)
                if p.returncode != 0:
                    problems += one_line(Result(p.returncode, stdout, stderr), "traced by process %d" % (
                        (pair[0] if p is pair[1] else pair[1]).pid), "the second of two dscope pid")
    finally:
        proc.kill()
        proc.wait()
    return problems


CHECKS = {"hang": check_hang, "bounds": check_bounds, "records": check_records, "names": check_names,
          "traced": check_traced, "torch_core": check_torch_core}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--check", required=True, choices=sorted(CHECKS))
    p.add_argument("--dscope", required=True)
    p.add_argument("--samples", type=pathlib.Path, required=True, help="the directory of the sample programs")
    p.add_argument("--cores", type=pathlib.Path, required=True)
    p.add_argument("--schema", type=pathlib.Path, required=True)
    p.add_argument("--gdb-script", required=True)
    p.add_argument("--lldb-plugin")
    p.add_argument("--profiles", type=pathlib.Path, help="the layout profiles (torch_core)")
    p.add_argument("--workdir", type=pathlib.Path, required=True)
    a = p.parse_args()
    a.cores, a.samples, a.schema = a.cores.resolve(), a.samples.resolve(), a.schema.resolve()  # links point here
    a.profiles = a.profiles and a.profiles.resolve()
    a.workdir.mkdir(parents=True, exist_ok=True)
    problems = CHECKS[a.check](a)
    if problems == SKIP:
        return SKIP
    print("dscope %s: %d problems" % (a.check, len(problems)))
    for problem in problems[:10]:
        print(problem[:4000])
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
