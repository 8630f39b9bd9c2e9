#!/usr/bin/env python3
"""keyset --tls's Python dispatch state on real PyTorch 2.x, against the process's own account.

  python_state_test.py --suite trixie|sid --gdb-script G [--lldb-plugin P] --dscope D --workdir W

python_state_program.py runs inside the suite's Debian root (scripts/torch-roots.sh run: as a
container runs it) with three threads stopped inside Python dispatch state (a user mode, a
FakeTensorMode, another user mode and the Python dispatcher inside vmap(grad(...)); inference mode;
no_grad with a user mode), and writes each thread's own view (torch's calls, nothing of
DispatchScope). Then dscope pid, GDB and lldb-16 attached from the host, and on a gcore core of the
process dscope core, GDB and lldb-16, each run `keyset --tls --thread T` and `--json` for every
thread. Each answer must name the thread's TLS sets as torch printed them, and its Python dispatch
state exactly: the modes by class name in the order _get_current_dispatch_mode_stack() lists them
(infra modes first, each marked with the slot torch._C._get_dispatch_mode finds it in), the Python
dispatcher on where the thread entered it, the functorch depth its interpreters have, grad and
inference mode as torch says; and for each cause in effect, the keys the process says its sets hold
("because: 3 TorchDispatchModes -> included Python, PythonTLSSnapshot"). The process's shipped
profile without its dispatch-mode values leaves them out in one phrase ("TorchDispatchModes not in
this build's profile") and shows the rest; one without one functorch value is refused in one line.
Exits 1 naming the first differences."""

import argparse
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "e2e"))
import session  # noqa: E402
import roots  # noqa: E402
from profile_text import sealed  # noqa: E402
from torch_oracle_test import REJECT, TORCH_PYTHON, marker, sections, thread_answer  # noqa: E402

READY_S = 120


class Program:
    """python_state_program.py in the root: its host pid, its threads' host tids by their
    namespace ids, and the oracle."""

    def __init__(self, script, suite, workdir):
        self.root = roots.root_dir(script, suite)
        self.files = self.root / "tmp" / "dscope-tests" / ("%s-%d" % (workdir.name, os.getpid()))
        shutil.rmtree(self.files, ignore_errors=True)
        self.files.mkdir(parents=True)
        shutil.copy(HERE / "python_state_program.py", self.files)
        inside = "/" + str(self.files.relative_to(self.root))
        self.popen = subprocess.Popen([str(script), "run", suite, TORCH_PYTHON, inside + "/python_state_program.py",
                                       inside + "/oracle.json"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      text=True, start_new_session=True)
        self.pid = None
        line = self.popen.stdout.readline()
        if line.strip() != "ready":
            self.kill()
            sys.exit("the program did not start in the %s root: %s%s" % (suite, line, self.popen.stdout.read()))
        children = roots.runner_children(self.popen.pid)
        if len(children) != 1:
            self.kill()
            sys.exit("the program in the %s root: the unshare %d has children %s, not one" % (suite, self.popen.pid, children))
        self.pid = children[0]
        self.program = os.readlink("/proc/%d/exe" % self.pid)
        self.views = json.loads((self.files / "oracle.json").read_text())
        # NSpid: the host's id, then the namespace's.
        by_own = {}
        for task in pathlib.Path("/proc/%d/task" % self.pid).iterdir():
            ids = next(l.split()[1:] for l in (task / "status").read_text().splitlines() if l.startswith("NSpid:"))
            by_own[int(ids[-1])] = int(ids[0])
        guarded = guarded_stacks(self.pid)
        for view in self.views:
            if view["tid"] not in by_own:
                self.kill()
                sys.exit("thread %d (in its namespace) of the program is not among its tasks %s" % (view["tid"], by_own))
            view["host_tid"] = by_own[view["tid"]]
            view["guarded_stack"] = view["host_tid"] in guarded

    def kill(self):
        """SIGKILL (the program is its pid namespace's init), which ends the unshare too."""
        if self.pid:
            try:
                os.kill(self.pid, 9)
            except ProcessLookupError:
                pass
        if self.popen.poll() is None:
            self.popen.kill()
        self.popen.wait()
        shutil.rmtree(self.files, ignore_errors=True)


def guarded_stacks(pid):
    """The host tids of pid's threads whose stack pointer (/proc/PID/task/T/syscall: they are blocked)
    lies in a mapping with guard regions (smaps VmFlags "gu": glibc 2.42+ installs them with
    MADV_GUARD_INSTALL in the stacks it allocates). GDB's gcore writes such a mapping as zeros, and
    with it the thread's struct pthread and static TLS blocks, which lie at its top: on such a core
    nothing of that thread's TLS can be read."""
    mappings, current = [], None
    for line in pathlib.Path("/proc/%d/smaps" % pid).read_text().splitlines():
        head = line.split()[0]
        if re.fullmatch(r"[0-9a-f]+-[0-9a-f]+", head):
            current = [int(x, 16) for x in head.split("-")]
        elif head == "VmFlags:" and current and "gu" in line.split()[1:]:
            mappings.append(current)
    guarded = set()
    for task in pathlib.Path("/proc/%d/task" % pid).iterdir():
        fields = (task / "syscall").read_text().split()
        sp = int(fields[-2], 16) if len(fields) >= 3 else 0
        if any(start <= sp < end for start, end in mappings):
            guarded.add(int(task.name))
    return guarded


def expected_state(view):
    """The summary line and the because lines the process's own account calls for; a scenario the
    program did not reach (a key its cause puts there missing) is the test's error."""
    modes, infra = view["modes"], list(view["infra"].items())  # infra in slot order
    if [name for _slot, name in infra] != modes[:len(infra)]:
        sys.exit("the program's mode stack %s does not start with its infra modes %s" % (modes, infra))
    named = [m + (" [infra %s]" % infra[i][0] if i < len(infra) else "") for i, m in enumerate(modes)]
    count = "%d TorchDispatchMode%s" % (len(modes), "" if len(modes) == 1 else "s")
    summary = "%s, Python dispatcher %s, functorch depth %d, grad mode %s, inference mode %s" % (
        "%s (bottom to top: %s)" % (count, ", ".join(named)) if modes else "no TorchDispatchMode",
        "on" if view["python_dispatcher"] else "off", view["functorch_depth"],
        "on" if view["grad_mode"] else "off", "on" if view["inference_mode"] else "off")
    keys = view["keys"]

    def held(names, where):
        if not all(keys[k][where] for k in names):
            sys.exit("thread %s: the process's sets do not hold %s as %s: %s" % (view["role"], names, where, keys))
        return ", ".join(names)
    because = []
    if modes:
        because.append("%s -> included %s" % (count, held(["Python", "PythonTLSSnapshot"], "included")))
    if view["python_dispatcher"]:
        because.append("Python dispatcher on -> included %s" % held(["PythonDispatcher"], "included"))
    if view["functorch_depth"]:
        because.append("functorch depth %d -> included %s" % (
            view["functorch_depth"], held(["FuncTorchDynamicLayerFrontMode", "FuncTorchDynamicLayerBackMode"], "included")))
    if view["inference_mode"]:
        if keys["ADInplaceOrView"]["included"]:
            sys.exit("thread %s: inference mode on, ADInplaceOrView still included" % view["role"])
        because.append("inference mode on -> excluded %s; took ADInplaceOrView out of the included set" % held(
            ["AutogradOther", "AutogradFunctionality", "AutogradNestedTensor"], "excluded"))
    return summary, because


def check_text(view, answer):
    block = thread_answer(answer, view["host_tid"])
    if block is None:
        return ["no 'thread tid %d ...:' block in:\n%s" % (view["host_tid"], answer)]
    problems = []
    for which in ("included", "excluded"):
        expected = "  %s: %s (raw %s)\n" % (which, view[which], view[which + "_raw"])
        if expected not in block:
            problems.append("no %r in:\n%s" % (expected.strip(), block))
    summary, because = expected_state(view)
    lines = block.splitlines()
    states = [l[len("  python state: "):] for l in lines if l.startswith("  python state: ")]
    if states != [summary]:
        problems.append("python state %r, the process says %r:\n%s" % (states, summary, block))
    got = [l[len("  because: "):] for l in lines if l.startswith("  because: ")]
    if got != because:
        problems.append("because lines %r, the process says %r:\n%s" % (got, because, block))
    return problems


def check_json(view, answer):
    try:
        state = json.loads(answer.strip().splitlines()[-1])["python_state"]
    except (ValueError, KeyError, IndexError):
        return ["no JSON object with python_state:\n" + answer]
    slots = list(view["infra"])
    expected = {
        "dispatch_modes": {"count": len(view["modes"]), "cut": False,
                           "stack": [{"name": m, "infra": slots[i] if i < len(slots) else None}
                                     for i, m in enumerate(view["modes"])]},
        "python_dispatcher": view["python_dispatcher"], "functorch_depth": view["functorch_depth"],
        "grad_mode": view["grad_mode"], "inference_mode": view["inference_mode"], "not_in_profile": [], "errors": {}}
    problems = ["%s is %s, the process says %s" % (k, json.dumps(state.get(k)), json.dumps(v))
                for k, v in expected.items() if state.get(k) != v]
    _summary, because = expected_state(view)
    causes = [c["cause"] for c in state.get("causes", [])]
    if causes != [b.split(" -> ")[0] for b in because]:
        problems.append("causes %s, expected %s" % (causes, [b.split(" -> ")[0] for b in because]))
    return problems


def check_refused(view, answer):
    """A thread whose TLS the core lacks (guarded_stacks): one dscope: line naming it, nothing else."""
    lines = [l for l in answer.splitlines() if l.strip()]
    if len(lines) != 1 or not re.match(r"(error: )?dscope: thread tid %d\b" % view["host_tid"], lines[0]):
        return ["thread %d's stack block is zeros in a gcore core (guard regions): expected one dscope: line "
                "naming it, got:\n%s" % (view["host_tid"], answer)]
    return []


def refused_or(check):
    """check, or one dscope: line naming the thread."""
    def either(view, answer):
        problems = check(view, answer)
        return problems and check_refused(view, answer) and problems
    return either


def cases(program, core=False, debugger=None):
    """(name, command, check) for every thread. On a gcore core, a thread whose stack block has guard
    regions is refused in one line; and lldb-16, which tells no thread pointers, matches threads to
    glibc's by their stack pointers, which those zeros defeat for every thread: there each thread's
    answer is its state or one dscope: line naming it."""
    out = []
    guarded = core and any(v["guarded_stack"] for v in program.views)
    for view in program.views:
        refused = core and view["guarded_stack"]
        text_check, json_check = check_text, check_json
        if guarded and debugger == "lldb":
            text_check, json_check = refused_or(check_text), refused_or(check_json)
        out.append(("text " + view["role"], "keyset --tls --thread %d" % view["host_tid"],
                    lambda answer, view=view, refused=refused: check_refused(view, answer) if refused else text_check(view, answer)))
        out.append(("json " + view["role"], "keyset --tls --thread %d --json" % view["host_tid"],
                    lambda answer, view=view, refused=refused: check_refused(view, answer) if refused else json_check(view, answer)))
    return out


def check_debugger(debugger, plugin, asked, workdir, program, sysroot, core=None, pid=None):
    lines = []
    for name, command, _check in asked:
        lines += [marker(debugger, name), command]
    commands = workdir / ("commands." + debugger)
    commands.write_text("\n".join(lines + [marker(debugger, "end")]) + "\n")
    argv = roots.debugger_argv(debugger, plugin, program, core=core, pid=pid, commands=commands, sysroot=sysroot)
    run = session.run_lldb_aware if debugger == "lldb" else session.run
    out = run(argv, timeout=300)
    out = out[0] if isinstance(out, tuple) else out
    problems = ["%s: %s" % (debugger, f) for f in session.text_failures(out.text, reject=REJECT)]
    answers = sections(out.text)
    if "end" not in answers:
        return problems + ["%s did not run every command:\n%s" % (debugger, out.text[-3000:])]
    for name, command, check in asked:
        problems += ["%s: %s: %s" % (debugger, command, p) for p in check(answers.get(name, ""))]
    return problems


def check_dscope(dscope, target, asked, workdir):
    """dscope pid/core with every command in one session (--commands), split at its "(dscope) " lines."""
    script = workdir / ("commands.dscope-" + target[0])
    script.write_text("".join(command + "\n" for _, command, _ in asked))
    out = subprocess.run([dscope] + target + ["--commands", str(script)], capture_output=True, text=True, timeout=300,
                         stdin=subprocess.DEVNULL)
    parts = re.split(r"^\(dscope\) .*\n", out.stdout, flags=re.M)
    problems = ["dscope %s: %s" % (target[0], f) for f in session.text_failures(out.stdout + out.stderr, reject=REJECT)]
    if len(parts) != len(asked) + 1 or parts[0]:
        return problems + ["dscope %s --commands: %d answers to %d commands:\n%s" % (
            target[0], len(parts) - 1, len(asked), (out.stdout + out.stderr)[-3000:])]
    for (name, command, check), answer in zip(asked, parts[1:]):
        problems += ["dscope %s: %s: %s" % (target[0], command, p) for p in check(answer)]
    return problems


# The dispatch-mode group of a 2.x profile (C10Layout.h's DSCOPE_C10_MODES_LAYOUT) and its name table.
MODE_VALUES = ["Libc10Tls_torchDispatchModeState", "sizeof_TorchDispatchModeTLS", "TorchDispatchModeTLS_stack",
               "TorchDispatchModeTLS_infra_modes", "count_infra_modes", "sizeof_SharedPtr", "sizeof_OptionalModePtr",
               "OptionalModePtr_engaged", "OptionalModePtr_payload", "SafePyObject_data"]


def profile_cases(a, program):
    """The optional groups of the process's shipped profile: without its dispatch-mode values (as a
    build without them would be), keyset --tls says the modes are not in the profile and shows the
    rest; without one value of a group (a damaged profile), one line refusing the profile."""
    libtorch = next(p for p in sorted((program.root / "usr/lib/x86_64-linux-gnu").glob("libtorch_cpu.so.*"))
                    if not p.is_symlink())
    notes = subprocess.run(["readelf", "-n", str(libtorch)], capture_output=True, text=True, timeout=60).stdout
    build_id = re.search(r"Build ID: ([0-9a-f]+)", notes).group(1)
    shipped = (HERE.parents[1] / "profiles" / (build_id + ".profile")).read_text().splitlines()
    body = [l for l in shipped if not l.startswith("digest ")]
    main = next(v for v in program.views if v["role"] == "main")
    problems = []
    modes = [l for l in body if (l.split() or [""])[0] in MODE_VALUES or l.startswith("name TorchDispatchModeKey ")]
    for name, kept in (("no-modes", [l for l in body if l not in modes]),
                       ("partial", [l for l in body if not l.startswith("FuncTorchTLS_dynamicLayerStack ")])):
        directory = a.workdir / name
        directory.mkdir()
        path = directory / (build_id + ".profile")
        path.write_text(sealed("\n".join(kept) + "\n"))
        out = subprocess.run([a.dscope, "pid", str(program.pid), "keyset", "--tls", "--thread", str(main["host_tid"])],
                             capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
                             env=dict(os.environ, DSCOPE_PROFILE_PATH=str(directory)))
        text = out.stdout + out.stderr
        if name == "no-modes":
            summary, because = expected_state(main)
            expected = "  python state: TorchDispatchModes not in this build's profile, " + summary.split("), ", 1)[1]
            if expected not in text.splitlines() or "TorchDispatchMode" in "".join(
                    l for l in text.splitlines() if l.startswith("  because: ")):
                problems.append("a profile without its dispatch-mode values: expected %r and no mode cause:\n%s" % (
                    expected, text))
        else:
            lines = [l for l in text.splitlines() if l.strip()]
            wanted = ("dscope: the layout profile %s is unusable: it has " % path, " but not FuncTorchTLS_dynamicLayerStack, "
                      "of its functorch values (a group is stated whole or not at all)")
            if len(lines) != 1 or not lines[0].startswith(wanted[0]) or wanted[1] not in lines[0]:
                problems.append("a profile with part of its functorch values: expected one line %r:\n%s" % (wanted, text))
    return ["profile groups: " + p for p in problems]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--suite", choices=["trixie", "sid"], required=True)
    p.add_argument("--gdb-script", required=True)
    p.add_argument("--lldb-plugin")
    p.add_argument("--dscope", required=True)
    p.add_argument("--workdir", type=pathlib.Path, required=True)
    p.add_argument("--roots-script", default=str(HERE.parent.parent / "scripts" / "torch-roots.sh"))
    a = p.parse_args()
    shutil.rmtree(a.workdir, ignore_errors=True)
    a.workdir.mkdir(parents=True)
    session.keep_file_pages_in_cores()
    started = time.monotonic()
    program = Program(a.roots_script, a.suite, a.workdir)
    asked = cases(program)
    debuggers = [("gdb", a.gdb_script)] + ([("lldb", a.lldb_plugin)] if a.lldb_plugin else [])
    problems, core = [], a.workdir / "python.core"
    try:
        live = "/proc/%d/root" % program.pid
        problems += check_dscope(a.dscope, ["pid", str(program.pid)], asked, a.workdir)
        problems += profile_cases(a, program)
        for debugger, plugin in debuggers:
            problems += ["live " + p for p in check_debugger(debugger, plugin, asked, a.workdir, program.program, live,
                                                             pid=program.pid)]
        subprocess.run(session.gdb_batch("-iex", "set debuginfod enabled off", "-iex", "set sysroot " + live, "-p",
                                         str(program.pid), "-ex", "gcore " + str(core)),
                       capture_output=True, timeout=300, check=True)
        program.kill()
        sysroot = str(program.root)
        problems += check_dscope(a.dscope, ["core", "--sysroot", sysroot, str(core), program.program],
                                 cases(program, core=True), a.workdir)
        for debugger, plugin in debuggers:
            problems += ["core " + p for p in check_debugger(debugger, plugin, cases(program, True, debugger), a.workdir,
                                                             program.program, sysroot, core=core)]
    finally:
        program.kill()
        if core.exists():
            core.unlink()
    unread = [v["role"] for v in program.views if v["guarded_stack"]]
    print("python state in the %s root (%s): %d threads, %d commands per front end, live and core%s: %d problems (%.1f s)" % (
        a.suite, (program.root / ".dscope-root").read_text().strip(), len(program.views), len(asked),
        " (on the core, threads %s refused: their stack blocks have guard regions, which gcore writes as zeros)" %
        ", ".join(unread) if unread else "", len(problems), time.monotonic() - started))
    for problem in problems[:8]:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
