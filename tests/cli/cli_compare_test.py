#!/usr/bin/env python3
"""dscope core (no debugger) against GDB and lldb-16 on the same core: every command's text must be
the same three times, and dscope's again as one session (--commands). The samples' kernel cores;
each core with its program. Bad input: one dscope: line. `dscope --help` / `-h` / `help`: that
usage on stdout, exit 0.

  cli_compare_test.py --dscope build/.../dscope --gdb-script S [--lldb-plugin P]
                      --core CORE=PROGRAM ... [--cmd COMMAND ...]
"""

import argparse
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "torch"))
import torch_oracle_test as sessions  # noqa: E402  (marker, debugger_argv, sections, REJECT; tests/e2e on sys.path)
import session  # noqa: E402

COMMANDS = ["dispatch-trace", "dispatch-trace --all", "dispatch-trace --json", "op-table aten::mm",
            "op-table aten::mm --computed", "keyset --tls", "keyset 0x12800010001", "op-table no::such_op",
            "dispatch-summary", "dispatch-summary --json", "dispatch-trace --frames"]


def debugger_answers(debugger, plugin, program, core, commands, workdir):
    lines = []
    for i, command in enumerate(commands):
        lines += [sessions.marker(debugger, "%d" % i), command]
    lines.append(sessions.marker(debugger, "end"))
    script = workdir / ("commands-%s" % debugger)
    script.write_text("\n".join(lines) + "\n")
    argv = sessions.debugger_argv(debugger, plugin, program, core=core, commands=script)
    out = subprocess.run(argv, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    found = sessions.sections(out.stdout + out.stderr)
    return [found.get("%d" % i) for i in range(len(commands))], out.stdout + out.stderr


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dscope", required=True)
    p.add_argument("--gdb-script", required=True)
    p.add_argument("--lldb-plugin")
    p.add_argument("--core", action="append", required=True, help="CORE=PROGRAM")
    p.add_argument("--cmd", action="append", help="the commands compared (default: a set of each kind)")
    p.add_argument("--workdir", type=pathlib.Path, required=True)
    a = p.parse_args()
    a.workdir.mkdir(parents=True, exist_ok=True)
    commands = a.cmd or COMMANDS
    problems = []
    for spec in a.core:
        core, program = spec.split("=", 1)
        answers = {}
        for i, command in enumerate(commands):
            out = subprocess.run([a.dscope, "core", core, program] + command.split(), capture_output=True, text=True,
                                 timeout=300, stdin=subprocess.DEVNULL)
            answers.setdefault("dscope", []).append(out.stdout + out.stderr)
            if session.text_failures(out.stdout + out.stderr, reject=sessions.REJECT):
                problems.append("dscope %s: %s" % (command, out.stdout + out.stderr))
        # With no command, dscope core prints the summary.
        default = subprocess.run([a.dscope, "core", core, program], capture_output=True, text=True, timeout=300,
                                 stdin=subprocess.DEVNULL)
        if "dispatch-summary" in commands and default.stdout + default.stderr != answers["dscope"][commands.index("dispatch-summary")]:
            problems.append("dscope core %s with no command: not the summary:\n%s" % (core, default.stdout + default.stderr))
        # The same commands as one session (--commands FILE, the core read once): the transcript holds
        # each command's line and then the very answer it gave alone; exit 1, as one of them fails.
        script = a.workdir / "commands-dscope"
        script.write_text("# every command of this test, in one session\n\n" + "\n".join(commands) + "\n")
        for source, stdin in ((str(script), None), ("-", script.read_text())):
            out = subprocess.run([a.dscope, "core", core, program, "--commands", source], capture_output=True, text=True,
                                 timeout=300, input=stdin if stdin is not None else "")
            expected = "".join("(dscope) %s\n%s" % (command, answer) for command, answer in zip(commands, answers["dscope"]))
            failing = any(text.startswith("dscope: ") for text in answers["dscope"])
            if out.stdout != expected or out.stderr or out.returncode != (1 if failing else 0):
                problems.append("dscope core %s --commands %s: exit %d, stderr %r, the transcript differs from the answers "
                                "one command a run:\n--- session\n%s--- expected\n%s" % (
                                    core, source, out.returncode, out.stderr, out.stdout[:3000], expected[:3000]))
        debuggers = [("gdb", a.gdb_script)] + ([("lldb", a.lldb_plugin)] if a.lldb_plugin else [])
        for debugger, plugin in debuggers:
            answers[debugger], whole = debugger_answers(debugger, plugin, program, core, commands, a.workdir)
            if None in answers[debugger]:
                problems.append("%s on %s: not every command answered:\n%s" % (debugger, core, whole[-2000:]))
        for i, command in enumerate(commands):
            for debugger, _ in debuggers:
                if answers[debugger][i] != answers["dscope"][i]:
                    problems.append("%s: `%s` differs between dscope and %s:\n--- dscope\n%s--- %s\n%s" % (
                        pathlib.Path(core).name, command, debugger, answers["dscope"][i], debugger, answers[debugger][i]))
    # Bad input: one "dscope:" line on stderr and a failing exit status, nothing on stdout.
    for argv, expected in ((["core", __file__], "is not a core file"), (["core", "/nonexistent.core"], "cannot open"),
                           ([], "no command; usage: dscope core [--json] [--sysroot DIR] CORE [EXE] [COMMAND ... | --commands FILE] | "
                                "dscope core [--json] [--sysroot DIR] [-j N] CORE|DIR ... | dscope pid [--json] PID [COMMAND ... | --commands FILE]"),
                           (["core", core, program, "--commands", "/nonexistent"], "cannot read the commands file /nonexistent"),
                           (["core", core, program, "--commands"], "--commands takes a file of commands"),
                           (["core", core, program, "--commands", __file__, "op-table"], "--commands FILE takes the place of COMMAND"),
                           (["core", core, core, "--commands", __file__], "--commands goes with one core"),
                           (["core", core, program, "--commands", "/dev/null"], "the commands file /dev/null holds no command"),
                           (["core", "--sysroot", "/nonexistent", core], "--sysroot takes a directory"),
                           (["core"], "no core file"), (["lookat"], "unknown command 'lookat'"),
                           # A mistyped command after a core and its program: named as a command, not opened as a core.
                           (["core", core, program, "dispatch-trce"], "unknown command 'dispatch-trce'")):
        out = subprocess.run([a.dscope] + argv, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        lines = out.stderr.splitlines()
        if out.returncode == 0 or out.stdout or len(lines) != 1 or not lines[0].startswith("dscope: ") or expected not in lines[0]:
            problems.append("dscope %s: exit %d, stdout %r, stderr %r (expected one line with %r)" % (
                " ".join(argv), out.returncode, out.stdout, out.stderr, expected))
    # Asked for help: the usage the usage errors end with, on stdout, exit 0.
    no_command = subprocess.run([a.dscope], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    usage = no_command.stderr[no_command.stderr.find("usage: "):]
    for argv in (["--help"], ["-h"], ["help"]):
        out = subprocess.run([a.dscope] + argv, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        if out.returncode != 0 or out.stdout != usage or out.stderr or not usage.startswith("usage: dscope core"):
            problems.append("dscope %s: exit %d, stdout %r, stderr %r (expected exit 0 and the usage %r)" % (
                " ".join(argv), out.returncode, out.stdout, out.stderr, usage))
    print("dscope core vs the debuggers: %d problems" % len(problems))
    for problem in problems[:6]:
        print(problem[:3000])
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
