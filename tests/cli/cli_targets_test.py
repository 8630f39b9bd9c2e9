#!/usr/bin/env python3
"""dscope's targets besides a plain core, each against GDB or against dscope on the plain core:

  live        dscope pid on multithread --no-crash --until-killed: op-table as GDB attached prints
              it while the process runs; every command as GDB prints it while it is stopped
              (SIGSTOP); well-formed thread lines naming its own tids; the process left running
              (or stopped, as it was), untraced; one dscope: line for no such process, or another
              user's process.
  compressed  the overflow core compressed by zstd, lz4 and xz at test time: the plain core's text;
              a cut or corrupt compressed file: one dscope: line.
  truncated   the overflow core cut at half: GDB's text for each command, one note on stderr saying
              which memory is missing, and in the --json record the note and the loop's signature (g++
              samples; clang's lose the runtime's descriptor with the half cut off: an error record).
  program     a core opened with another program: GDB's one line naming the mismatch; without a
              program, the text with the program named.
  missing     a core whose library, or program, is gone or changed since: one dscope: line naming
              the file (exit 77 where cores are piped to a program).

  cli_targets_test.py --check NAME --dscope D --gdb-script S --samples DIR --runtime LIB
                      --cores DIR --workdir DIR
"""

import argparse
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "torch"))
import torch_oracle_test as sessions  # noqa: E402  (marker, debugger_argv, sections; tests/e2e on sys.path)

SKIP = 77


def run(argv, **kwargs):
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL, **kwargs)


def dscope(a, *argv, **kwargs):
    out = run([a.dscope] + list(argv), **kwargs)
    return out.stdout + out.stderr, out


def gdb_answers(a, workdir, commands, program=None, core=None, pid=None):
    """GDB's text for each command (None where it printed none), on a core or attached to pid."""
    lines = []
    for i, command in enumerate(commands):
        lines += [sessions.marker("gdb", str(i)), command]
    lines.append(sessions.marker("gdb", "end"))
    script = workdir / "commands.gdb"
    script.write_text("\n".join(lines) + "\n")
    argv = sessions.debugger_argv("gdb", a.gdb_script, str(program) if program else None, core=core, pid=pid,
                                  commands=script)
    found = sessions.sections(run(argv).stdout)
    return [found.get(str(i)) for i in range(len(commands))]


def same_as_gdb(a, workdir, commands, texts, what, **target):
    """A problem for each command whose dscope text (texts) differs from GDB's."""
    problems = []
    for command, ours, theirs in zip(commands, texts, gdb_answers(a, workdir, commands, **target)):
        if ours != theirs:
            problems.append("%s: `%s` differs from GDB's:\n--- dscope\n%s--- gdb\n%s" % (what, command, ours, theirs))
    return problems


def one_line(out, expected, what):
    """[] when out is a failure with exactly one "dscope: " line on stderr containing expected."""
    lines = out.stderr.splitlines()
    if out.returncode != 0 and not out.stdout and len(lines) == 1 and lines[0].startswith("dscope: ") \
            and expected in lines[0]:
        return []
    return ["%s: exit %d, stdout %r, stderr %r (expected one dscope: line with %r)" % (
        what, out.returncode, out.stdout[:500], out.stderr[:1000], expected)]


# ---- live

def task_states(pid):
    """{tid: state letter} of the process's threads."""
    states = {}
    for task in (pathlib.Path("/proc/%d/task" % pid)).iterdir():
        try:
            stat = (task / "stat").read_text()
        except OSError:
            continue
        states[int(task.name)] = stat[stat.rindex(")") + 2]
    return states


def tracer(pid):
    for line in pathlib.Path("/proc/%d/status" % pid).read_text().splitlines():
        if line.startswith("TracerPid:"):
            return int(line.split()[1])
    return -1


def let_go(pid, stopped, what):
    """[] when dscope left every thread as it found it: untraced, running or group-stopped."""
    time.sleep(0.05)
    states = task_states(pid)
    wrong = {t: s for t, s in states.items() if (s == "T") != stopped or s == "t"}
    if wrong or tracer(pid) != 0:
        return ["%s: after dscope the threads are %s, traced by %d (expected %s, untraced)" % (
            what, states, tracer(pid), "stopped" if stopped else "running")]
    return []


THREAD_LINE = re.compile(r"^thread tid (\d+) \((alive|dead)\)(: .+)?$")


def check_live(a):
    workdir = a.workdir / "live"
    workdir.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen([str(a.samples / "multithread"), "--no-crash", "--until-killed"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL)
    problems = []
    try:
        workers = []
        while len(workers) < 8:
            line = proc.stdout.readline()
            if not line:
                return ["multithread ended before its 8 threads started"]
            found = re.match(r"thread \d+ started \(tid (\d+)\)", line)
            if found:
                workers.append(int(found.group(1)))
        time.sleep(0.2)  # each worker has dispatched since
        pid = proc.pid
        tasks = set(task_states(pid))

        # Running: the chains change from one read to the next; the thread lines' form and tids,
        # and the operator table, do not.
        text, out = dscope(a, "pid", pid, "dispatch-trace", "--all")
        heads = [line for line in text.splitlines() if line.startswith("thread ")]
        tids = [int(m.group(1)) for m in map(THREAD_LINE.match, heads) if m]
        if out.returncode != 0 or len(tids) != len(heads) or sorted(tids) != sorted(workers) or not set(tids) <= tasks:
            problems.append("dispatch-trace --all on the running process: exit %d, thread lines %r, tids %r "
                            "(expected the workers %r, among /proc's %r):\n%s" % (
                                out.returncode, heads, tids, sorted(workers), sorted(tasks), text))
        problems += let_go(pid, False, "dispatch-trace --all")
        text, out = dscope(a, "pid", pid, "op-table", "aten::mm")
        problems += let_go(pid, False, "op-table aten::mm")
        problems += same_as_gdb(a, workdir, ["op-table aten::mm"], [text], "running process", pid=pid)

        # Stopped: every command's text is GDB's (the selected thread is the main thread in both),
        # and the process stays stopped after dscope as before it.
        os.kill(pid, signal.SIGSTOP)
        deadline = time.monotonic() + 10
        while set(task_states(pid).values()) != {"T"} and time.monotonic() < deadline:
            time.sleep(0.01)
        commands = ["dispatch-trace --all", "dispatch-trace", "dispatch-trace --json", "keyset --tls",
                    "op-table aten::mm --computed", "dispatch-trace --frames"]
        texts = []
        for command in commands:
            texts.append(dscope(a, "pid", pid, *command.split())[0])
            problems += let_go(pid, True, command + " on the stopped process")
        if "thread tid %d " % pid not in texts[1]:
            problems.append("dispatch-trace: not the main thread (tid %d):\n%s" % (pid, texts[1]))
        problems += same_as_gdb(a, workdir, commands, texts, "stopped process", pid=pid)
        os.kill(pid, signal.SIGCONT)
        _, out = dscope(a, "pid", pid, "keyset", "--tls")
        problems += let_go(pid, False, "keyset --tls after SIGCONT")
        if proc.poll() is not None:
            problems.append("multithread ended (status %s) while dscope read it" % proc.returncode)

        problems += one_line(dscope(a, "pid", 999999999)[1], "no process with pid 999999999", "dscope pid 999999999")
        problems += one_line(dscope(a, "pid", "12ab")[1], "'12ab' is no process id", "dscope pid 12ab")
        setpriv = shutil.which("setpriv")
        if os.geteuid() == 0 and setpriv:  # another user's process
            out = run([setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", a.dscope, "pid", pid])
            problems += one_line(out, "permission denied", "dscope pid as user 65534")
            problems += let_go(pid, False, "the refused dscope pid")
    finally:
        proc.kill()
        proc.wait()
    return problems


# ---- compressed

def check_compressed(a):
    workdir = a.workdir / "compressed"
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    core, program = a.cores / "crash_infinite_redispatch.core", a.samples / "infinite_redispatch"
    commands = ["dispatch-trace", "op-table aten::mm", "keyset --tls"]
    plain = [dscope(a, "core", core, program, *c.split())[0] for c in commands]
    problems = []
    made = {"zstd": workdir / "overflow.core.zst", "lz4": workdir / "overflow.core.lz4", "xz": workdir / "overflow.core.xz"}
    for tool, argv in (("zstd", ["zstd", "-q", "-1", "-T2", "-f", core, "-o", made["zstd"]]),
                       ("lz4", ["lz4", "-q", "-1", "-f", core, made["lz4"]]),
                       ("xz", ["xz", "-1", "-T2", "-k", "-c", core])):
        if not shutil.which(tool):
            problems.append("%s is not installed (scripts/ensure-packages.sh installs it)" % tool)
            continue
        out = subprocess.run([str(x) for x in argv], capture_output=True, timeout=300)
        if tool == "xz":
            made["xz"].write_bytes(out.stdout)
        if out.returncode != 0:
            problems.append("%s failed: %s" % (tool, out.stderr.decode(errors="replace")))
    # The compression is told by the bytes: the zstd file under a plain name, the plain core under
    # a compressed one.
    shutil.copy(made["zstd"], workdir / "overflow-zstd.core")
    os.symlink(core, workdir / "plain.core.xz")
    for path in list(made.values()) + [workdir / "overflow-zstd.core", workdir / "plain.core.xz"]:
        for command, expected in zip(commands, plain):
            text, _ = dscope(a, "core", path, program, *command.split())
            if text != expected:
                problems.append("%s: `%s` differs from the plain core's:\n--- %s\n%s--- plain\n%s" % (
                    path.name, command, path.name, text[:3000], expected[:3000]))
    for tool, path in made.items():
        data = path.read_bytes()
        cut = workdir / ("cut-" + path.name)
        cut.write_bytes(data[:len(data) // 2])
        problems += one_line(dscope(a, "core", cut, program)[1], "cannot decompress %s (" % cut, "a cut %s file" % tool)
        damaged = workdir / ("damaged-" + path.name)
        damaged.write_bytes(data[:4096] + bytes(b ^ 0x5a for b in data[4096:8192]) + data[8192:])
        problems += one_line(dscope(a, "core", damaged, program)[1], "cannot decompress %s (" % damaged,
                             "a damaged %s file" % tool)
    return problems


# ---- truncated

def check_truncated(a):
    workdir = a.workdir / "truncated"
    workdir.mkdir(parents=True, exist_ok=True)
    core, program = a.cores / "truncated_infinite_redispatch.core", a.samples / "infinite_redispatch"
    commands = ["op-table myops::my_add", "dispatch-trace", "dispatch-trace --all", "dispatch-trace --json",
                "dispatch-trace --frames", "dispatch-trace --frames --json", "keyset --tls", "op-table aten::mm"]
    problems, texts = [], []
    note = "note: the core is truncated: it holds "
    for c in commands:
        text, _ = dscope(a, "core", core, program, *c.split())
        # What it lacks, on stderr ahead of the answer: once, and not part of GDB's text.
        notes = [line for line in text.splitlines() if line.startswith("note: ")]
        if len(notes) != 1 or not notes[0].startswith(note) or "is missing" not in notes[0]:
            problems.append("%s: `%s`: expected one line %r... 'is missing', got %r" % (core.name, c, note, notes))
        texts.append("".join(line for line in text.splitlines(True) if not line.startswith("note: ")))
    # The record of --json says it too. A g++ program holds its own copy of the runtime's descriptor
    # (a copy relocation) in the half kept, so the summary still names the loop; a clang program
    # reaches it in the library, whose memory is in the half cut off with the library list (as
    # gdb_truncated_core expects): then the record is an error record that says so, with the note.
    _, out = dscope(a, "core", "--json", core, program)
    record = json.loads(out.stdout) if out.stdout.startswith("{") else {}
    decoded = record.get("summary", {}).get("signature", {}).get("line")
    if a.compiler == "GNU":
        expected = decoded == "infinite-redispatch myops::my_add AutogradCPU kernel=my_add_autograd"
    else:
        expected = record.get("error", "").startswith(
            "dscope: no DispatchScope runtime can be found: the core lacks the memory of the process's shared-library list")
    if not any(n.startswith(note[len("note: "):]) for n in record.get("notes", [])) or not expected:
        problems.append("%s --json (%s): no truncation note, or not the %s: %s" % (
            core.name, a.compiler, "loop's signature" if a.compiler == "GNU" else "error record", out.stdout[:2000]))
    return problems + same_as_gdb(a, workdir, commands, texts, core.name, program=program, core=core)


# ---- program

def check_program(a):
    workdir = a.workdir / "program"
    workdir.mkdir(parents=True, exist_ok=True)
    problems = []
    commands = ["dispatch-trace", "op-table aten::mm", "keyset --tls"]
    for sample, other in (("infinite_redispatch", "missing_kernel"), ("multithread", "tls_leak")):
        core = a.cores / ("crash_%s.core" % sample)
        texts = []
        for command in commands:
            text, out = dscope(a, "core", core, a.samples / other, *command.split())
            texts.append(text)
            problems += one_line(out, "the core file was not written by this executable", "%s with %s" % (core.name, other))
        problems += same_as_gdb(a, workdir, commands, texts, "%s with %s" % (core.name, other), program=a.samples / other,
                                core=core)
    # Without a program, the core names it: the same text as with it named.
    for sample in ("infinite_redispatch", "multithread", "missing_kernel", "tls_leak", "op_catalog"):
        core = a.cores / ("crash_%s.core" % sample)
        for command in ("dispatch-trace --all", "op-table aten::mm", "keyset --tls"):
            named = dscope(a, "core", core, a.samples / sample, *command.split())[0]
            unnamed = dscope(a, "core", core, *command.split())[0]
            if named != unnamed:
                problems.append("%s `%s` without the program:\n%s--- with it\n%s" % (core.name, command, unnamed, named))
    return problems


# ---- missing

def check_missing(a):
    pattern = pathlib.Path("/proc/sys/kernel/core_pattern").read_text().strip()
    if pattern.startswith("|") or "/" in pattern:
        print("SKIP: kernel.core_pattern (%s) does not write cores into the working directory" % pattern)
        return SKIP
    workdir = a.workdir / "missing"
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    program, library = workdir / "infinite_redispatch", workdir / a.runtime.name
    shutil.copy(a.samples / "infinite_redispatch", program)
    shutil.copy(a.runtime, library)
    # The copies run (LD_LIBRARY_PATH comes before the program's RUNPATH) and crash into a core.
    run(["bash", "-c", "ulimit -c unlimited; echo 0x37 > /proc/self/coredump_filter; exec ./infinite_redispatch"],
        cwd=workdir, env=dict(os.environ, LD_LIBRARY_PATH=str(workdir)))
    cores = sorted(workdir.glob("core*"), key=lambda p: p.stat().st_mtime)
    if not cores:
        return ["no core written in %s (core_pattern %s)" % (workdir, pattern)]
    core = cores[-1]
    problems = []
    text, out = dscope(a, "core", core, program, "dispatch-trace")
    if out.returncode != 0 or "... repeated" not in text:
        problems.append("the copies' core does not decode:\n" + text)
    library.rename(workdir / "away.so")
    problems += one_line(dscope(a, "core", core, program, "dispatch-trace")[1], "cannot find %s," % library,
                         "the library removed")
    shutil.copy(a.samples / "basic_dispatch", library)
    problems += one_line(dscope(a, "core", core, program, "op-table", "aten::mm")[1],
                         "%s is not the file the process of %s had mapped: its build-id is " % (library, core),
                         "another file in the library's place")
    library.unlink()
    (workdir / "away.so").rename(library)
    program.rename(workdir / "away")
    problems += one_line(dscope(a, "core", core, "dispatch-trace")[1], "cannot find %s, the program of" % program,
                         "the program removed")
    text, out = dscope(a, "core", core, workdir / "away", "dispatch-trace")
    if out.returncode != 0 or "... repeated" not in text:
        problems.append("the program named where it is now: the core does not decode:\n" + text)
    return problems


CHECKS = {"live": check_live, "compressed": check_compressed, "truncated": check_truncated, "program": check_program,
          "missing": check_missing}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--check", required=True, choices=sorted(CHECKS))
    p.add_argument("--dscope", required=True)
    p.add_argument("--gdb-script", required=True)
    p.add_argument("--samples", type=pathlib.Path, required=True, help="the directory of the sample programs")
    p.add_argument("--runtime", type=pathlib.Path, required=True, help="libdscope_runtime by its soname")
    p.add_argument("--cores", type=pathlib.Path, required=True)
    p.add_argument("--compiler", default="GNU", help="CMAKE_CXX_COMPILER_ID of the samples (truncated: what half a core holds)")
    p.add_argument("--workdir", type=pathlib.Path, required=True)
    a = p.parse_args()
    a.workdir.mkdir(parents=True, exist_ok=True)
    problems = CHECKS[a.check](a)
    if problems == SKIP:
        return SKIP
    print("dscope %s: %d problems" % (a.check, len(problems)))
    for problem in problems[:8]:
        print(problem[:4000])
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
