#!/usr/bin/env python3
"""One build's readers on another build's cores: the runtime publishes its layout (its descriptor
carries its profile), so GDB and dscope of one preset read a core of the runtime built in another
preset, and answer exactly as that preset's own readers do. Both directions: each build's sample
crashes into a kernel core, and both builds' readers read both cores.

  cross_build_test.py --this BUILD --other BUILD --workdir DIR

Exit 77 (skipped) when kernel cores are piped to a program (no core file to read)."""
import argparse
import os
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import session  # noqa: E402

PROGRAMS = {
    # sample: its arguments (to die with a core), the commands each reader is asked (one session
    # each), and what its own reader's answer holds
    "infinite_redispatch": ([], ["dispatch-trace", "op-table myops::my_add", "keyset --tls"],
                            "[call] op=[myops::my_add], key=[AutogradCPU]"),
    "tls_leak": (["--core"], ["keyset --tls", "keyset --tls --json", "op-table aten::add.Tensor --json",
                              "op-table --missing Meta", "dispatch-summary"],
                 "excluded beyond the default"),
}


def crash(program, args, workdir):
    """The sample's kernel core (it dies of a signal), in workdir."""
    workdir.mkdir(parents=True, exist_ok=True)
    for old in workdir.glob("core*"):
        old.unlink()
    subprocess.run(["bash", "-c", "ulimit -c unlimited; echo 0x37 > /proc/self/coredump_filter; exec \"$0\" \"$@\"", str(program), *args],
                   cwd=workdir, capture_output=True, timeout=300)
    cores = sorted(workdir.glob("core*"), key=lambda p: p.stat().st_mtime)
    if not cores:
        sys.exit("no core written by %s in %s (core_pattern: %s)" % (program, workdir,
                 pathlib.Path("/proc/sys/kernel/core_pattern").read_text().strip()))
    return cores[-1]


def dscope_answers(reader, program, core, commands, workdir):
    listing = workdir / "commands.txt"
    listing.write_text("\n".join(commands) + "\n")
    out = subprocess.run([str(reader / "cli" / "dscope"), "core", str(core), str(program), "--commands", str(listing)],
                         capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    return out.stdout + out.stderr


def gdb_answers(reader, program, core, commands):
    argv = session.gdb_batch("-ex", "set pagination off", "-x", str(reader / "gdb" / "dscope-gdb.py"))
    for c in commands:
        argv += ["-ex", "echo (dscope) %s\\n" % c, "-ex", c]
    argv += [str(program), str(core)]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    text = out.stdout + out.stderr
    return text[text.find("(dscope) "):]  # from the first answer: GDB's own banner names the files


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--this", type=pathlib.Path, required=True)
    p.add_argument("--other", type=pathlib.Path, required=True)
    p.add_argument("--workdir", type=pathlib.Path, required=True)
    a = p.parse_args()
    a.this, a.other, a.workdir = a.this.resolve(), a.other.resolve(), a.workdir.resolve()
    if pathlib.Path("/proc/sys/kernel/core_pattern").read_text().startswith("|"):
        print("SKIP: kernel.core_pattern pipes cores to a program")
        return 77
    problems = []
    for name, (args, commands, marker) in PROGRAMS.items():
        for built in (a.this, a.other):
            program = built / "samples" / name
            core = crash(program, args, a.workdir / built.name / name)
            answers = {}
            for reader in (a.this, a.other):
                answers[("dscope", reader.name)] = dscope_answers(reader, program, core, commands, a.workdir)
                answers[("gdb", reader.name)] = gdb_answers(reader, program, core, commands)
            for tool in ("dscope", "gdb"):
                own, foreign = answers[(tool, built.name)], answers[(tool, (a.other if built == a.this else a.this).name)]
                if marker not in own:
                    problems.append("%s on %s's %s core: its own reader answers nothing:\n%s" % (tool, built.name, name, own[-2000:]))
                if own != foreign:
                    problems.append("%s on %s's %s core: %s's reader answers otherwise than %s's own:\n--- own\n%s\n--- foreign\n%s"
                                    % (tool, built.name, name, (a.other if built == a.this else a.this).name, built.name,
                                       own[-3000:], foreign[-3000:]))
            print("%s's %s core: %d commands, read by both builds' dscope and GDB (%d and %d bytes of answers)"
                  % (built.name, name, len(commands), len(answers[("dscope", built.name)]), len(answers[("gdb", built.name)])))
    for problem in problems[:6]:
        print(problem)
    print("%d problems" % len(problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
