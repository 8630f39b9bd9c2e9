#!/usr/bin/env python3
"""dispatch-break on real PyTorch, in GDB and lldb-16: one run of tests/torch/break_program.py per
debugger with six breakpoints at once, each a kind of kernel the dispatcher calls differently:

  aten::mm --key CPU            an unboxed kernel (TORCH_FN), reached by a redispatch below autograd;
                                on 2.x also called boxed, from inside a TorchDispatchMode
  aten::mm --key AutogradCPU    the autograd kernel of tensors that require grad; on 2.x also
                                redispatched boxed by PythonTLSSnapshot's fallback under a mode
  aten::view --key CPU          a SymInt kernel: only sym_unboxed_kernel_func_, no unboxed function
  aten::linear --key AutogradCPU  the composite kernel, called without a bias (a `Tensor?` that is None)
  aten::mm --key Meta           (2.x) what FakeTensorMode runs on fake tensors: a Python meta kernel
  myops::late --key CPU         a Python kernel (boxed, on the trampoline every Python kernel shares),
                                registered only after the breakpoints were placed; its kernel row
                                names its Python function as the process says of it

On 2.x the program also calls aten::mm under a TorchDispatchMode of its own and under
FakeTensorMode: the stops at AutogradCPU name the mode (FakeTensorMode in its infra slot) and the
TLS keys it put there ("because"), and the stops the modes make below it (CPU from inside
__torch_dispatch__, Meta inside FakeTensorMode's kernel invocation, where torch has popped the
mode) the TLS and the empty mode stack the program printed there.

The breakpoints must stop exactly as many times as the program calls each operator (its own
counts), in the program's order, and nowhere else. At every stop the explanation gives the
arguments' key sets (None for the missing bias) and the thread's TLS sets exactly as the process's
own torch._C printed them (at the AutogradCPU call, and under the guard the autograd kernel holds
when it redispatches to CPU), and on 2.x its Python dispatch state as torch says it (none on 1.13,
whose profile does not locate it); `dispatch-break --why --json` says the same, and `dispatch-trace`'s
frame 0 is the stop's operator at its key; at a view stop it also names the SymInt kernel that
redispatched to it (aten::view at ADInplaceOrView, by its sym_unboxed function). Both debuggers
print the same stops.

On Debian 12's 1.13 (the default) the program is launched under the debugger, the breakpoints set
before torch loads (pending). With --suite trixie|sid it runs inside that PyTorch 2.x root as a
container runs it (scripts/torch-roots.sh run), and the debuggers attach to it from the host, each
given the process's root before the attach (GDB's sysroot; lldb-16 a module search path, without
which it unwinds nothing above a stop in libtorch: dispatch-trace would see only frame 0).

  torch_break_test.py --gdb-script S [--lldb-plugin P] [--suite SUITE] --workdir DIR
"""

import argparse
import json
import pathlib
import re
import shutil
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "e2e"))
sys.path.insert(0, str(HERE.parent / "python"))
import session  # noqa: E402
import roots  # noqa: E402
from python_dispatch_test import function_text  # noqa: E402
from python_state_test import check_json as check_state_json, expected_state  # noqa: E402

PROGRAM = HERE / "break_program.py"
ROOTS = HERE.parents[1] / "scripts" / "torch-roots.sh"
PYTHON = "/usr/bin/python3"
CALLS = {"mm": 2, "view": 3, "linear": 2, "late": 2}
# 2.x only: aten::mm under the program's TorchDispatchMode and under FakeTensorMode (1.13 has neither).
MODE_CALLS = {"mode": 2, "fake": 2}
# How many times each call stops (expected_stops lists them).
STOPS_PER_CALL = {"mm": 2, "view": 1, "linear": 1, "mode": 2, "fake": 2, "late": 1}
BREAKPOINTS = ["aten::mm --key CPU", "aten::mm --key AutogradCPU", "aten::view --key CPU", "aten::linear --key AutogradCPU",
               "aten::mm --key Meta", "myops::late --key CPU"]


def calls(suite):
    """The program's calls of each kind: the modes' on 2.x only."""
    return dict(CALLS, **(MODE_CALLS if suite else {}))


def program_args(oracle, suite):
    args = [str(oracle)]
    for what, n in calls(suite).items():
        args += ["--" + what, str(n)]
    return args


def stop(op, key, arguments, account, caller=None, kernel=None):
    """One expected stop: its arguments' key sets, the thread's TLS and Python dispatch state as the
    program said them (account), its Python caller and its kernel row where the stop names them."""
    return {"op": op, "key": key, "arguments": arguments, "tls": account["tls"], "state": account["python_state"],
            "caller": caller, "kernel": kernel}


def expected_stops(oracle):
    """Every stop in the program's order. Under BreakMode the autograd kernel's redispatch reaches
    the Python key, whose fallback calls BreakMode.__torch_dispatch__ with the mode popped off the
    stack; its func(*args) is a new call, to CPU, under the TLS the fallback left. Under
    FakeTensorMode the same call goes to FakeTensorMode, which runs the Meta kernel on the fake
    tensors inside its kernel invocation; no CPU kernel runs."""
    main = {"tls": oracle["tls"], "python_state": oracle["python_state"]}
    below = dict(main, tls=oracle["tls_below_autograd"])
    mm = [("self", oracle["self"]), ("mat2", oracle["mat2"])]
    x = [("x", oracle["x"])]
    out = []
    for _ in range(oracle["mm_calls"]):
        out += [stop("aten::mm", "AutogradCPU", mm, main, oracle["mm_caller"]), stop("aten::mm", "CPU", mm, below, oracle["mm_caller"])]
    out += [stop("aten::view", "CPU", [("self", oracle["x"])], below)] * oracle["view_calls"]
    out += [stop("aten::linear", "AutogradCPU", [("input", oracle["x"]), ("weight", oracle["w"]), ("bias", "None")], main)] * \
        oracle["linear_calls"]
    for _ in range(oracle["mode_calls"]):
        out += [stop("aten::mm", "AutogradCPU", mm, oracle["mode"]["outer"], oracle["mode_caller"]),
                stop("aten::mm", "CPU", mm, oracle["mode"]["inner"])]
    fake = [("self", oracle["fake"]["self"]), ("mat2", oracle["fake"]["mat2"])] if oracle["fake_calls"] else []
    for _ in range(oracle["fake_calls"]):
        out += [stop("aten::mm", "AutogradCPU", fake, oracle["fake"]["outer"], oracle["fake_caller"]),
                stop("aten::mm", "Meta", fake, oracle["fake"]["inner"])]
    return out + [stop("myops::late", "CPU", x, main, kernel=function_text(oracle["late_kernel"]))] * oracle["late_calls"]


def commands(stops, start):
    """The debugger's commands after the breakpoints: start the program (run, or continue after an
    attach), then at every stop --why --json, dispatch-trace and continue."""
    return [start] + ["dispatch-break --why --json", "dispatch-trace", "continue"] * stops


def debugger_argv(debugger, plugin, script, start, stops, launch=None, pid=None, sysroot=None, go=None):
    """A batch session of `debugger` that sets the breakpoints and runs `start` and the per-stop
    commands: on `launch` (a command line), or attached to `pid` (files under `sysroot`), then
    creating the file `go` the program waits for."""
    lines = ["dispatch-break " + b for b in BREAKPOINTS]
    if go:
        lines.append(("shell" if debugger == "gdb" else "platform shell") + " touch " + str(go))
    lines += commands(stops, start)
    if debugger == "gdb":
        argv = session.gdb_batch(*(["-iex", "set sysroot " + sysroot] if sysroot else []),
                                 "-ex", "set debuginfod enabled off", "-x", plugin)
        argv += ["-p", str(pid), "/proc/%d/exe" % pid] if pid else []  # without its executable GDB reads no symbols
        for c in lines:
            argv += ["-ex", c]
        return argv + (["--args"] + launch if launch else [])
    script.write_text("\n".join(lines) + "\n")
    argv = ["lldb-16", "--no-lldbinit", "-b", "-O", "plugin load " + plugin]
    if sysroot:
        argv += roots.lldb_attach_in_root(pid, sysroot, "/proc/%d/exe" % pid)
    elif pid:
        argv += ["-p", str(pid)]
    return argv + ["-s", str(script)] + (["--"] + launch if launch else [])


def run_host(debugger, plugin, workdir, total):
    """1.13: the program launched under the debugger, the breakpoints pending before torch loads."""
    oracle = workdir / ("oracle-%s.json" % debugger)
    argv = debugger_argv(debugger, plugin, workdir / ("lldb-%s.commands" % debugger), "run" if debugger == "gdb"
                         else "process launch", total, launch=[PYTHON, str(PROGRAM)] + program_args(oracle, None))
    out = subprocess.run(argv, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL, cwd=workdir)
    return out.stdout + out.stderr, oracle


def run_root(suite, debugger, plugin, workdir, total):
    """2.x: the program in the suite's root (its own mount and pid namespaces), the debugger
    attached from the host once the program has written its oracle."""
    root = roots.root_dir(ROOTS, suite)
    if not (root / ".dscope-root").exists():
        raise SystemExit("no %s root at %s: make it with scripts/torch-roots.sh ensure %s" % (suite, root, suite))
    # One folder for both debuggers' runs (one after the other): a Python kernel's "registered at"
    # names the program's path, which both must print alike.
    inside = pathlib.PurePath("/tmp") / ("dscope-break-%s" % suite)
    host_dir = root / inside.relative_to("/")
    shutil.rmtree(host_dir, ignore_errors=True)
    host_dir.mkdir(parents=True)
    shutil.copy(PROGRAM, host_dir / PROGRAM.name)
    oracle = host_dir / "oracle.json"
    args = program_args(inside / "oracle.json", suite) + ["--go", str(inside / "go")]
    program = subprocess.Popen([str(ROOTS), "run", suite, "/usr/bin/python3", str(inside / PROGRAM.name)] + args,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True)
    try:
        deadline = time.monotonic() + 120
        while not oracle.exists() and program.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        pid = next(iter(roots.runner_children(program.pid)), None)
        if not oracle.exists() or pid is None:
            program.kill()
            return "the program in the %s root wrote no oracle:\n%s" % (suite, program.communicate()[0][-2500:]), oracle
        argv = debugger_argv(debugger, plugin, workdir / ("lldb-%s-%s.commands" % (suite, debugger)), "continue", total,
                             pid=pid, sysroot="/proc/%d/root" % pid, go=host_dir / "go")
        out = subprocess.run(argv, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL, cwd=workdir)
        program_out = program.communicate(timeout=60)[0]
    finally:
        if program.poll() is None:
            program.kill()
            program.wait()
    return out.stdout + out.stderr + program_out, oracle


def stops(text):
    """Each stop's explanation: the 'dispatch-break: ' line and the indented lines after it."""
    blocks, current = [], None
    for line in text.splitlines():
        if line.startswith("dispatch-break: ") and " at " in line:
            current = [line]
            blocks.append(current)
        elif current is not None and line.startswith("  "):
            current.append(line)
        else:
            current = None
    return ["\n".join(b) for b in blocks]


def field(block, label):
    m = re.search(r"^  %s +(.*)$" % re.escape(label), block, re.M)
    return m.group(1) if m else None


def rows(block, label):
    """Every row of the label, in order (the "because" rows)."""
    return re.findall(r"^  %s +(.*)$" % re.escape(label), block, re.M)


def check(debugger, text, oracle, suite):
    problems = []
    found, expected = stops(text), expected_stops(oracle)
    # The program's own counts: it ran to the end.
    for what in calls(suite):
        if "%s calls: %d" % (what, oracle[what + "_calls"]) not in text:
            problems.append("the program did not finish its %s calls" % what)
    if [b.split(" (keyset")[0] for b in found] != ["dispatch-break: %s at %s" % (e["op"], e["key"]) for e in expected]:
        problems.append("stops %s, expected %s" % ([b.split(" (keyset")[0][16:] for b in found],
                                                   ["%s at %s" % (e["op"], e["key"]) for e in expected]))
    whys = [json.loads(line) for line in text.splitlines() if line.startswith('{"op":')]
    frames = re.findall(r"^  #0 (.*)$", text, re.M)
    traces = [t.split("\ndispatch-break: ")[0] for t in text.split("dispatch chain rebuilt from the native stack")[1:]]
    for i, e in enumerate(expected):
        if i >= len(found):
            break
        op, key, arguments, tls, state = e["op"], e["key"], e["arguments"], e["tls"], e["state"]
        block, where = found[i], "stop %d (%s at %s): " % (i + 1, op, key)
        labels = dict(("argument " + name, value) for name, value in arguments)
        labels.update({"TLS included": tls["included"], "TLS excluded": tls["excluded"]})
        # The Python line that made the call (the thread's innermost Python frame), where it is the
        # program's; a Python kernel's row names its function as the process says of it.
        labels.update({"python caller": e["caller"]} if e["caller"] else {})
        labels.update({"kernel": e["kernel"]} if e["kernel"] else {})
        for label, value in labels.items():
            if field(block, label) != value:
                problems.append("%s%s is %r, the process says %r" % (where, label, field(block, label), value))
        # The Python dispatch state (2.x: the profile locates it; 1.13's does not, and no row is
        # shown): the modes by class, the infra modes' slots, and the keys each cause put in the TLS.
        summary, because = expected_state(state) if state else (None, [])
        if field(block, "python state") != summary or rows(block, "because") != because:
            problems.append("%spython state %r because %s, the process says %r because %s" % (
                where, field(block, "python state"), rows(block, "because"), summary, because))
        slot = field(block, "slot") or ""
        if "(%s, the set's highest key)" % key not in slot:
            problems.append(where + "slot line: " + slot)
        # --why --json at the stop: the same facts as one object.
        why = whys[i] if i < len(whys) else {}
        if (why.get("op"), why.get("key"), [(a["name"], a["keyset"]) for a in why.get("arguments", [])], why.get("tls")) != \
                (op, key, arguments, tls) or e["kernel"] and why.get("kernel", {}).get("name") != e["kernel"]:
            problems.append(where + "--why --json: " + json.dumps(why))
        if state is None and why.get("python_state") is not None:
            problems.append(where + "--why --json's python_state %s where the profile locates none" % json.dumps(why["python_state"]))
        elif state is not None:
            problems += [where + "--why --json: " + p for p in check_state_json(state, json.dumps(why))]
        # dispatch-trace's frame 0 is the kernel the stop named, also where the function is a
        # trampoline several kernels share (myops::late's, every Python kernel's).
        if i >= len(frames) or not frames[i].startswith("[kernel] op=[%s], key=[%s] " % (op, key)):
            problems.append(where + "dispatch-trace's frame 0 is %r" % (frames[i] if i < len(frames) else None))
        # Above a view's CPU kernel, the SymInt kernels that redispatched to it (told by their
        # sym_unboxed functions): the ADInplaceOrView kernel.
        inner = "[kernel] op=[aten::view], key=[ADInplaceOrView] "
        if op == "aten::view" and (i >= len(traces) or not re.search(r"^  #[1-9]\d* " + re.escape(inner), traces[i], re.M)):
            problems.append(where + "dispatch-trace names no frame " + inner)
    if problems:
        problems.append(text[-2500:])
    return ["%s: %s" % (debugger, p) for p in problems], found


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--gdb-script", required=True)
    p.add_argument("--lldb-plugin")
    p.add_argument("--suite", help="a PyTorch 2.x root (trixie, sid); Debian 12's 1.13 on the host when absent")
    p.add_argument("--workdir", type=pathlib.Path, required=True)
    a = p.parse_args()
    shutil.rmtree(a.workdir, ignore_errors=True)
    a.workdir.mkdir(parents=True)
    problems, seen = [], {}
    debuggers = [("gdb", a.gdb_script)] + ([("lldb", a.lldb_plugin)] if a.lldb_plugin else [])
    total = sum(STOPS_PER_CALL[what] * n for what, n in calls(a.suite).items())
    for debugger, plugin in debuggers:
        text, oracle_path = (run_root(a.suite, debugger, plugin, a.workdir, total) if a.suite
                             else run_host(debugger, plugin, a.workdir, total))
        (a.workdir / ("transcript-%s.txt" % debugger)).write_text(text)
        if not oracle_path.exists():
            problems.append("%s: the program wrote no oracle:\n%s" % (debugger, text[-2500:]))
            continue
        found, seen[debugger] = check(debugger, text, json.loads(oracle_path.read_text()), a.suite)
        problems += found
    if len(seen) == 2 and seen["gdb"] != seen["lldb"]:
        diff = next((g, l) for g, l in zip(seen["gdb"] + [""] * 99, seen["lldb"] + [""] * 99) if g != l)
        problems.append("GDB and LLDB print different stops:\n--- gdb\n%s\n--- lldb\n%s" % diff)
    print("torch dispatch-break%s: %d problems" % (" (%s)" % a.suite if a.suite else "", len(problems)))
    for problem in problems[:12]:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
