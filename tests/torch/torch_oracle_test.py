#!/usr/bin/env python3
"""Real PyTorch, read from memory, against the process's own account of itself.

  torch_oracle_test.py --gdb-script build/gdb/dscope-gdb.py [--lldb-plugin P] [--dscope D]
                       --mode live+core|refusals|both [--root trixie|sid] --workdir DIR

Starts oracle_program.py under /usr/bin/python3 (Debian's python3-torch; with --root, inside that
Debian root as a container), which writes what torch._C says about every operator's
registrations and computed dispatch table, every operator's name, a few tensors' key sets (with
their raw words on 2.x) and its TLS sets, then waits. GDB (and lldb-16 with --lldb-plugin) then
read the same from the process, attached and then from a gcore core of it, with DispatchScope's
commands, and every answer must equal PyTorch's: `op-table OP --registered` and `--computed` line
for line for every operator (each operator live and on the core; with both debuggers, GDB reads
half of them live and lldb-16 the other half, and the other way round on the core), `keyset` of
each tensor (its Python object's address as hex(id(t)) prints it, its TensorImpl, and its raw
word) equal to torch._C._dispatch_keys, `keyset --tls` and the raw TLS words equal to the TLS
sets, `op-table OP --key K` the dump's line for K, `op-table --missing K` the operators whose dump
has no line for K, and `op-table --list` every name. dscope pid and dscope core answer all of it
too, each in one session (--commands). --mode refusals: bad profiles and bad input on a gcore core,
each one dscope: line. Exits 1 naming the first differences."""

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
from concurrent.futures import ThreadPoolExecutor

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "e2e"))
import session  # noqa: E402
from profile_text import sealed  # noqa: E402
import roots  # noqa: E402
from roots import debugger_argv  # noqa: E402,F401 (other torch tests take it from here)

# Debian's python3-torch; another python3 on PATH does not see it. DSCOPE_TORCH_PYTHON names another
# torch's Python (a pip wheel's: cuda/device_check.sh).
TORCH_PYTHON = os.environ.get("DSCOPE_TORCH_PYTHON", "/usr/bin/python3")


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
    'tls': {'included': s, 'excluded': s}, 'raw': {'tensor NAME' or 'tls included/excluded': 0x...},
    'names': [every operator's name, in the dispatcher's order]} ('raw' holds what torch could say:
    DispatchKeySet.raw_repr() is 2.x only), with what follows from them (with_table_cases)."""
    dumps, tensors, tls, raw, names, section = {"computed": {}, "registered": {}}, [], {}, {}, [], None
    for line in path.read_text().splitlines(keepends=True):
        if line.startswith("op-name "):
            names.append(line.split()[1])
        elif line.startswith("tensor "):
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
    return with_table_cases({"computed": dumps["computed"], "registered": dumps["registered"], "tensors": tensors,
                             "tls": tls, "raw": raw, "names": names})


# Runtime keys that some operators have no kernel, alias kernel or fallback for, in 1.13 and 2.x.
MISSING_KEYS = ("Meta", "SparseCPU")


def table_line(table, key):
    """The line of a _dispatch_dump_table text for key, or None: no kernel there (a missing entry)."""
    return next((line for line in table.splitlines() if line.startswith(key + ": ")), None)


def with_table_cases(oracle):
    """The oracle with what `op-table --missing K` and `op-table OP --key K` must answer, from the
    dumps: 'missing' {key: operators whose _dispatch_dump_table has no line for it}, and
    'key_entries' [(op, key, the dump's line for key, or 'KEY: (missing)')] for aten::mm, the
    program's own operator and a batched kernel's (2.x): for each label ([kernel], [backend
    fallback], ...) of the operator's table its first key, and one key it has no kernel for.
    ("Undefined" names more than one entry on 2.x.)"""
    computed = oracle["computed"]
    keys = [k for k in MISSING_KEYS if any(table_line(t, k) for t in computed.values())]
    oracle["missing"] = {k: sorted(op for op, t in computed.items() if not table_line(t, k)) for k in keys}
    oracle["operators"] = len(computed)
    entries = []
    ops = [op for op in ("aten::mm", "dscope_test::scale") if op in computed]
    for op in ops + [op for op, text in computed.items() if "[batched kernel]" in text][:1]:
        labels = {}
        for line in computed[op].splitlines():
            key = line.split(": ", 1)[0]
            if key != "Undefined":
                labels.setdefault(line[line.rfind(" ["):], (key, line))
        entries += [(op, key, line) for key, line in labels.values()]
        entries += [(op, k, k + ": (missing)") for k in keys if not table_line(computed[op], k)][:1]
    oracle["key_entries"] = entries
    return oracle


def operators_half(oracle, which):
    """The oracle with every other operator (which: 0 or 1) of its dumps, the rest unchanged."""
    mine = set(list(oracle["computed"])[which::2])
    return dict(oracle, computed={op: t for op, t in oracle["computed"].items() if op in mine},
                registered={op: t for op, t in oracle["registered"].items() if op in mine})


def marker(debugger, text):
    """A command that prints "@@ text" on a line of its own, where the next answer starts."""
    return 'echo @@ %s\\n' % text if debugger == "gdb" else 'script print("@@ %s")' % text


def oracle_commands(oracle):
    """(answer name, command) for everything the oracle printed."""
    commands = [("computed " + op, "op-table %s --computed" % op) for op in oracle["computed"]]
    commands += [("registered " + op, "op-table %s --registered" % op) for op in oracle["registered"]]
    for name, ident, impl, _keys in oracle["tensors"]:
        commands += [("tensor-id " + name, "keyset " + ident), ("tensor-impl " + name, "keyset " + impl)]
    commands += [("raw " + name, "keyset " + word) for name, word in oracle["raw"].items()]
    commands += [("key %s %s" % (op, key), "op-table %s --key %s" % (op, key)) for op, key, _ in oracle["key_entries"]]
    commands += [("missing " + key, "op-table --missing " + key) for key in oracle["missing"]]
    commands += [("list", "op-table --list")] if oracle["names"] else []
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
    """The block of `keyset --tls` output about thread tid (from its "thread tid N:" line, "thread tid
    N (tid M in its pid namespace):" in a container), or None."""
    blocks = re.split(r"^(?=thread tid \d+(?: \(tid \d+ in its pid namespace\))?:$)", tls, flags=re.M)
    return next((b for b in blocks if b and re.match(r"thread tid %d( \(tid \d+ in its pid namespace\))?:\n" % tid, b)), None)


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
    problems += compare_table_cases(oracle, answers)
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


def compare_table_cases(oracle, answers):
    """The differences in `keyset RAW` (the raw words torch printed, decoded as its own sets),
    `op-table OP --key K`, `--missing K` and `--list` (every name, in any order)."""
    problems = []
    expected = dict([("tensor " + t[0], t[3]) for t in oracle["tensors"]] +
                    [("tls " + which, keys) for which, keys in oracle["tls"].items()])
    for name, word in oracle["raw"].items():
        got = (answers.get("raw " + name) or "").splitlines() + ["", ""]
        if got[:2] != [expected[name], "raw: " + word]:
            problems.append("keyset %s (the raw word of %s): %r, torch says %r" % (word, name, got[:2], expected[name]))
    for op, key, entry in oracle["key_entries"]:
        got = (answers.get("key %s %s" % (op, key)) or "").splitlines() + ["", ""]
        if not got[0].startswith("%s at %s (dispatch-table slot " % (op, key)) or got[1] != "  entry:  " + entry:
            problems.append("op-table %s --key %s: %r, _dispatch_dump_table says %r" % (op, key, got[:2], entry))
    for key, ops in oracle["missing"].items():
        got = (answers.get("missing " + key) or "").splitlines() or [""]
        last = "%d of %d operators have no kernel for %s (no kernel, alias kernel or fallback: a dispatch there fails)" % (
            len(ops), oracle["operators"], key)
        if got[-1] != last or sorted(got[:-1]) != ops:
            problems.append("op-table --missing %s: %d names then %r; _dispatch_dump_table has no %s line for %d of %d "
                            "(first differences: %s)" % (key, len(got) - 1, got[-1], key, len(ops), oracle["operators"],
                                                         sorted(set(got[:-1]) ^ set(ops))[:5]))
    if oracle["names"]:
        got = (answers.get("list") or "").splitlines() or [""]
        names = oracle["names"]
        if got[-1] != "%d operators registered" % len(names) or sorted(got[:-1]) != sorted(names):
            problems.append("op-table --list: %d names then %r; torch lists %d (first differences: %s)"
                            % (len(got) - 1, got[-1], len(names), sorted(set(got[:-1]) ^ set(names))[:5]))
    return problems


def check_dscope(dscope, target, oracle, workdir, main_tid=None):
    """dscope (no debugger: `dscope pid PID` or `dscope core CORE PROGRAM`) asked everything the
    debuggers are (every operator's dumps, every tensor, the TLS), in one session (--commands: the
    process or core read once): the problems. The transcript is split at its "(dscope) COMMAND"
    lines."""
    asked = oracle_commands(oracle)
    script = workdir / ("commands.dscope-" + target[0])
    script.write_text("".join(command + "\n" for _, command in asked))
    out = subprocess.run([dscope] + target + ["--commands", str(script)], capture_output=True, text=True, timeout=600,
                         stdin=subprocess.DEVNULL)
    parts = re.split(r"^\(dscope\) .*\n", out.stdout, flags=re.M)
    problems = ["dscope %s: %s" % (target[0], f) for f in session.text_failures(out.stdout + out.stderr, reject=REJECT)]
    if len(parts) != len(asked) + 1 or parts[0]:
        return problems + ["dscope %s --commands: %d answers to %d commands (exit %d):\n%s" % (
            target[0], len(parts) - 1, len(asked), out.returncode, (out.stdout + out.stderr)[-3000:])]
    answers = {name: text for (name, _), text in zip(asked, parts[1:])}
    return problems + ["dscope %s: %s" % (target[0], p) for p in compare(oracle, answers, main_tid)]


def shifted_profile(workdir, profile, name, by):
    """A copy of profile (in its own directory) with entry `name` moved by `by` bytes, sealed again
    (profile_text.py): it passes the profile's own checks and must be refused as not fitting."""
    directory = workdir / ("shifted-" + name)
    directory.mkdir(exist_ok=True)
    lines = [("%s %d" % (name, int(l.split()[1]) + by)) if l.startswith(name + " ") else l
             for l in profile.read_text().splitlines()]
    (directory / profile.name).write_text(sealed("\n".join(lines) + "\n"))
    return directory


def refusal_cases(workdir, profile, tensor_impl):
    """(profile folder or None for the shipped ones, command, the text its one dscope: line holds)."""
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
    cases.append((None, "op-table no_such::op --computed", "dscope: unknown operator 'no_such::op'"))
    cases.append((None, "op-table aten::mm --computed --key Autograd", "dscope: --key shows one computed entry"))
    cases.append((None, "op-table aten::mm --key Autograd", "dscope: Autograd is an alias key"))
    cases.append((None, "keyset --tls --runtime nothing", "dscope: --runtime takes torch or dscope, not 'nothing'"))
    cases.append((None, "dispatch-break aten::mm", "dscope: cannot arm a dispatch breakpoint: the target is not writable"))
    cases.append((None, "dispatch-break --why", "dscope: no dispatch-break stop to explain"))
    cases.append((None, "dispatch-trace --json --thread 99999", "dscope: no thread 99999"))
    return cases


def refusals(debugger, plugin, core, workdir, cases):
    """Bad profiles and bad input (refusal_cases), on the core: each answer is one dscope: line.
    A session for each profile folder; the cases with the shipped profiles share one, each answer
    after its marker (one stream, so that an error line stays under its command's marker)."""
    problems = []
    for directory in dict.fromkeys(d for d, _, _ in cases):
        mine = [(command, expected) for d, command, expected in cases if d == directory]
        commands = workdir / ("refusals." + debugger)
        commands.write_text("".join("%s\n%s\n" % (marker(debugger, str(i)), c) for i, (c, _) in enumerate(mine)) +
                            marker(debugger, "end") + "\n")
        env = dict(os.environ, **({"DSCOPE_PROFILE_PATH": str(directory)} if directory else {}))
        argv = debugger_argv(debugger, plugin, os.path.realpath(TORCH_PYTHON), core=core, commands=commands)
        out = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300, env=env,
                             stdin=subprocess.DEVNULL)
        answers = sections(out.stdout)
        for i, (command, expected) in enumerate(mine):
            answer = answers.get(str(i), "")
            lines = [l for l in answer.splitlines() if l.startswith("dscope:")]
            if len(lines) != 1 or expected not in lines[0] or "end" not in answers or \
                    session.text_failures(answer, reject=REJECT):
                problems.append("%s: %s with profiles from %s: expected one line with %r, got:\n%s"
                                % (debugger, command, directory, expected, answer or out.stdout[-3000:]))
    return problems


def same_answers_on_both(dscope, pid):
    """The same question put to each runtime of one process (--runtime dscope, --runtime torch)
    gets an answer of the same shape: one command written once over one model, not two twins."""
    def ask(runtime, command):
        out = subprocess.run([dscope, "pid", "--json", str(pid), *command.split(), "--runtime", runtime],
                             capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        lines = [l for l in out.stdout.splitlines() if l.startswith("{")]
        errors = [l for l in (out.stdout + out.stderr).splitlines() if l.startswith("dscope: ")]
        try:
            return json.loads(lines[-1]) if lines else {"error": errors[-1]} if errors else {"no answer": out.stdout + out.stderr}
        except ValueError:
            return {"not JSON": lines[-1]}
    problems = []
    for command in ("op-table aten::mm", "op-table aten::mm --key CPU", "op-table aten::mm --registered",
                    "op-table aten::no_such_op", "keyset 0x8000", "op-table --missing Meta", "dispatch-summary"):
        ours, theirs = ask("dscope", command), ask("torch", command)
        if sorted(ours) != sorted(theirs):
            problems.append("%s: the fields differ between the runtimes:\n  dscope: %s\n  torch:  %s"
                            % (command, sorted(ours), sorted(theirs)))
        if "runtime" in ours and (ours["runtime"], theirs["runtime"]) != ("dscope", "pytorch"):
            problems.append("%s: runtime %r and %r, not 'dscope' and 'pytorch'" % (command, ours["runtime"], theirs["runtime"]))
        for answer in (ours, theirs):
            if command.endswith("no_such_op") and "unknown operator 'aten::no_such_op'" not in answer.get("error", ""):
                problems.append("%s: %r" % (command, answer))
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
        if a.dscope:
            problems += same_answers_on_both(a.dscope, target.pid)
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


def read_everything(a, debuggers, target, oracle, times, core=None, halves=False):
    """Every front end on the live target (core None) or on its core: the problems; their times
    are added to times. With halves (live, then core, with two debuggers), each debugger reads every
    other operator's dumps live and the rest on the core (GDB the first half live, lldb-16 the
    second), so that every operator is read live and on the core, and by each debugger, once."""
    problems = []
    sysroot = target.core_sysroot if core else target.live_sysroot

    def session_on(debugger, plugin, part):
        asked = operators_half(oracle, part) if halves else oracle
        commands = command_file(a.workdir, asked, debugger)
        argv = debugger_argv(debugger, plugin, target.program, core=core, pid=target.pid, commands=commands,
                             sysroot=sysroot)
        return check_session(debugger, argv, asked, main_tid=target.pid)

    # A core is read by every debugger at once; a live process takes one tracer at a time.
    with ThreadPoolExecutor(max_workers=len(debuggers) if core else 1) as pool:
        sessions = [(debugger, pool.submit(session_on, debugger, plugin, (i + bool(core)) % 2))
                    for i, (debugger, plugin) in enumerate(debuggers)]
    for debugger, session_result in sessions:
        found, elapsed, _answers = session_result.result()
        problems += [p.replace(debugger, "%s %s" % (debugger, "core" if core else "live"), 1) for p in found]
        times.append("%s %s %.1f s" % (debugger, "core" if core else "live", elapsed))
    if a.dscope:
        started = time.monotonic()
        on_core = ["core"] + (["--sysroot", target.core_sysroot] if target.core_sysroot else []) + [str(core), target.program]
        problems += check_dscope(a.dscope, on_core if core else ["pid", str(target.pid)], oracle, a.workdir,
                                 main_tid=target.pid)
        times.append("dscope %s %.1f s" % ("core" if core else "pid", time.monotonic() - started))
        if not core and "State:\tt" in pathlib.Path("/proc/%d/status" % target.pid).read_text():
            problems.append("dscope pid left the process stopped")
    return problems


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--gdb-script", required=True)
    p.add_argument("--lldb-plugin", help="also lldb-16 with this plugin, on the same process or core")
    p.add_argument("--mode", choices=["live+core", "refusals", "both"], required=True,
                   help="live+core: the live process, then its gcore core; refusals: bad profiles and input on "
                        "a gcore core (needs --profile); both: both runtimes in one process")
    p.add_argument("--runtime-library", help="both: DispatchScope's runtime, preloaded into the torch process")
    p.add_argument("--workdir", type=pathlib.Path, required=True)
    p.add_argument("--profile", help="refusals: the shipped profile of this torch, made foreign")
    p.add_argument("--dscope", help="also dscope pid / dscope core (no debugger) on the same process or core")
    p.add_argument("--root", help="run the program inside this Debian root of scripts/torch-roots.sh (trixie, sid)")
    p.add_argument("--roots-script", default=str(HERE.parent.parent / "scripts" / "torch-roots.sh"))
    a = p.parse_args()
    a.workdir.mkdir(parents=True, exist_ok=True)
    debuggers = [("gdb", a.gdb_script)] + ([("lldb", a.lldb_plugin)] if a.lldb_plugin else [])
    if a.mode == "both":
        return both_runtimes(a, debuggers)
    if a.mode == "refusals" and not a.profile:
        p.error("--mode refusals needs --profile")
    session.keep_file_pages_in_cores()
    target = start_oracle(a.workdir, root=(a.roots_script, a.root) if a.root else None)
    problems, times, core = [], [], None
    try:
        oracle = parse_oracle(target.oracle_path)
        halves = len(debuggers) == 2
        if a.mode == "live+core":
            problems += read_everything(a, debuggers, target, oracle, times, halves=halves)
        core = a.workdir / "python.core"
        started = time.monotonic()
        gcore(target, core)
        times.append("gcore %.1f s (%.0f MB)" % (time.monotonic() - started, core.stat().st_size / 1e6))
        target.kill()
        if a.mode == "live+core":
            problems += read_everything(a, debuggers, target, oracle, times, core, halves=halves)
        else:  # a core is read by both debuggers at once
            started = time.monotonic()
            cases = refusal_cases(a.workdir, pathlib.Path(a.profile), oracle["tensors"][0][2])
            with ThreadPoolExecutor(max_workers=len(debuggers)) as pool:
                found = [pool.submit(refusals, debugger, plugin, core, a.workdir, cases) for debugger, plugin in debuggers]
            problems += sum((f.result() for f in found), [])
            times.append("refusals %.1f s" % (time.monotonic() - started))
        if a.mode == "live+core" and not a.root:
            started = time.monotonic()
            problems += before_initializers(a.gdb_script)
            times.append("gdb before the initializers %.1f s" % (time.monotonic() - started))
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
