#!/usr/bin/env python3
"""keyset on what users pass it in a real PyTorch process, against the process's own account.

  keyset_input_test.py --gdb-script build/gdb/dscope-gdb.py [--lldb-plugin P] [--dscope D]
                       --mode live|core --workdir DIR

Starts keyset_program.py under /usr/bin/python3, which writes the hex(id(...)) of a list, a dict,
an nn.Module and a storage with their type names, a tensor's data_ptr(), and three tensors'
torch._C._dispatch_keys, then waits inside inference_mode. GDB, lldb-16 and dscope (attached, or
on a gcore core) run `keyset ADDR` on each and `keyset --tls`: a tensor's answer must be its
_dispatch_keys; anything else exactly one dscope: line saying what the address is (a Python
list object, ...) and no key set; and the TLS must name AutogradFunctionality among the keys
excluded beyond the default (and dispatch-summary among the keys excluded) exactly when the
process's exclude set holds it. With --profile (live
mode), a raw key set of the process's CPU tensor (its TensorImpl's word, read by the program):
GDB and lldb-16 with no process say which key table decodes it (DispatchScope's own), decode it
with --profile as the program's _dispatch_keys and name the profile; with the process attached,
--profile is refused in one line (GDB, lldb-16, dscope). Exits 1 naming the first differences."""

import argparse
import os
import pathlib
import re
import signal
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "e2e"))
import session  # noqa: E402
from torch_oracle_test import REJECT, TORCH_PYTHON, marker, sections  # noqa: E402
from roots import debugger_argv  # noqa: E402


def start_program(workdir, profile):
    oracle = workdir / "oracle.txt"
    offset = [l.split()[1] for l in profile.read_text().splitlines() if l.startswith("TensorImpl_key_set ")] if profile else []
    proc = subprocess.Popen([TORCH_PYTHON, str(HERE / "keyset_program.py"), str(oracle)] + offset, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    line = proc.stdout.readline()  # "ready" once the oracle file is written
    if line.strip() != "ready":
        proc.kill()
        sys.exit("the keyset program did not start: " + line + proc.stdout.read())
    return proc, [line.split() for line in oracle.read_text().splitlines()]


def one_line(*expected):
    """One dscope: line holding one of the expected texts, and no key set."""
    def check(answer):
        lines = [l for l in answer.splitlines() if l.startswith("dscope:") or l.startswith("error: dscope:")]
        if len(lines) != 1 or not any(e in lines[0] for e in expected) or "DispatchKeySet(" in answer:
            return "expected one dscope: line with %s, got:\n%s" % (" or ".join(map(repr, expected)), answer)
        return None
    return check


def raw_cases(oracle, profile):
    """(with no process, attached): the cases of the raw key set the program read from its tensor."""
    fields = next(f for f in oracle if f[0] == "raw")
    raw, keys = fields[2], " ".join(fields[3:])

    def own_table(answer):
        if "key table: DispatchScope's own (PyTorch 2.11's keys): no process to read" not in answer:
            return "no line saying which key table decoded it:\n" + answer
        return None

    def profile_table(answer):
        first = (answer.strip().splitlines() or [""])[0]
        if first != keys or "key table: PyTorch 1.13.0's, from the layout profile %s" % profile not in answer:
            return "expected %r (torch._C._dispatch_keys) decoded by the profile's table, got:\n%s" % (keys, answer)
        return None
    alone = [("raw", "keyset " + raw, own_table), ("raw-profile", "keyset %s --profile %s" % (raw, profile), profile_table)]
    attached = [("raw-profile", "keyset %s --profile %s" % (raw, profile), one_line("--profile decodes a key set with no process"))]
    return alone, attached


def expectations(oracle):
    """(name, command, check): check(answer) is a problem, or None."""
    cases = []
    for fields in oracle:
        kind, name = fields[0], fields[1]
        if kind in ("object", "memory"):
            address = fields[2]
            # A type's C name (tp_name) is its bare name (list) or, for a class of a Python module,
            # may hold the module (torch.storage.TypedStorage); builtins' module is not in it.
            whats = ["is a Python %s object, not a tensor" % t for t in fields[3:]] if kind == "object" else \
                ["is memory of this process holding no Python object and no C++ object with a vtable"]
            cases.append((name, "keyset " + address, one_line(*("%s %s" % (address, w) for w in whats))))
        elif kind == "tensor":
            keys = fields[3] if len(fields) == 4 else " ".join(fields[3:])

            def decoded(answer, keys=keys):
                first = (answer.strip().splitlines() or [""])[0]
                return None if first == keys else "expected %r (torch._C._dispatch_keys), got:\n%s" % (keys, answer)
            cases.append((name, "keyset " + fields[2], decoded))
        elif kind == "excluded-functionality":
            functionality, held = fields[1], fields[2] == "True"

            def tls(answer, functionality=functionality, held=held):
                beyond = [l for l in answer.splitlines() if l.startswith("  excluded beyond the default: ")]
                named = bool(beyond) and functionality in beyond[0].split(": ", 1)[1].split(", ")
                if named != held:
                    return "the exclude set %s %s, keyset --tls says:\n%s" % (
                        "holds" if held else "does not hold", functionality, answer)
                return None
            cases.append(("tls", "keyset --tls", tls))

            def summary(answer, functionality=functionality, held=held):
                added = re.search(r"excluded \+([^\s;]+)", answer)  # "TLS ..., excluded +AutogradOther,..."
                if (bool(added) and functionality in added.group(1).split(",")) != held:
                    return "the exclude set %s %s, dispatch-summary says:\n%s" % (
                        "holds" if held else "does not hold", functionality, answer)
                return None
            cases.append(("summary", "dispatch-summary", summary))
    return cases


def check_debugger(debugger, plugin, cases, workdir, core, pid):
    lines = []
    for name, command, _check in cases:
        lines += [marker(debugger, name), command]
    lines.append(marker(debugger, "end"))
    commands = workdir / ("commands." + debugger)
    commands.write_text("\n".join(lines) + "\n")
    program = os.path.realpath(TORCH_PYTHON)
    if pid is None and core is None:  # no process: the program's file only
        argv = session.gdb_batch("-ex", "set debuginfod enabled off", "-x", plugin, "-x", str(commands), program) \
            if debugger == "gdb" else ["lldb-16", "--no-lldbinit", "-b", "-O", "plugin load " + plugin, program, "-s", str(commands)]
    else:
        argv = debugger_argv(debugger, plugin, program, core=core, pid=pid, commands=commands)
    # One stream, so that each error line stays under the marker of its command.
    out = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300,
                         stdin=subprocess.DEVNULL)
    problems = ["%s: %s" % (debugger, f) for f in session.text_failures(out.stdout, reject=REJECT)]
    answers = sections(out.stdout)
    if "end" not in answers:
        return problems + ["%s did not run every command:\n%s" % (debugger, out.stdout[-3000:])]
    for name, command, check in cases:
        if problem := check(answers.get(name, "")):
            problems.append("%s: %s: %s" % (debugger, command, problem))
    return problems


def check_dscope(dscope, target, cases):
    problems = []
    for _name, command, check in cases:
        out = subprocess.run([dscope] + target + command.split(), capture_output=True, text=True, timeout=120,
                             stdin=subprocess.DEVNULL)
        if problem := check(out.stdout + out.stderr):
            problems.append("dscope %s: %s: %s" % (target[0], command, problem))
    return problems


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--gdb-script", required=True)
    p.add_argument("--lldb-plugin")
    p.add_argument("--dscope")
    p.add_argument("--mode", choices=["live", "core"], required=True)
    p.add_argument("--workdir", type=pathlib.Path, required=True)
    p.add_argument("--profile", type=pathlib.Path, help="live: also a raw key set decoded with no process and --profile")
    a = p.parse_args()
    a.workdir.mkdir(parents=True, exist_ok=True)
    session.keep_file_pages_in_cores()
    profile = a.profile if a.mode == "live" else None
    proc, oracle = start_program(a.workdir, profile)
    cases = expectations(oracle)
    alone, attached = raw_cases(oracle, profile) if profile else ([], [])
    cases += attached
    problems, core = [], None
    try:
        if a.mode == "core":
            core = a.workdir / "python.core"
            subprocess.run(session.gdb_batch("-ex", "set debuginfod enabled off", "-p", str(proc.pid), "-ex",
                                             "gcore " + str(core)), capture_output=True, timeout=300, check=True)
            proc.kill()
        debuggers = [("gdb", a.gdb_script)] + ([("lldb", a.lldb_plugin)] if a.lldb_plugin else [])
        for debugger, plugin in debuggers:
            problems += check_debugger(debugger, plugin, cases, a.workdir, core, proc.pid)
            if alone:
                problems += ["no process: " + p for p in check_debugger(debugger, plugin, alone, a.workdir, None, None)]
        if a.dscope:
            program = os.path.realpath(TORCH_PYTHON)
            problems += check_dscope(a.dscope, ["core", str(core), program] if core else ["pid", str(proc.pid)], cases)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if core and core.exists():
            core.unlink()
    print("%d keyset cases, %s: %d problems" % (len(cases) + len(alone), a.mode, len(problems)))
    for problem in problems[:8]:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
