#!/usr/bin/env python3
"""dispatch-trace on a real-PyTorch overflow core (tests/torch/torch_loop.cpp: myops::loop's
AutogradCPU kernel calls the operator again), in GDB and lldb-16: the loop, the operator, the key,
the kernel with its `registered at`, the thread's TLS and the fix; both debuggers print the same.

  torch_loop_test.py --gdb-script S [--lldb-plugin P] --program build/.../torch_loop --workdir DIR
"""

import argparse
import os
import pathlib
import shutil
import signal
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import libtorch_core_test  # noqa: E402
import torch_oracle_test as oracle_test  # noqa: E402
import session  # noqa: E402

EXPECT = [
    "dispatch chain rebuilt from the native stack (PyTorch keeps no dispatch records): 2 000 frames walked, the innermost",
    "  TLS: included DispatchKeySet(BackendSelect, ADInplaceOrView), excluded DispatchKeySet(AutocastCPU, AutocastXPU, AutocastCUDA)",
    "  loop: a cycle of 2 stack frames, at least 999 repetitions in the innermost",
    "[kernel] op=[myops::loop], key=[AutogradCPU] loop_autograd(c10::DispatchKeySet, at::Tensor const&), registered at ",
    "torch_loop.cpp:23",
    "  diagnosis: myops::loop's AutogradCPU kernel (loop_autograd(c10::DispatchKeySet, at::Tensor const&), registered at ",
    "so the kernel re-enters itself until the stack overflows (autograd is not excluded on this thread)",
    "  fix: in that kernel, continue below autograd: op.redispatch(ks & c10::after_autograd_keyset, ...)",
]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--gdb-script", required=True)
    p.add_argument("--lldb-plugin")
    p.add_argument("--program", required=True)
    p.add_argument("--workdir", type=pathlib.Path, required=True)
    a = p.parse_args()
    shutil.rmtree(a.workdir, ignore_errors=True)
    a.workdir.mkdir(parents=True)
    session.keep_file_pages_in_cores()
    program = os.path.realpath(a.program)
    run = subprocess.run([program], cwd=a.workdir, preexec_fn=libtorch_core_test.unlimited_cores,
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
    cores = sorted(a.workdir.glob("core*"))
    if run.returncode != -signal.SIGSEGV or not cores:
        print("FAIL: %s exited with %s (expected SIGSEGV and a core):\n%s%s" % (program, run.returncode, run.stdout, run.stderr))
        return 1
    core = cores[0]
    problems, chains = [], {}
    try:
        debuggers = [("gdb", a.gdb_script)] + ([("lldb", a.lldb_plugin)] if a.lldb_plugin else [])
        for debugger, plugin in debuggers:
            argv = oracle_test.debugger_argv(debugger, plugin, program, core=core, extra=["dispatch-trace"])
            out = subprocess.run(argv, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
            text = out.stdout + out.stderr
            found = session.text_failures(text, expect=EXPECT, reject=oracle_test.REJECT)
            problems += ["%s: %s" % (debugger, f) for f in found]
            start = text.find("dispatch chain rebuilt")
            chains[debugger] = text[start:text.find("  fix:", start)] if start >= 0 else ""
            if found:
                problems.append(text[-3000:])
    finally:
        core.unlink()
    if len(set(chains.values())) > 1:
        problems.append("GDB and LLDB print different chains:\n--- gdb\n%s--- lldb\n%s" % (chains["gdb"], chains["lldb"]))
    print("%s: %d problems" % (os.path.basename(program), len(problems)))
    for problem in problems[:6]:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
