#!/usr/bin/env python3
"""dispatch-break in a PyTorch process no layout profile describes (issue 34, item 4): a Python
process that has imported torch (/usr/bin/python3, Debian's 1.13), GDB and lldb-16 attached with
DSCOPE_PROFILE_PATH naming an empty directory. torch is loaded, so the breakpoint can never arm:
`dispatch-break aten::mm` must say so in one `dscope:` line naming libtorch_cpu's build-id (read
here from the file the process maps, with readelf) and how to give a profile, keep no breakpoint,
and never answer "pending: it arms when the runtime is loaded". dscope pid names the same build-id.

  torch_break_noprofile_test.py --gdb-script S [--lldb-plugin P] --dscope D --workdir DIR
"""

import argparse
import os
import pathlib
import re
import select
import shutil
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "e2e"))
import session  # noqa: E402

PYTHON = "/usr/bin/python3"
PROGRAM = "import sys, torch\nprint('ready', flush=True)\nsys.stdin.read()\n"
READY_S = 120


def libtorch_of(pid):
    """The libtorch_cpu file the process maps and its build-id, as readelf reads it."""
    for line in pathlib.Path("/proc/%d/maps" % pid).read_text().splitlines():
        path = line.split()[-1]
        if os.path.basename(path).startswith("libtorch_cpu.so"):
            notes = subprocess.run(["readelf", "-n", path], capture_output=True, text=True, timeout=60).stdout
            found = re.search(r"Build ID: ([0-9a-f]+)", notes)
            return path, found and found.group(1)
    return None, None


def debugger_argv(debugger, plugin, pid, commands):
    if debugger == "gdb":
        argv = session.gdb_batch("-ex", "set debuginfod enabled off", "-x", plugin, "-p", str(pid))
        for c in commands:
            argv += ["-ex", c]
        return argv + ["-ex", "detach"]
    argv = ["lldb-16", "--no-lldbinit", "-b", "-O", "plugin load " + plugin, "-p", str(pid)]
    for c in commands:
        argv += ["-o", c]
    return argv + ["-o", "detach"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--gdb-script", required=True)
    p.add_argument("--lldb-plugin")
    p.add_argument("--dscope", required=True)
    p.add_argument("--workdir", type=pathlib.Path, required=True)
    a = p.parse_args()
    shutil.rmtree(a.workdir, ignore_errors=True)
    no_profiles = a.workdir / "no-profiles"
    no_profiles.mkdir(parents=True)
    env = dict(os.environ, DSCOPE_PROFILE_PATH=str(no_profiles))
    problems = []
    proc = subprocess.Popen([PYTHON, "-c", PROGRAM], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        if not select.select([proc.stdout], [], [], READY_S)[0] or proc.stdout.readline() != "ready\n":
            print("the torch program did not start within %d s" % READY_S)
            return 1
        path, build_id = libtorch_of(proc.pid)
        if not build_id:
            print("no libtorch_cpu with a build-id mapped in process %d" % proc.pid)
            return 1
        debuggers = [("gdb", a.gdb_script)] + ([("lldb", a.lldb_plugin)] if a.lldb_plugin else [])
        for debugger, plugin in debuggers:
            out = session.run(debugger_argv(debugger, plugin, proc.pid, ["dispatch-break aten::mm", "dispatch-break --list"]),
                              timeout=240, env=env)
            text = out.text
            if out.returncode is None:
                problems.append("%s: did not end (timed out or crashed):\n%s" % (debugger, text[-3000:]))
            refusals = [line for line in text.splitlines()
                        if "dscope: cannot arm a dispatch breakpoint: no layout profile for this PyTorch (" in line]
            if (len(refusals) != 1 or "build-id %s)" % build_id not in refusals[0] or "dscope-profile" not in refusals[0]
                    or str(no_profiles) not in refusals[0]):
                problems.append("%s: expected one line refusing to arm, naming build-id %s, dscope-profile and %s:\n%s" % (
                    debugger, build_id, no_profiles, text[-3000:]))
            if "pending" in text or "No dispatch breakpoints." not in text:
                problems.append("%s: a breakpoint was kept (pending, or in --list):\n%s" % (debugger, text[-3000:]))
            problems += ["%s: %s" % (debugger, f) for f in session.text_failures(text, reject=["Traceback", "Python Exception"])]
        out = subprocess.run([a.dscope, "pid", str(proc.pid), "op-table", "--list", "aten::mm"], capture_output=True,
                             text=True, timeout=240, env=env, stdin=subprocess.DEVNULL)
        if (out.returncode == 0 or out.stdout or not out.stderr.startswith("dscope: no layout profile for this PyTorch (")
                or "build-id %s)" % build_id not in out.stderr):
            problems.append("dscope pid: exit %d, stdout %r, stderr %r (expected the no-profile line with build-id %s)" % (
                out.returncode, out.stdout[:500], out.stderr, build_id))
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    print("dispatch-break without a layout profile (libtorch_cpu %s, build-id %s): %d problems" % (
        path, build_id, len(problems)))
    for problem in problems[:6]:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
