#!/usr/bin/env python3
"""Real PyTorch, read from memory, against the process's own account of itself.

  torch_oracle_test.py --gdb-script build/gdb/dscope-gdb.py --mode live|core --workdir DIR

Starts oracle_program.py under /usr/bin/python3 (Debian's python3-torch), which writes what
torch._C says about every operator's registrations and computed dispatch table, a few tensors'
key sets and its TLS sets, then waits. GDB (and lldb-16 with --lldb-plugin) then read the same
from the process (attached, or from a gcore core of it) with DispatchScope's commands, and every
answer must equal PyTorch's: `op-table OP --registered` and `--computed` line for line for every
operator, `keyset` of each tensor (its Python object's
address as hex(id(t)) prints it, and its TensorImpl) equal to torch._C._dispatch_keys, and
`keyset --tls` equal to the TLS sets. Exits 1 naming the first differences."""

import argparse
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "e2e"))
import session  # noqa: E402
from profile_text import sealed  # noqa: E402
import roots  # noqa: E402
from roots import debugger_argv  # noqa: E402,F401 (other torch tests take it from here)

TORCH_PYTHON = "/usr/bin/python3"  # another python3 on PATH does not see python3-torch


class OracleProcess:
    """oracle_program.py running, on the host or inside a root (scripts/torch-roots.sh run): the
    host pid the debuggers attach to, the program they load, and the sysroot they need (None on the
    host; for a root, /proc/PID/root while it runs and the root's folder for its cores)."""

    def __init__(self, popen, pid, oracle_path, root=None, files=None):
        self.popen, self.pid, self.oracle_path, self.root, self.files = popen, pid, oracle_path, root, files
        # /proc/PID/exe names the program as the host sees it (under the root for a root's process).
        self.program = os.readlink("/proc/%d/exe" % pid) if root else os.path.realpath(TORCH_PYTHON)
        self.live_sysroot = "/proc/%d/root" % pid if root else None
        self.core_sysroot = str(root) if root else None

    def kill(self):
        """SIGKILL: in a root the program is its pid namespace's init, which no other signal stops
        for sure; its end ends the namespace and the unshare that waits for it."""
        if self.popen.returncode is None:
            if self.pid != self.popen.pid:
                try:
                    os.kill(self.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            self.popen.kill()
            self.popen.wait()
        if self.files:
            shutil.rmtree(self.files, ignore_errors=True)


def start_oracle(workdir, preload=None, root=None):
    """oracle_program.py started and its oracle file written: an OracleProcess. With root=(script,
    suite) it runs inside that root as a container runs (own mount and pid namespaces, the root as
    /): the program and its oracle file are in ROOT/tmp/dscope-tests/, and the debuggers attach to
    its host pid, the child of the unshare the script becomes."""
    env = dict(os.environ, LD_PRELOAD=preload) if preload else None
    if root:
        script, suite = root
        root_dir = roots.root_dir(script, suite)
        files = root_dir / "tmp" / "dscope-tests" / ("%s-%d" % (workdir.name, os.getpid()))
        files.mkdir(parents=True, exist_ok=True)
        shutil.copy(HERE / "oracle_program.py", files)
        inside = "/" + str(files.relative_to(root_dir))
        argv = [script, "run", suite, TORCH_PYTHON, inside + "/oracle_program.py", inside + "/oracle.txt"]
        oracle = files / "oracle.txt"
    else:
        root_dir, files, oracle = None, None, workdir / "oracle.txt"
        argv = [TORCH_PYTHON, str(HERE / "oracle_program.py"), str(oracle)]
    popen = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    line = popen.stdout.readline()  # "ready" once the oracle file is written
    if line.strip() != "ready":
        popen.kill()
        if files:
            shutil.rmtree(files, ignore_errors=True)
        sys.exit("the oracle program did not start: " + line + popen.stdout.read())
    pid = popen.pid
    if root:
        children = roots.runner_children(popen.pid)
        if len(children) != 1:
            popen.kill()
            sys.exit("the oracle program in %s: the unshare %d has children %s, not one" % (root_dir, popen.pid, children))
        pid = children[0]
    return OracleProcess(popen, pid, oracle, root_dir, files)


def parse_oracle(path):
    """{'computed': {op: text}, 'registered': {op: text}, 'tensors': [(name, id, impl, keys)],
    'tls': {'included': s, 'excluded': s}, 'raw': {'tensor NAME' or 'tls included/excluded': 0x...}}
    ('raw' holds what torch could say: DispatchKeySet.raw_repr() is 2.x only)."""
    dumps, tensors, tls, raw, section = {"computed": {}, "registered": {}}, [], {}, {}, None
    for line in path.read_text().splitlines(keepends=True):
        if line.startswith("tensor "):
            name, ident, impl, keys = line.split(" ", 4)[1:]
            tensors.append((name, ident[3:], impl[5:], keys.strip()))
        elif line.startswith("tls "):
            _, which, keys = line.split(" ", 2)
            tls[which] = keys.strip()
        elif line.startswith("raw "):
            words = line.split()
            if words[-1].startswith("raw="):
                raw[" ".join(words[1:-1])] = words[-1][4:]
        elif line.startswith("== "):
            kind, op = line.split()[1:3]
            section = dumps[kind]
            section[op] = ""
        elif section is not None:
            section[op] += line
    return {"computed": dumps["computed"], "registered": dumps["registered"], "tensors": tensors, "tls": tls,
            "raw": raw}


def marker(debugger, text):
    """A command that prints "@@ text" on a line of its own, where the next answer starts."""
    return 'echo @@ %s\\n' % text if debugger == "gdb" else 'script print("@@ %s")' % text


def oracle_commands(oracle):
    """(answer name, command) for everything the oracle printed."""
    commands = [("computed " + op, "op-table %s --computed" % op) for op in oracle["computed"]]
    commands += [("registered " + op, "op-table %s --registered" % op) for op in oracle["registered"]]
    for name, ident, impl, _keys in oracle["tensors"]:
        commands += [("tensor-id " + name, "keyset " + ident), ("tensor-impl " + name, "keyset " + impl)]
    return commands + [("tls", "keyset --tls")]


def command_file(workdir, oracle, debugger="gdb"):
    """The debugger's commands, each answer after a marker the parser splits on."""
    lines = []
    for name, command in oracle_commands(oracle):
        lines += [marker(debugger, name), command]
    lines.append(marker(debugger, "end"))
    path = workdir / ("commands." + debugger)
    path.write_text("\n".join(lines) + "\n")
    return path


REJECT = ["Traceback (most recent call last)", "Python Exception", "PLEASE submit a bug report", "Stack dump:",
          "is not a valid command"]


def check_session(debugger, argv, oracle, main_tid=None):
    """Runs one debugger over every command; the problems, its time and its answers."""
    started = time.monotonic()
    out = subprocess.run(argv, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    elapsed = time.monotonic() - started
    text = out.stdout + out.stderr
    problems = ["%s: %s" % (debugger, f) for f in session.text_failures(text, reject=REJECT)]
    answers = sections(out.stdout)
    if "end" not in answers:
        problems.append("%s did not run every command:\n%s" % (debugger, text[-3000:]))
    problems += ["%s: %s" % (debugger, p) for p in compare(oracle, answers, main_tid)]
    return problems, elapsed, answers


def sections(output):
    found, current = {}, None
    for line in output.splitlines(keepends=True):
        if line.startswith("(lldb) "):  # lldb-16 echoes each command it runs from a file
            continue
        if line.startswith("@@ "):
            current = line[3:].strip()
            found[current] = ""
        elif current:
            found[current] += line
    return found


def thread_answer(tls, tid):
    """The block of `keyset --tls` output about thread tid (from its "thread tid N:" line), or None."""
    blocks = re.split(r"^(?=thread tid \d+:$)", tls, flags=re.M)
    return next((b for b in blocks if b.startswith("thread tid %d:\n" % tid)), None)


def compare(oracle, answers, main_tid=None):
    """The differences between the oracle and the answers. With main_tid, `keyset --tls` must show
    the oracle's sets for that thread (the one that wrote them), not merely for some thread."""
    problems = []
    for op, expected in oracle["computed"].items():
        got = answers.get("computed " + op)
        if got != expected:
            problems.append("op-table %s --computed differs from _dispatch_dump_table:\n--- torch\n%s--- dscope\n%s"
                            % (op, expected, got))
    for op, expected in oracle["registered"].items():
        got = answers.get("registered " + op)
        if got != expected:
            problems.append("op-table %s --registered differs from _dispatch_dump:\n--- torch\n%s--- dscope\n%s"
                            % (op, expected, got))
    raw = oracle.get("raw", {})
    for name, _ident, _impl, keys in oracle["tensors"]:
        for how in ("tensor-id", "tensor-impl"):
            got = (answers.get("%s %s" % (how, name)) or "\n").splitlines() + [""]
            if got[0] != keys:
                problems.append("keyset of tensor %s (%s): %r, torch says %r" % (name, how, got[0], keys))
            elif "tensor " + name in raw and got[1] != "raw: " + raw["tensor " + name]:
                problems.append("keyset of tensor %s (%s): %r, torch says raw_repr() %s"
                                % (name, how, got[1], raw["tensor " + name]))
    tls = answers.get("tls", "")
    if main_tid is not None:
        tls = thread_answer(tls, main_tid)
        if tls is None:
            return problems + ["keyset --tls: no 'thread tid %d:' (the program's thread) in:\n%s"
                               % (main_tid, answers.get("tls", ""))]
    for which in ("included", "excluded"):
        known = raw.get("tls " + which)
        expected = "  %s: %s (raw %s" % (which, oracle["tls"][which], known + ")\n" if known else "")
        if expected not in tls:
            problems.append("keyset --tls: no '%s' in:\n%s" % (expected.strip(), tls))
    return problems


def dscope_sample(oracle):
    """The operators dscope (one command a run) is asked about: the first few, and those whose
    answers take the rules that differ between versions, where the oracle has them: aten::mm, the
    program's own operator, a batched kernel (2.x), an optional and a SymBool in the schema."""
    computed, registered = list(oracle["computed"])[:4], list(oracle["registered"])[:2]
    for op in ("aten::mm", "dscope_test::scale"):
        if op in oracle["computed"]:
            computed.append(op)
            registered.append(op)
    computed += [op for op, text in oracle["computed"].items() if "[batched kernel]" in text][:1]
    for marks in ("? ", "SymBool"):
        registered += [op for op, text in oracle["registered"].items() if marks in text.split("\n")[1]][:1]
    return dict(oracle, computed={op: oracle["computed"][op] for op in computed},
                registered={op: oracle["registered"][op] for op in registered})


def check_dscope(dscope, target, oracle, main_tid=None):
    """dscope (no debugger: `dscope pid PID` or `dscope core CORE PROGRAM`) on a sample of the
    oracle's operators (dscope_sample), every tensor and the TLS, one command a run: the problems."""
    sample = dscope_sample(oracle)
    answers = {}
    for name, command in oracle_commands(sample):
        out = subprocess.run([dscope] + target + command.split(), capture_output=True, text=True, timeout=120,
                             stdin=subprocess.DEVNULL)
        answers[name] = out.stdout + out.stderr
    return ["dscope %s: %s" % (target[0], p) for p in compare(sample, answers, main_tid)]


def shifted_profile(workdir, profile, name, by):
    """A copy of profile (in its own directory) with entry `name` moved by `by` bytes, sealed again
    (profile_text.py): it passes the profile's own checks and must be refused as not fitting."""
    directory = workdir / ("shifted-" + name)
    directory.mkdir(exist_ok=True)
    lines = [("%s %d" % (name, int(l.split()[1]) + by)) if l.startswith(name + " ") else l
             for l in profile.read_text().splitlines()]
    (directory / profile.name).write_text(sealed("\n".join(lines) + "\n"))
    return directory


def refusals(debugger, plugin, core, workdir, profile, tensor_impl):
    """Bad profiles and bad input, on the core: each answer is one dscope: line."""
    cases = []
    empty = workdir / "no-profiles"
    empty.mkdir(exist_ok=True)
    cases.append((empty, "op-table aten::mm --computed", "dscope: no layout profile for this PyTorch"))
    text = profile.read_text()
    build_id = profile.stem
    other = workdir / "other-build"
    other.mkdir(exist_ok=True)
    (other / profile.name).write_text(sealed(text.replace("build-id libtorch_cpu " + build_id, "build-id libtorch_cpu " + "0" * 40)))
    cases.append((other, "keyset --tls", "dscope: the layout profile %s is for libtorch_cpu build-id %s, not %s"
                  % (other / profile.name, "0" * 40, build_id)))
    cases.append((shifted_profile(workdir, profile, "Dispatcher_from_realSingleton", 64), "op-table --list",
                  "does not fit this process"))
    cases.append((shifted_profile(workdir, profile, "TensorImpl_key_set", -8), "keyset " + tensor_impl,
                  "does not fit this process: the TensorImpl at %s holds key set" % tensor_impl))
    cases.append((None, "op-table no_such::op --computed", "dscope: no operator 'no_such::op' in this process's dispatcher"))
    cases.append((None, "op-table aten::mm --computed --key Autograd", "dscope: --key shows one computed entry"))
    cases.append((None, "op-table aten::mm --key Autograd", "dscope: Autograd is an alias key"))
    cases.append((None, "keyset --tls --runtime nothing", "dscope: --runtime takes torch or dscope, not 'nothing'"))
    cases.append((None, "dispatch-break aten::mm", "dscope: cannot arm a dispatch breakpoint: the target is not writable"))
    cases.append((None, "dispatch-break --why", "dscope: no dispatch-break stop to explain"))
    cases.append((None, "dispatch-trace --json", "dscope: on PyTorch, dispatch-trace answers in text"))
    problems = []
    for directory, command, expected in cases:
        env = dict(os.environ)
        if directory:
            env["DSCOPE_PROFILE_PATH"] = str(directory)
        argv = debugger_argv(debugger, plugin, os.path.realpath(TORCH_PYTHON), core=core, extra=[command])
        out = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=env, stdin=subprocess.DEVNULL)
        lines = [l for l in (out.stdout + out.stderr).splitlines() if l.startswith("dscope:")]
        if len(lines) != 1 or expected not in lines[0] or session.text_failures(out.stdout + out.stderr, reject=REJECT):
            problems.append("%s: %s with profiles from %s: expected one line with %r, got:\n%s"
                            % (debugger, command, directory, expected, out.stdout + out.stderr))
    return problems


def both_runtimes(a, debuggers):
    """A process holding DispatchScope's runtime (preloaded) and PyTorch: the commands read ours and
    say so in one line; --runtime torch reads PyTorch's."""
    target = start_oracle(a.workdir, preload=a.runtime_library)
    problems = []
    try:
        ops = parse_oracle(target.oracle_path)["computed"]
        expected_torch = "%d of %d operators match 'aten::mm'" % (sum("aten::mm" in op for op in ops), len(ops))
        for debugger, plugin in debuggers:
            argv = debugger_argv(debugger, plugin, target.program, pid=target.pid,
                                 extra=["op-table --list aten::mm", "op-table --list aten::mm --runtime torch"])
            out = subprocess.run(argv, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
            text = out.stdout + out.stderr
            expect = ["dscope: this process holds DispatchScope's runtime and PyTorch: this is DispatchScope's "
                      "(--runtime torch reads PyTorch's)", "1 of 16 operators match 'aten::mm'", expected_torch]
            problems += ["%s: %s" % (debugger, f) for f in session.text_failures(text, expect=expect, reject=REJECT)]
            if problems:
                problems.append(text[-2000:])
    finally:
        target.kill()
    print("both runtimes: %d problems" % len(problems))
    for problem in problems[:5]:
        print(problem)
    return 1 if problems else 0


def before_initializers(gdb_script):
    """GDB stopped as libtorch_cpu loads, before its initializers built the Dispatcher: one line
    saying so (the Dispatcher's memory is zeros then), not a profile that does not fit."""
    argv = session.gdb_batch("-ex", "set debuginfod enabled off", "-x", gdb_script, "-ex", "catch load libtorch_cpu",
                             "-ex", "run", "-ex", "op-table --list aten::mm", "-ex", "kill", "--args", TORCH_PYTHON,
                             "-c", "import torch")
    out = subprocess.run(argv, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    text = out.stdout + out.stderr
    expected = "dscope: PyTorch's dispatcher is not constructed yet (libtorch_cpu is loaded, its initializers have not run"
    lines = [l for l in text.splitlines() if l.startswith("dscope:")]
    if len(lines) != 1 or not lines[0].startswith(expected):
        return ["gdb before libtorch's initializers: expected one line %r, got:\n%s" % (expected, text[-2000:])]
    return []


def gcore(target, core):
    """A gcore core of the running target (its file-backed pages too: keep_file_pages_in_cores)."""
    sysroot = ["-iex", "set sysroot " + target.live_sysroot] if target.live_sysroot else []
    subprocess.run(session.gdb_batch("-ex", "set debuginfod enabled off", *sysroot, "-p", str(target.pid), "-ex",
                                     "gcore " + str(core)), capture_output=True, timeout=300, check=True)


def read_everything(a, debuggers, target, oracle, times, core=None):
    """Every front end on the live target (core None) or on its core: the problems; their times
    are added to times."""
    problems = []
    sysroot = target.core_sysroot if core else target.live_sysroot

    def session_on(debugger, plugin):
        commands = command_file(a.workdir, oracle, debugger)
        argv = debugger_argv(debugger, plugin, target.program, core=core, pid=target.pid, commands=commands,
                             sysroot=sysroot)
        return check_session(debugger, argv, oracle, main_tid=target.pid)

    # A core is read by every debugger at once; a live process takes one tracer at a time.
    with ThreadPoolExecutor(max_workers=len(debuggers) if core else 1) as pool:
        sessions = [(debugger, pool.submit(session_on, debugger, plugin)) for debugger, plugin in debuggers]
    for debugger, session_result in sessions:
        found, elapsed, _answers = session_result.result()
        problems += [p.replace(debugger, "%s %s" % (debugger, "core" if core else "live"), 1) for p in found]
        times.append("%s %s %.1f s" % (debugger, "core" if core else "live", elapsed))
    if a.dscope:
        started = time.monotonic()
        on_core = ["core"] + (["--sysroot", target.core_sysroot] if target.core_sysroot else []) + [str(core), target.program]
        problems += check_dscope(a.dscope, on_core if core else ["pid", str(target.pid)], oracle, main_tid=target.pid)
        times.append("dscope %s %.1f s" % ("core" if core else "pid", time.monotonic() - started))
        if not core and "State:\tt" in pathlib.Path("/proc/%d/status" % target.pid).read_text():
            problems.append("dscope pid left the process stopped")
    return problems


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--gdb-script", required=True)
    p.add_argument("--lldb-plugin", help="also lldb-16 with this plugin, on the same process or core")
    p.add_argument("--mode", choices=["live", "core", "live+core", "both"], required=True,
                   help="live+core: the live process, then its gcore core; both: both runtimes in one process")
    p.add_argument("--runtime-library", help="both: DispatchScope's runtime, preloaded into the torch process")
    p.add_argument("--workdir", type=pathlib.Path, required=True)
    p.add_argument("--profile", help="the shipped profile of this torch (core mode: made foreign for the refusals)")
    p.add_argument("--dscope", help="also dscope pid / dscope core (no debugger) on the same process or core")
    p.add_argument("--root", help="run the program inside this Debian root of scripts/torch-roots.sh (trixie, sid)")
    p.add_argument("--roots-script", default=str(HERE.parent.parent / "scripts" / "torch-roots.sh"))
    a = p.parse_args()
    a.workdir.mkdir(parents=True, exist_ok=True)
    debuggers = [("gdb", a.gdb_script)] + ([("lldb", a.lldb_plugin)] if a.lldb_plugin else [])
    if a.mode == "both":
        return both_runtimes(a, debuggers)
    session.keep_file_pages_in_cores()
    target = start_oracle(a.workdir, root=(a.roots_script, a.root) if a.root else None)
    problems, times, core = [], [], None
    try:
        oracle = parse_oracle(target.oracle_path)
        if a.mode in ("live", "live+core"):
            problems += read_everything(a, debuggers, target, oracle, times)
        if a.mode in ("core", "live+core"):
            core = a.workdir / "python.core"
            started = time.monotonic()
            gcore(target, core)
            times.append("gcore %.1f s (%.0f MB)" % (time.monotonic() - started, core.stat().st_size / 1e6))
            target.kill()
            problems += read_everything(a, debuggers, target, oracle, times, core)
            if a.profile:
                for debugger, plugin in debuggers:
                    problems += refusals(debugger, plugin, core, a.workdir, pathlib.Path(a.profile),
                                         oracle["tensors"][0][2])
        if a.mode == "live" and not a.root:
            problems += before_initializers(a.gdb_script)
    finally:
        target.kill()
        if core and core.exists():
            core.unlink()
    where = "torch in the %s root (%s)" % (a.root, (target.root / ".dscope-root").read_text().strip()) if a.root else "host torch"
    print("%s: %d operators, %d tensors, TLS: %d problems; %s: %s" %
          (where, len(oracle["computed"]), len(oracle["tensors"]), len(problems), a.mode, ", ".join(times)))
    for problem in problems[:5]:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
