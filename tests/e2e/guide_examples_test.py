#!/usr/bin/env python3
"""The user guide's marked examples against what the tools print today, so that the guide cannot
drift from them (issue 34: it showed infinite_redispatch.cpp:35 where the tool prints :34).

An example is marked by an HTML comment (invisible on the rendered page) on the line before its
``` block:

  <!-- example: COMMAND on CORE (FRONT, ...) -->   the block is COMMAND's output on the samples'
      kernel core cores/CORE (its program: samples/NAME for crash_NAME.core), in each front end
      named (gdb, lldb-16, dscope): the block's lines must be consecutive lines of each output.
  <!-- example: shell -->   the block holds `$ COMMAND` lines, each followed by its output: each is
      run with bash in a directory where build/release is the build tree (dscope on the PATH),
      and its output (stdout and stderr) must be exactly the lines that follow it.

In the block, a line "..." stands for any lines and "..." inside a line for any text. Before the
comparison both sides are normalized: what differs between runs and builds, not between versions
of the tool: numbers (thread ids, depths, repetition counts; never a source line number after
".cpp:" or ".h:"), hex strings (addresses, build-ids) and the directories before samples/, tests/,
runtime/ and inspect/ in a path.

  guide_examples_test.py --guide docs/USER-GUIDE.md --build DIR --dscope D --gdb-script S
                         [--lldb-plugin P] --workdir DIR
"""

import argparse
import os
import pathlib
import re
import shutil
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import session  # noqa: E402

MARKER = re.compile(r"^<!-- example: (?P<spec>.+?) -->\n```[a-z]*\n(?P<block>.*?)^```$", re.M | re.S)
ON_CORE = re.compile(r"^(?P<command>.+) on (?P<core>crash_(?P<sample>\w+)\.core) \((?P<fronts>[\w, -]+)\)$")
TIMEOUT_S = 120


def normalized(line):
    line = re.sub(r"[^\s(,]*/(?=(?:samples|tests|runtime|inspect)/)", "", line)
    line = re.sub(r"\b(?:0x)?[0-9a-f]{8,}\b|\b0x[0-9a-f]+\b", "HEX", line)
    return re.sub(r"(?<!\d)(?<!\.cpp:)(?<!\.h:)\d+(?: \d{3})*(?!\d)", "N", line)


def pattern(lines):
    """A regex for the block's (normalized) lines, "..." as above; matching whole lines."""
    parts = []
    for line in lines:
        if line.strip() == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(".*?".join(re.escape(piece) for piece in normalized(line).split("...")) + r"\n")
    return "".join(parts)


def contains(output, lines):
    text = "".join(normalized(line) + "\n" for line in output.splitlines())
    return re.search(r"(?:^|(?<=\n))" + pattern(lines), text) is not None


def equals(output, lines):
    text = "".join(normalized(line) + "\n" for line in output.splitlines())
    return re.fullmatch(pattern(lines), text) is not None


def run_on_core(a, front, command, core, program):
    if front == "gdb":
        argv = session.gdb_batch("-ex", "set debuginfod enabled off", "-x", a.gdb_script, "-ex", command, program, core)
    elif front == "lldb-16":
        argv = ["lldb-16", "--no-lldbinit", "-b", "-O", "plugin load " + a.lldb_plugin, "-c", core, program, "-o", command]
    else:
        argv = [a.dscope, "core", core, program] + command.split()
    out = session.run(argv, TIMEOUT_S)
    return out.text if out.returncode is not None else None


def check_on_core(a, spec, lines):
    m = ON_CORE.match(spec)
    if not m:
        return ["a marker that says no `COMMAND on crash_NAME.core (FRONT, ...)`: %r" % spec]
    core = str(a.build / "cores" / m["core"])
    program = str(a.build / "samples" / m["sample"])
    problems = []
    for front in [f.strip() for f in m["fronts"].split(",")]:
        if front not in ("gdb", "lldb-16", "dscope"):
            problems.append("%s: no front end %r" % (spec, front))
            continue
        if front == "lldb-16" and not a.lldb_plugin:
            continue
        output = run_on_core(a, front, m["command"], core, program)
        if output is None:
            problems.append("%s in %s: did not end within %d s" % (spec, front, TIMEOUT_S))
        elif not contains(output, lines):
            problems.append("%s in %s: the guide's lines are not in the output:\n--- guide\n%s\n--- %s\n%s" % (
                spec, front, "\n".join(lines), front, output[-4000:]))
    return problems


def check_shell(a, lines):
    """Each `$ COMMAND` of the block, run, against the lines up to the next one."""
    problems, steps = [], []
    for line in lines:
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif steps:
            steps[-1][1].append(line)
        else:
            return ["a shell example that does not start with a `$ ` line: %r" % line]
    env = dict(os.environ, PATH=str(pathlib.Path(a.dscope).parent) + os.pathsep + os.environ["PATH"])
    for command, expected in steps:
        out = session.run(["bash", "-c", command], TIMEOUT_S, env=env)  # in the directory main() made
        if out.returncode is None:
            problems.append("$ %s: did not end within %d s" % (command, TIMEOUT_S))
        elif not equals(out.text, expected):
            problems.append("$ %s: the output is not the guide's:\n--- guide\n%s\n--- output\n%s" % (
                command, "\n".join(expected), out.text[-4000:]))
    return problems


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--guide", type=pathlib.Path, required=True)
    p.add_argument("--build", type=pathlib.Path, required=True)
    p.add_argument("--dscope", required=True)
    p.add_argument("--gdb-script", required=True)
    p.add_argument("--lldb-plugin")
    p.add_argument("--workdir", type=pathlib.Path, required=True)
    a = p.parse_args()
    a.build = a.build.resolve()
    guide = a.guide.read_text()
    shutil.rmtree(a.workdir, ignore_errors=True)
    (a.workdir / "build").mkdir(parents=True)
    (a.workdir / "build" / "release").symlink_to(a.build)
    os.chdir(a.workdir)
    examples = list(MARKER.finditer(guide))
    problems = [] if examples else ["no marked example in %s" % a.guide]
    for m in examples:
        lines = m["block"].splitlines()
        spec = m["spec"]
        problems += check_shell(a, lines) if spec == "shell" else check_on_core(a, spec, lines)
    print("%d marked examples of %s: %d problems" % (len(examples), a.guide.name, len(problems)))
    for problem in problems[:8]:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
