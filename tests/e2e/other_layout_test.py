#!/usr/bin/env python3
"""A runtime laid out unlike the tools': this build's dscope and GDB read the kernel core of
infinite_redispatch linked with a runtime whose Dispatcher and OperatorEntry are padded (as a
runtime built from other sources is laid out otherwise), through the layout profile its descriptor
carries, and answer as they answer on this build's own infinite_redispatch core.

  other_layout_test.py --build DIR --program PADDED --profiles OWN_HEADER PADDED_HEADER --workdir DIR

The two generated profile headers must differ in the offsets the readers use, else the test tests
nothing. Answers are compared after the values two processes differ in are masked: the program's
path, addresses, and numbers of four digits or more (thread ids; the depth the stack overflowed at,
which moves with what the stack holds). Exit 77 (skipped) when kernel cores are piped to a program."""
import argparse
import difflib
import pathlib
import re
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import cross_build_test as xb  # noqa: E402

COMMANDS = ["dispatch-trace", "dispatch-summary", "op-table myops::my_add", "op-table myops::my_add --json",
            "keyset --tls", "op-table --list myops"]
MARKER = "[call] op=[myops::my_add], key=[AutogradCPU]"


def offsets(header):
    """The OperatorEntry_* and Dispatcher_* values a generated ProfileText.h states."""
    return dict(re.findall(r'"((?:OperatorEntry|Dispatcher)_\w+) (\d+)\\n"', header.read_text()))


def masked(text, program):
    text = re.sub(r"0x[0-9a-f]{6,}", "0xADDR", text.replace(str(program), "PROGRAM"))
    return re.sub(r"\d{1,3}(?: \d{3})+|\d{4,}", "N", text)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", type=pathlib.Path, required=True)
    p.add_argument("--program", type=pathlib.Path, required=True)
    p.add_argument("--profiles", type=pathlib.Path, nargs=2, required=True)
    p.add_argument("--workdir", type=pathlib.Path, required=True)
    a = p.parse_args()
    build, padded, workdir = a.build.resolve(), a.program.resolve(), a.workdir.resolve()
    own_offsets, padded_offsets = offsets(a.profiles[0]), offsets(a.profiles[1])
    moved = sorted(n for n in own_offsets if padded_offsets.get(n) != own_offsets[n])
    if not own_offsets or not moved:
        print("the padded runtime's profile states the same offsets as this build's: nothing is tested")
        return 1
    print("the padded runtime moves %d offsets (%s, ...)" % (len(moved), ", ".join(moved[:3])))
    if pathlib.Path("/proc/sys/kernel/core_pattern").read_text().startswith("|"):
        print("SKIP: kernel.core_pattern pipes cores to a program")
        return 77
    own = build / "samples" / "infinite_redispatch"
    problems = []
    cores = {program: xb.crash(program, [], workdir / program.name) for program in (own, padded)}
    for tool in ("dscope", "gdb"):
        answers = {}
        for program, core in cores.items():
            text = (xb.dscope_answers(build, program, core, COMMANDS, workdir) if tool == "dscope"
                    else xb.gdb_answers(build, program, core, COMMANDS))
            answers[program] = masked(text, program)
        if MARKER not in answers[own]:
            problems.append("%s on this build's core answers nothing:\n%s" % (tool, answers[own][-2000:]))
        if answers[padded] != answers[own]:
            diff = difflib.unified_diff(answers[own].splitlines(), answers[padded].splitlines(), "own", "padded", lineterm="")
            problems.append("%s answers otherwise on the padded runtime's core:\n%s" % (tool, "\n".join(list(diff)[:60])))
        print("%s: %d commands on both cores (%d bytes of answers)" % (tool, len(COMMANDS), len(answers[own])))
    for problem in problems:
        print(problem)
    print("%d problems" % len(problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
