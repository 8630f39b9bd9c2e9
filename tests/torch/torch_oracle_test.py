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
import signal
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "e2e"))
import session  # noqa: E402
from profile_text import sealed  # noqa: E402

TORCH_PYTHON = "/usr/bin/python3"  # another python3 on PATH does not see python3-torch


def start_oracle(workdir, preload=None):
    oracle = workdir / "oracle.txt"
    env = dict(os.environ, LD_PRELOAD=preload) if preload else None
    proc = subprocess.Popen([TORCH_PYTHON, str(HERE / "oracle_program.py"), str(oracle)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=env)
    line = proc.stdout.readline()  # "ready" once the oracle file is written
    if line.strip() != "ready":
        proc.kill()
        sys.exit("the oracle program did not start: " + line + proc.stdout.read())
    return proc, oracle


def parse_oracle(path):
    """{'computed': {op: text}, 'registered': {op: text}, 'tensors': [(name, id, impl, keys)],
    'tls': {'included': s, 'excluded': s}}"""
    dumps, tensors, tls, section = {"computed": {}, "registered": {}}, [], {}, None
    for line in path.read_text().splitlines(keepends=True):
        if line.startswith("tensor "):
            name, ident, impl, keys = line.split(" ", 4)[1:]
            tensors.append((name, ident[3:], impl[5:], keys.strip()))
        elif line.startswith("tls "):
            _, which, keys = line.split(" ", 2)
            tls[which] = keys.strip()
        elif line.startswith("== "):
            kind, op = line.split()[1:3]
            section = dumps[kind]
            section[op] = ""
        elif section is not None:
            section[op] += line
    return {"computed": dumps["computed"], "registered": dumps["registered"], "tensors": tensors, "tls": tls}


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


def debugger_argv(debugger, plugin, program, core=None, pid=None, commands=None, extra=()):
    """A batch session of gdb or lldb-16 with DispatchScope loaded, on a core or attached to pid,
    running the command file and then the extra commands."""
    if debugger == "gdb":
        argv = session.gdb_batch("-ex", "set debuginfod enabled off", "-x", plugin)
        if commands:
            argv += ["-x", str(commands)]
        for c in extra:
            argv += ["-ex", c]
        return argv + ([program, str(core)] if core else ["-p", str(pid)])
    argv = ["lldb-16", "--no-lldbinit", "-b", "-O", "plugin load " + plugin]
    argv += ["-c", str(core), program] if core else ["-p", str(pid)]
    if commands:
        argv += ["-s", str(commands)]
    for c in extra:
        argv += ["-o", c]
    return argv + ([] if core else ["-o", "detach"])


REJECT = ["Traceback (most recent call last)", "Python Exception", "PLEASE submit a bug report", "Stack dump:",
          "is not a valid command"]


def check_session(debugger, argv, oracle):
    """Runs one debugger over every command; the problems, and its time."""
    started = time.monotonic()
    out = subprocess.run(argv, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    elapsed = time.monotonic() - started
    text = out.stdout + out.stderr
    problems = ["%s: %s" % (debugger, f) for f in session.text_failures(text, reject=REJECT)]
    answers = sections(out.stdout)
    if "end" not in answers:
        problems.append("%s did not run every command:\n%s" % (debugger, text[-3000:]))
    problems += ["%s: %s" % (debugger, p) for p in compare(oracle, answers)]
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


def compare(oracle, answers):
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
    for name, _ident, _impl, keys in oracle["tensors"]:
        for how in ("tensor-id", "tensor-impl"):
            got = (answers.get("%s %s" % (how, name)) or "\n").splitlines()[0]
            if got != keys:
                problems.append("keyset of tensor %s (%s): %r, torch says %r" % (name, how, got, keys))
    tls = answers.get("tls", "")
    for which in ("included", "excluded"):
        if "  %s: %s (raw " % (which, oracle["tls"][which]) not in tls:
            problems.append("keyset --tls: no '%s: %s' in:\n%s" % (which, oracle["tls"][which], tls))
    return problems


def check_dscope(dscope, target, oracle):
    """dscope (no debugger: `dscope pid PID` or `dscope core CORE PROGRAM`) on a sample of the
    oracle's operators, every tensor and the TLS, one command a run: the problems."""
    sample = dict(oracle, computed=dict(list(oracle["computed"].items())[:6]),
                  registered=dict(list(oracle["registered"].items())[:3]))
    answers = {}
    for name, command in oracle_commands(sample):
        out = subprocess.run([dscope] + target + command.split(), capture_output=True, text=True, timeout=120,
                             stdin=subprocess.DEVNULL)
        answers[name] = out.stdout + out.stderr
    return ["dscope %s: %s" % (target[0], p) for p in compare(sample, answers)]


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
    proc, oracle_path = start_oracle(a.workdir, preload=a.runtime_library)
    problems = []
    try:
        ops = parse_oracle(oracle_path)["computed"]
        expected_torch = "%d of %d operators match 'aten::mm'" % (sum("aten::mm" in op for op in ops), len(ops))
        for debugger, plugin in debuggers:
            argv = debugger_argv(debugger, plugin, os.path.realpath(TORCH_PYTHON), pid=proc.pid,
                                 extra=["op-table --list aten::mm", "op-table --list aten::mm --runtime torch"])
            out = subprocess.run(argv, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
            text = out.stdout + out.stderr
            expect = ["dscope: this process holds DispatchScope's runtime and PyTorch: this is DispatchScope's "
                      "(--runtime torch reads PyTorch's)", "1 of 16 operators match 'aten::mm'", expected_torch]
            problems += ["%s: %s" % (debugger, f) for f in session.text_failures(text, expect=expect, reject=REJECT)]
            if problems:
                problems.append(text[-2000:])
    finally:
        proc.kill()
        proc.wait()
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


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--gdb-script", required=True)
    p.add_argument("--lldb-plugin", help="also lldb-16 with this plugin, on the same process or core")
    p.add_argument("--mode", choices=["live", "core", "both"], required=True)
    p.add_argument("--runtime-library", help="both: DispatchScope's runtime, preloaded into the torch process")
    p.add_argument("--workdir", type=pathlib.Path, required=True)
    p.add_argument("--profile", help="the shipped profile of this torch (core mode: made foreign for the refusals)")
    p.add_argument("--dscope", help="also dscope pid / dscope core (no debugger) on the same process or core")
    a = p.parse_args()
    a.workdir.mkdir(parents=True, exist_ok=True)
    debuggers = [("gdb", a.gdb_script)] + ([("lldb", a.lldb_plugin)] if a.lldb_plugin else [])
    if a.mode == "both":
        return both_runtimes(a, debuggers)
    session.keep_file_pages_in_cores()
    proc, oracle_path = start_oracle(a.workdir)
    problems, times, core = [], [], None
    program = os.path.realpath(TORCH_PYTHON)
    try:
        oracle = parse_oracle(oracle_path)
        if a.mode == "core":
            core = a.workdir / "python.core"
            subprocess.run(session.gdb_batch("-ex", "set debuginfod enabled off", "-p", str(proc.pid), "-ex",
                                             "gcore " + str(core)), capture_output=True, timeout=300, check=True)
            proc.kill()
        for debugger, plugin in debuggers:
            commands = command_file(a.workdir, oracle, debugger)
            argv = debugger_argv(debugger, plugin, program, core=core, pid=proc.pid, commands=commands)
            found, elapsed, _answers = check_session(debugger, argv, oracle)
            problems += found
            times.append("%s %.1f s" % (debugger, elapsed))
            if core:
                problems += refusals(debugger, plugin, core, a.workdir, pathlib.Path(a.profile), oracle["tensors"][0][2])
        if a.dscope:
            problems += check_dscope(a.dscope, ["core", str(core), program] if core else ["pid", str(proc.pid)], oracle)
            if not core and "State:\tt" in pathlib.Path("/proc/%d/status" % proc.pid).read_text():
                problems.append("dscope pid left the process stopped")
        if not core:
            problems += before_initializers(a.gdb_script)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if core and core.exists():
            core.unlink()
    print("%d operators, %d tensors, TLS: %d problems; %s: %s" %
          (len(oracle["computed"]), len(oracle["tensors"]), len(problems), a.mode, ", ".join(times)))
    for problem in problems[:5]:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
