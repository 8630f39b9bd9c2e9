#!/usr/bin/env python3
"""An uncaught "Could not run 'OP' with arguments from the 'KEY' backend" in a libtorch program
(tests/torch/torch_missing.cpp): std::terminate aborts without unwinding and the kernel writes a
core; dispatch-summary must sign it `missing-kernel OP KEY` in GDB, lldb-16 and `dscope core`
alike, with OP and KEY as the message libstdc++ printed on the program's stderr names them (the
oracle). The "below" scenario calls under an AutoDispatchBelowADInplaceOrView guard that is still
in scope when it aborts: its changed TLS sets are no guard left unrestored.

  torch_missing_test.py --gdb-script S [--lldb-plugin P] --dscope D --program build/.../torch_missing
                        --scenario plain|below --workdir DIR
"""

import argparse
import os
import pathlib
import re
import signal
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import libtorch_core_test  # noqa: E402
import torch_oracle_test as oracle_test  # noqa: E402
import session  # noqa: E402

MESSAGE = re.compile(r"what\(\):  Could not run '([^']+)' with arguments from the '([^']+)' backend")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--gdb-script", required=True)
    p.add_argument("--lldb-plugin")
    p.add_argument("--dscope", required=True)
    p.add_argument("--program", required=True)
    p.add_argument("--scenario", choices=["plain", "below"], default="plain")
    p.add_argument("--workdir", type=pathlib.Path, required=True)
    a = p.parse_args()
    run, program, cores = libtorch_core_test.run_for_core(a.program, [a.scenario], a.workdir)
    failed = MESSAGE.search(run.stderr)
    if run.returncode != -signal.SIGABRT or not cores or not failed:
        print("FAIL: %s exited with %s (expected SIGABRT, a core and libstdc++'s what() of a Could not run):\n%s%s"
              % (program, run.returncode, run.stdout, run.stderr[:2000]))
        return 1
    core = cores[0]
    signature = "\nsignature: missing-kernel %s %s\n" % failed.groups()
    innermost = ", innermost [lookup] op=[%s], key=[%s] (no kernel registered there)" % failed.groups()
    problems = []
    try:
        debuggers = [("gdb", a.gdb_script)] + ([("lldb", a.lldb_plugin)] if a.lldb_plugin else [])
        runs = [(debugger, oracle_test.debugger_argv(debugger, plugin, program, core=core, extra=["dispatch-summary"]))
                for debugger, plugin in debuggers]
        # dscope core's default command is the summary. (The front ends' frame counts differ: GDB
        # stops its walk at main; so the lines are checked, not the summaries compared whole.)
        runs.append(("dscope", [a.dscope, "core", str(core), program]))
        for name, argv in runs:
            out = subprocess.run(argv, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
            text = out.stdout + out.stderr
            found = session.text_failures(text, expect=[signature, innermost], reject=oracle_test.REJECT + ["tls-not-restored"])
            problems += ["%s: %s" % (name, f) for f in found]
            if found:
                problems.append(text[-3000:])
    finally:
        core.unlink()
    print("%s %s: %d problems" % (os.path.basename(program), a.scenario, len(problems)))
    for problem in problems[:6]:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
