#!/usr/bin/env python3
"""A C++ libtorch program's kernel core, read by GDB and lldb-16, against the program's own account of itself.

  libtorch_core_test.py --gdb-script build/gdb/dscope-gdb.py [--lldb-plugin PLUGIN] [--dscope DSCOPE]
                        --program build/.../libtorch_program --workdir DIR

Runs libtorch_program (tests/torch/libtorch_program.cpp, built against Debian's libtorch-dev) in
a fresh DIR with core files on (RLIMIT_CORE unlimited, coredump_filter 0x37, as
tests/e2e/expect_crash.sh). It writes the oracle file (oracle_program.py's format: what its
dispatcher says about every operator, a few tensors and its TLS sets) and aborts with an
AutogradCPU exclude guard held; the kernel writes `core`. GDB (and lldb-16 with --lldb-plugin) then read the same from that core
with DispatchScope's commands, and every answer must equal the program's (torch_oracle_test.py's
comparison); with --dscope, `dscope core CORE PROGRAM` (no debugger) too, in one session: every
operator, every tensor, the TLS, and then the two kernels' names. Exits 1 naming the first differences, 77 when the kernel pipes cores elsewhere."""

import argparse
import os
import pathlib
import resource
import shutil
import signal
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import torch_oracle_test as oracle_test  # noqa: E402  (also puts tests/e2e on sys.path)
import session  # noqa: E402


def unlimited_cores():
    resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


def run_for_core(program, args, workdir):
    """Runs program with args in a fresh workdir, cores on and the file pages the tools need kept in
    them: (its run, its program's real path, the core files it left: `core` or `core.PID`)."""
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    session.keep_file_pages_in_cores()
    program = os.path.realpath(program)
    run = subprocess.run([program] + [str(x) for x in args], cwd=workdir, preexec_fn=unlimited_cores,
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
    return run, program, sorted(workdir.glob("core*"))


def printer_commands(debugger):
    """In abortHolding's frame (a tensor and a key set as parameters, with DWARF): the value
    printers of at::Tensor and c10::DispatchKeySet, and `keyset` of the tensor expression."""
    m = lambda text: oracle_test.marker(debugger, text)  # noqa: E731
    if debugger == "gdb":
        # `frame function abortHolding` finds no such frame in a core (gdb 13): walk to it.
        return ["python frame = gdb.newest_frame()", "python exec(\"while frame.name() != 'abortHolding': frame = frame.older()\")",
                "python frame.select()", m("print-tensor"), "print tensor", m("print-keys"), "print keys",
                m("keyset-tensor"), "keyset tensor", m("kernel-names")] + KERNEL_NAMES + [m("printers-end")]
    select = ("script lldb.thread.SetSelectedFrame(next(i for i, f in enumerate(lldb.thread) "
              "if 'abortHolding' in (f.GetFunctionName() or '')))")
    return [select, m("print-tensor"), "frame variable tensor", m("print-keys"), "frame variable keys",
            m("keyset-tensor"), "keyset tensor", m("kernel-names")] + KERNEL_NAMES + [m("printers-end")]


# The kernels' names, as libtorch_program.cpp spells them: a TORCH_FN function, and a lambda with a
# capture (a runtime functor that holds the lambda, not a function pointer), named as a local type of
# the function TORCH_LIBRARY_IMPL(dscope_cpp, CPU, m) defines (g++: "::{lambda(...)#1}", clang: "::$_7").
KERNEL_NAMES = ["op-table dscope_cpp::twice --key CPU", "op-table dscope_cpp::combine --key CPU"]
EXPECTED_KERNELS = [("kernel-names", name)
                    for name in ["(anonymous namespace)::twice_cpu", "  symbol: TORCH_LIBRARY_IMPL_init_dscope_cpp_CPU_"]]


def dscope_kernel_names(dscope, core, program):
    """KERNEL_NAMES through `dscope core` (a core has no selected frame for the printers)."""
    out = [subprocess.run([dscope, "core", str(core), program] + command.split(), capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL) for command in KERNEL_NAMES]
    return {"kernel-names": "".join(o.stdout + o.stderr for o in out)}


def missing(expected, answers):
    """The (section, text) pairs whose text is not in that section's answer."""
    return ["%s: no %r in %r" % (section, text, answers.get(section)) for section, text in expected
            if text not in (answers.get(section) or "")]


def check_printers(oracle, answers):
    keys = dict((name, k) for name, _i, _impl, k in oracle["tensors"])["a"]
    expected = [("print-tensor", "Tensor keys=" + keys), ("print-keys", keys), ("keyset-tensor", keys + "\n")]
    return missing(expected + EXPECTED_KERNELS, answers)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--gdb-script", required=True)
    p.add_argument("--lldb-plugin", help="also lldb-16 with this plugin, on the same core")
    p.add_argument("--dscope", help="also dscope core (no debugger) on the same core")
    p.add_argument("--program", required=True)
    p.add_argument("--workdir", type=pathlib.Path, required=True)
    a = p.parse_args()
    pattern = pathlib.Path("/proc/sys/kernel/core_pattern").read_text().strip()
    if pattern.startswith("|"):
        print("SKIP: kernel.core_pattern pipes cores to a program (%s); no core file to read" % pattern)
        return 77
    oracle_path = a.workdir / "oracle.txt"
    started = time.monotonic()
    run, program, cores = run_for_core(a.program, [oracle_path], a.workdir)
    ran = time.monotonic() - started
    if run.returncode != -signal.SIGABRT:
        print("FAIL: libtorch_program exited with %s, expected SIGABRT:\n%s%s" % (run.returncode, run.stdout, run.stderr))
        return 1
    core = cores[0] if cores else None
    if core is None or not oracle_path.is_file():
        print("FAIL: no core (core_pattern %r) or no oracle file in %s: %s" % (pattern, a.workdir,
                                                                           sorted(x.name for x in a.workdir.iterdir())))
        return 1
    problems, times = [], []
    debuggers = [("gdb", a.gdb_script)] + ([("lldb", a.lldb_plugin)] if a.lldb_plugin else [])
    try:
        oracle = oracle_test.parse_oracle(oracle_path)
        for debugger, plugin in debuggers:
            commands = oracle_test.command_file(a.workdir, oracle, debugger)
            with commands.open("a") as f:
                f.write("\n".join(printer_commands(debugger)) + "\n")
            argv = oracle_test.debugger_argv(debugger, plugin, program, core=core, commands=commands)
            found, elapsed, answers = oracle_test.check_session(debugger, argv, oracle)
            problems += found + ["%s: %s" % (debugger, p) for p in check_printers(oracle, answers)]
            times.append("%s %.1f s" % (debugger, elapsed))
        if a.dscope:
            problems += oracle_test.check_dscope(a.dscope, ["core", str(core), program], oracle, a.workdir)
            problems += ["dscope: %s" % p for p in missing(EXPECTED_KERNELS, dscope_kernel_names(a.dscope, core, program))]
    finally:
        core_size = core.stat().st_size
        core.unlink()
    if not oracle["computed"] or not oracle["tensors"]:
        problems.append("the oracle file %s has no operators or no tensors" % oracle_path)
    print("%d operators, %d tensors, TLS: %d problems; program %.1f s, core %.0f MB; %s" %
          (len(oracle["computed"]), len(oracle["tensors"]), len(problems), ran, core_size / 1e6, ", ".join(times)))
    for problem in problems[:5]:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
