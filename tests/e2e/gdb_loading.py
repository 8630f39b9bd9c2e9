#!/usr/bin/env python3
"""GDB loading scenarios for real (tests/e2e/gdb_loading.cmake): an installed prefix loaded by
auto-load alone, a stripped runtime that keeps .debug_gdb_scripts, a gcore core, a program
without the runtime. Each check prints the debugger output; any Python traceback fails.

  gdb_loading.py install    --build B --work W                  (fixture: prefix + stripped copy)
  gdb_loading.py run        --work W [--gdb-script S] [--env K=V] [--iex C] --cmd C... --expect T... -- PROGRAM [ARGS]
  gdb_loading.py core       --work W --name N [--env K=V] -- PROGRAM [ARGS]   (kernel core -> W/N.core)
  gdb_loading.py gcore      --work W --name N --break F -- PROGRAM [ARGS]     (gcore core  -> W/N.core)"""

import argparse
import glob
import os
import resource
import shutil
import subprocess
import sys

import session

ALWAYS_REJECT = ["Traceback (most recent call last)", "Python Exception"]


def sh(command, **kw):
    print("+ " + " ".join(command))
    return subprocess.run(command, check=True, **kw)


def install(a):
    # binutils make the stripped copy; a GPU image with cuda-gdb but no binutils skips (77).
    missing = [tool for tool in ("strip", "readelf") if shutil.which(tool) is None]
    if missing:
        print("SKIP: %s not installed (binutils)" % " and ".join(missing))
        return 77
    # The resolved path: the auto-load script's directory spells the prefix as given, and GDB
    # looks for it under the library's real path (the work folder may lie behind a symlink).
    prefix = os.path.realpath(os.path.join(a.work, "prefix"))
    for old in ("prefix", "stripped"):
        shutil.rmtree(os.path.join(a.work, old), ignore_errors=True)
    sh(["cmake", "--install", a.build, "--prefix", prefix])
    libdir = os.path.join(prefix, "lib")
    runtime = sorted(glob.glob(os.path.join(libdir, "libdscope_runtime.so.*.*.*")))
    if not runtime:
        print("FAIL: no libdscope_runtime.so.X.Y.Z in %s" % libdir)
        return 1
    script = os.path.join(prefix, "share/gdb/auto-load") + runtime[0] + "-gdb.py"
    for path in (script, os.path.join(prefix, "share/dscope/gdb/dscope_gdb/__init__.py"),
                 os.path.join(prefix, "share/dscope/gdb/dscope-gdb.py")):
        if not os.path.isfile(path):
            print("FAIL: not installed: %s" % path)
            return 1
        print("installed: %s" % path)
    # A stripped copy of the runtime alone in a directory (no package beside it): DWARF gone,
    # .debug_gdb_scripts kept.
    stripped = os.path.join(a.work, "stripped")
    os.makedirs(stripped)
    name = os.path.basename(runtime[0])
    soname = name.rsplit(".", 1)[0]  # libdscope_runtime.so.X.Y
    sh(["strip", "--strip-debug", "--keep-section=.debug_gdb_scripts", runtime[0], "-o", os.path.join(stripped, name)])
    os.symlink(name, os.path.join(stripped, soname))
    sections = subprocess.run(["readelf", "-SW", os.path.join(stripped, name)], stdout=subprocess.PIPE,
                              check=True).stdout.decode()
    if ".debug_info" in sections or ".debug_gdb_scripts" not in sections:
        print("FAIL: the stripped copy must have .debug_gdb_scripts and no .debug_info")
        return 1
    return 0


def env_with(pairs):
    env = dict(os.environ)
    for pair in pairs:
        key, value = pair.split("=", 1)
        env[key] = value.replace("@WORK@", os.path.realpath(env.get("DSCOPE_LOADING_WORK", "")))
    return env


def run(a):
    command = session.gdb_batch()
    for c in a.iex:
        command += ["-iex", c.replace("@WORK@", os.path.realpath(a.work))]
    command += ["-ex", "set pagination off", "-ex", "set breakpoint pending on"]
    if a.gdb_script:
        command += ["-x", a.gdb_script]
    for c in a.cmd:
        command += ["-ex", c.replace("@WORK@", os.path.realpath(a.work))]
    program = [p.replace("@WORK@", os.path.realpath(a.work)) for p in a.program]
    if a.core_name:
        command += [program[0], os.path.join(a.work, a.core_name + ".core")]
    else:
        command += ["--args"] + program
    env = env_with(a.env)
    print("+ " + " ".join(command))
    out = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                         env=env, timeout=300).stdout.decode(errors="replace")
    print(out)
    ok = True
    work = os.path.realpath(a.work)
    for text in [t.replace("@WORK@", work) for t in a.expect]:
        if text not in out:
            print("FAIL: expected in the output: %r" % text)
            ok = False
    for text in [t.replace("@WORK@", work) for t in a.reject] + ALWAYS_REJECT:
        if text in out:
            print("FAIL: must not appear in the output: %r" % text)
            ok = False
    return 0 if ok else 1


def kernel_core(a):
    pattern = open("/proc/sys/kernel/core_pattern").read().strip()
    if pattern.startswith("|"):
        print("SKIP: kernel.core_pattern pipes cores to a program (%s)" % pattern)
        return 77
    cwd = os.path.join(a.work, a.name + ".dir")
    shutil.rmtree(cwd, ignore_errors=True)
    os.makedirs(cwd)

    def limits():
        resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        session.keep_file_pages_in_cores()

    program = [p.replace("@WORK@", os.path.realpath(a.work)) for p in a.program]
    proc = subprocess.run(program, cwd=cwd, env=env_with(a.env), preexec_fn=limits,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    print(proc.stdout.decode(errors="replace")[-3000:])
    cores = sorted(glob.glob(os.path.join(cwd, "core*")), key=os.path.getmtime)
    if proc.returncode >= 0 or not cores:
        print("FAIL: expected a crash with a core file (status %d, cores %s)" % (proc.returncode, cores))
        return 1
    os.replace(cores[-1], os.path.join(a.work, a.name + ".core"))
    return 0


def gcore(a):
    os.makedirs(a.work, exist_ok=True)
    core = os.path.join(a.work, a.name + ".core")
    if os.path.exists(core):
        os.remove(core)
    command = session.gcore_argv(a.program[0], a.program[1:], a.break_at, core)
    session.keep_file_pages_in_cores()
    print("+ " + " ".join(command))
    out = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                         timeout=300).stdout.decode(errors="replace")
    print(out)
    if not os.path.isfile(core):
        print("FAIL: gcore wrote no %s" % core)
        return 1
    return 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("action", choices=["install", "run", "core", "gcore"])
    p.add_argument("--build")
    p.add_argument("--work", required=True)
    p.add_argument("--name")
    p.add_argument("--core-name")
    p.add_argument("--break", dest="break_at")
    p.add_argument("--gdb-script")
    p.add_argument("--env", action="append", default=[])
    p.add_argument("--iex", action="append", default=[])
    p.add_argument("--cmd", action="append", default=[])
    p.add_argument("--expect", action="append", default=[])
    p.add_argument("--reject", action="append", default=[])
    argv = sys.argv[1:]
    program = argv[argv.index("--") + 1:] if "--" in argv else []
    a = p.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    a.program = program
    os.environ["DSCOPE_LOADING_WORK"] = a.work
    return {"install": install, "run": run, "core": kernel_core, "gcore": gcore}[a.action](a)


if __name__ == "__main__":
    sys.exit(main())
