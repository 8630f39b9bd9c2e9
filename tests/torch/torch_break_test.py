#!/usr/bin/env python3
"""dispatch-break on real PyTorch (tests/torch/break_program.py: 1 000 operators, a known number of
them aten::mm on CPU tensors that require grad), in GDB and lldb-16. Set before the program runs
(torch not loaded yet), `dispatch-break aten::mm --key CPU` must stop exactly as many times as the
program calls torch.mm, and `--key AutogradCPU` likewise; every stop names aten::mm at that key; the
explanation at a stop gives the arguments' key sets and the thread's TLS sets exactly as the
process's own torch._C printed them (at the AutogradCPU call, and under the guard the autograd
kernel holds when it redispatches to CPU); `dispatch-break --why --json` says the same; `dispatch-trace` there names the
stop's operator and key in frame 0; and both
debuggers print the same stops. An operator registered only after the breakpoint was placed
(myops::late, a Python CPU kernel: boxed, on the trampoline every Python kernel shares) stops too:
the breakpoints are placed again where a registration for a breakpoint's operator returns.

  torch_break_test.py --gdb-script S [--lldb-plugin P] --workdir DIR
"""

import argparse
import json
import pathlib
import re
import shutil
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "e2e"))
import session  # noqa: E402

PROGRAM = HERE / "break_program.py"
PYTHON = "/usr/bin/python3"
MM_CALLS = 7
LATE_CALLS = 3


def debugger_run(debugger, plugin, breakpoint, oracle_path, workdir):
    """The debugger's output: the breakpoint set before the program starts, `--why --json` at the
    first stop, then one continue per remaining stop and one past the last."""
    program = [PYTHON, str(PROGRAM), str(oracle_path), "--mm", str(MM_CALLS), "--late", str(LATE_CALLS)]
    commands = ["dispatch-break " + breakpoint]
    if debugger == "gdb":
        argv = session.gdb_batch("-ex", "set debuginfod enabled off", "-x", plugin)
        for c in commands:
            argv += ["-ex", c]
        argv += ["-ex", "run", "-ex", "dispatch-break --why --json", "-ex", "dispatch-trace"] + ["-ex", "continue"] * MM_CALLS
        argv += ["--args"] + program
    else:
        script = workdir / ("lldb-%s.commands" % breakpoint.split()[-1].replace(":", "_"))
        script.write_text("\n".join(commands + ["process launch", "dispatch-break --why --json", "dispatch-trace"] +
                                    ["continue"] * MM_CALLS) + "\n")
        argv = ["lldb-16", "--no-lldbinit", "-b", "-O", "plugin load " + plugin, "-s", str(script), "--"] + program
    out = subprocess.run(argv, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL, cwd=workdir)
    return out.stdout + out.stderr


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


def check(debugger, op, key, text, oracle):
    problems = []
    found = stops(text)
    calls = oracle["mm_calls"] if op == "aten::mm" else oracle["late_calls"]
    # The program's own count of its calls, and no stop for another operator or key.
    if ("mm calls: %d" % oracle["mm_calls"]) not in text or ("late calls: %d" % oracle["late_calls"]) not in text:
        problems.append("the program did not finish its calls")
    if len(found) != calls:
        problems.append("%d stops, expected %d" % (len(found), calls))
    tls = oracle["tls"] if key == "AutogradCPU" or op != "aten::mm" else oracle["tls_below_autograd"]
    arguments = [oracle["self"], oracle["mat2"]] if op == "aten::mm" else [oracle["late_x"]]
    for block in found:
        first = block.splitlines()[0]
        if not first.startswith("dispatch-break: %s at %s (keyset DispatchKeySet(" % (op, key)):
            problems.append("a stop for something else: " + first)
        names = ["argument self", "argument mat2"] if op == "aten::mm" else ["argument x"]
        expected = dict(zip(names, arguments))
        expected.update({"TLS included": tls["included"], "TLS excluded": tls["excluded"]})
        for label, value in expected.items():
            if field(block, label) != value:
                problems.append("%s is %r, the process says %r" % (label, field(block, label), value))
        slot = field(block, "slot") or ""
        if "(%s, the set's highest key)" % key not in slot:
            problems.append("slot line: " + slot)
    # --why --json at the first stop: the same facts as one object.
    start = text.find('{"op":"%s"' % op)
    if start < 0:
        problems.append("no --why --json object")
    else:
        why = json.loads(text[start:text.index("\n", start)])
        if (why["key"], [a["keyset"] for a in why["arguments"]], why["tls"]) != (key, arguments, tls):
            problems.append("--why --json: " + json.dumps(why))
    # dispatch-trace at the first stop: its frame 0 is the kernel the stop named, also where the
    # function is a trampoline several kernels share (myops::late's, every Python kernel's).
    if not re.search(r"^  #0 \[kernel\] op=\[%s\], key=\[%s\] " % (re.escape(op), re.escape(key)), text, re.M):
        problems.append("dispatch-trace's frame 0 is not %s at %s" % (op, key))
    if problems:
        problems.append(text[-2500:])
    return ["%s %s --key %s: %s" % (debugger, op, key, p) for p in problems], found


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--gdb-script", required=True)
    p.add_argument("--lldb-plugin")
    p.add_argument("--workdir", type=pathlib.Path, required=True)
    a = p.parse_args()
    shutil.rmtree(a.workdir, ignore_errors=True)
    a.workdir.mkdir(parents=True)
    problems, seen = [], {}
    debuggers = [("gdb", a.gdb_script)] + ([("lldb", a.lldb_plugin)] if a.lldb_plugin else [])
    for op, key in (("aten::mm", "CPU"), ("aten::mm", "AutogradCPU"), ("myops::late", "CPU")):
        for debugger, plugin in debuggers:
            oracle_path = a.workdir / ("oracle-%s-%s-%s.json" % (debugger, op.replace(":", "_"), key))
            text = debugger_run(debugger, plugin, "%s --key %s" % (op, key), oracle_path, a.workdir)
            if not oracle_path.exists():
                problems.append("%s %s --key %s: the program wrote no oracle:\n%s" % (debugger, op, key, text[-2500:]))
                continue
            found, blocks = check(debugger, op, key, text, json.loads(oracle_path.read_text()))
            problems += found
            seen[(debugger, op, key)] = blocks
        if len(debuggers) == 2 and seen.get(("gdb", op, key)) != seen.get(("lldb", op, key)):
            problems.append("%s --key %s: GDB and LLDB print different stops:\n--- gdb\n%s\n--- lldb\n%s" % (
                op, key, "\n".join(seen.get(("gdb", op, key), [])[:1]), "\n".join(seen.get(("lldb", op, key), [])[:1])))
    print("torch dispatch-break: %d problems" % len(problems))
    for problem in problems[:8]:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
