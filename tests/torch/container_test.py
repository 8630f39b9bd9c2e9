#!/usr/bin/env python3
"""PyTorch in a container (issue 35, item 2): a C++ program built inside the sid root with the
root's own g++ against its libtorch-dev, run there as a container runs (scripts/torch-roots.sh run:
own mount and pid namespaces, the root as /), read from the host, whose paths hold other files or
none. The oracle is the root itself: the build-id of the libtorch_cpu file the process maps, read
with readelf from the root's copy (and of the trixie root's files, for another build).

  --check live      dscope pid, GDB and lldb-16 attached: libtorch_cpu found through
                    /proc/PID/root (with no layout profile for its build the answer is the
                    no-profile line naming that build-id; with one, a real op-table answer); a
                    libc10 deleted while the process runs: one line naming it and its build-id
  --check core      a kernel core: dscope core --sysroot ROOT (as live), without --sysroot (the
                    missing files and the exact --sysroot hint), with the trixie root as
                    --sysroot (refused: a file of another build, both build-ids)
  --check gcore     a gcore core in GDB and lldb-16: the root as the debugger's sysroot (as live),
                    no sysroot (libtorch_cpu missing, the debugger's own setting named), a sysroot
                    holding another build of libtorch_cpu (both build-ids, the setting named)

  container_test.py --check C --roots-script S --dscope D --gdb-script G [--lldb-plugin P]
                    --profiles DIR --workdir W
"""

import argparse
import glob
import os
import pathlib
import re
import re as _re
import select
import shutil
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "e2e"))
import session  # noqa: E402
import roots  # noqa: E402

READY_S = 60
COMMAND = "op-table --list aten::mm"

# The program: loads libtorch_cpu (whose static initializers register every operator with the
# dispatcher), says "ready" and waits for a line; with "crash" it aborts instead (a kernel core).
# No torch header: the compile takes a second.
PROGRAM = r"""
#include <cstdio>
#include <cstdlib>
#include <cstring>
namespace c10 { struct Dispatcher { static Dispatcher& realSingleton(); }; }
int main(int argc, char** argv) {
  c10::Dispatcher& dispatcher = c10::Dispatcher::realSingleton();
  std::printf("ready %p\n", static_cast<void*>(&dispatcher));
  std::fflush(stdout);
  if (argc > 1 && std::strcmp(argv[1], "crash") == 0) std::abort();
  char line[16];
  return std::fgets(line, sizeof line, stdin) ? 0 : 1;
}
"""


def build_id(path):
    notes = subprocess.run(["readelf", "-n", str(path)], capture_output=True, text=True, timeout=60).stdout
    found = re.search(r"Build ID: ([0-9a-f]+)", notes)
    return found.group(1) if found else None


class Container:
    """The program built and run in the sid root; its files in ROOT/tmp/dscope-container-PID."""

    def __init__(self, a):
        self.a = a
        self.root = roots.root_dir(a.roots_script, "sid")
        self.inside = "/tmp/dscope-container-%d" % os.getpid()  # the program's folder as the container sees it
        self.dir = self.root / self.inside.lstrip("/")
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True)
        (self.dir / "program.cpp").write_text(PROGRAM)
        build = subprocess.run([a.roots_script, "run", "sid", "g++", "-std=c++20", "-O1", "-g",
                                self.inside + "/program.cpp", "-o", self.inside + "/program",
                                "-Wl,--no-as-needed", "-ltorch_cpu", "-lc10"],
                               capture_output=True, text=True, timeout=120)
        if build.returncode != 0:
            raise SystemExit("the program does not build in the sid root:\n" + build.stderr[-3000:])

    def start(self, *args, libdir=None):
        """Runs the program in the container; returns (the runner, the program's host pid). The shell
        stays its parent (exit $? keeps it from exec'ing the program): the program is no pid
        namespace's init, which ignores its own SIGABRT."""
        shell = "cd %s && ulimit -c unlimited && echo 0x37 > /proc/self/coredump_filter && %s./program %s; exit $?" % (
            self.inside, "LD_LIBRARY_PATH=%s " % libdir if libdir else "", " ".join(args))
        runner = subprocess.Popen(self.container_argv(shell), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                  start_new_session=True)
        if not select.select([runner.stdout], [], [], READY_S)[0] or not runner.stdout.readline().startswith("ready"):
            raise SystemExit("the program did not start in the sid root within %d s" % READY_S)
        return runner, self.program_pid(runner.pid)

    def container_argv(self, shell):
        """`sh -c shell` in the root as docker and podman run a container: own mount and pid
        namespaces, the root made the namespace's root with pivot_root (the old one unmounted), /proc
        mounted. (A chroot would leave the root's files reachable from the host under the host's
        paths, and /proc/PID/maps would name them so: no container hides its files that way.)"""
        old_root = self.inside.lstrip("/") + "/old-root"
        (self.root / old_root).mkdir(exist_ok=True)
        setup = ('set -e; mount --make-rprivate /; mount --bind "$0" "$0"; cd "$0"; pivot_root . "$1"; cd /; '
                 'mount -t proc proc /proc; umount -l "/$1"; exec /bin/sh -c "$2"')
        return ["unshare", "--mount", "--pid", "--fork", "/bin/sh", "-c", setup, str(self.root), old_root, shell]

    def program_pid(self, runner_pid):
        """The program's pid on the host: the process below the runner (unshare --fork) that runs it."""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            for exe in glob.glob("/proc/[0-9]*/exe"):
                pid = int(exe.split("/")[2])
                try:
                    if os.readlink(exe).endswith(self.inside + "/program") and self.descends(pid, runner_pid):
                        return pid
                except OSError:
                    pass
            time.sleep(0.1)
        raise SystemExit("the program's host pid was not found")

    @staticmethod
    def descends(pid, ancestor):
        for _ in range(8):
            if pid == ancestor:
                return True
            try:
                pid = int(pathlib.Path("/proc/%d/stat" % pid).read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                return False
        return False


    def libtorch(self):
        """The libtorch_cpu path the program maps (as the container names it) and its build-id."""
        for so in sorted((self.root / "usr/lib/x86_64-linux-gnu").glob("libtorch_cpu.so.*")):
            if not so.is_symlink():
                return "/" + str(so.relative_to(self.root)), build_id(so)
        raise SystemExit("no libtorch_cpu in the sid root")

    def remove(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def found_answer(who, text, libtorch_id, profiles):
    """Problems with an answer that must have read the root's libtorch_cpu: the no-profile line
    naming its build-id, or (a profile for that build shipped) a real op-table answer."""
    if (pathlib.Path(profiles) / (libtorch_id + ".profile")).exists():
        if "aten::mm" not in text or "dscope:" in text:
            return ["%s: expected op-table's answer for aten::mm (a profile for build-id %s is shipped):\n%s" % (
                who, libtorch_id, text[-2000:])]
        return []
    lines = [line for line in text.splitlines() if line.startswith("dscope: no layout profile for this PyTorch (")]
    if len(lines) != 1 or "build-id %s)" % libtorch_id not in lines[0]:
        return ["%s: expected one 'dscope: no layout profile for this PyTorch (...libtorch_cpu..., build-id %s)' line:\n%s" % (
            who, libtorch_id, text[-2000:])]
    return []


def one_line(who, text, *parts, re=None):
    """Problems unless text has exactly one dscope: line, it holds every part and starts with a
    match of the regular expression `re`."""
    lines = [line for line in text.splitlines() if line.startswith("dscope: ")]
    if len(lines) != 1 or any(p not in lines[0] for p in parts) or (re and not _re.match(re, lines[0])):
        return ["%s: expected one dscope: line with %r%s:\n%s" % (who, parts, " matching %r" % re if re else "",
                                                                  text[-2000:])]
    return []


def dscope(a, *args):
    out = subprocess.run([a.dscope] + [str(x) for x in args], capture_output=True, text=True, timeout=120,
                         stdin=subprocess.DEVNULL, env=dict(os.environ, DSCOPE_PROFILE_PATH=a.profiles))
    return out.stdout + out.stderr


def session_argv(debugger, plugin, target, sysroot):
    """The debugger on a live pid or (program, core), its sysroot set before either is opened."""
    if isinstance(target, int):
        return roots.debugger_argv(debugger, plugin, pid=target, extra=[COMMAND], sysroot=sysroot)
    return roots.debugger_argv(debugger, plugin, target[0], core=target[1], extra=[COMMAND], sysroot=sysroot)


def gdb(a, target, sysroot=None):
    out = session.run(session_argv("gdb", a.gdb_script, target, sysroot), timeout=120,
                      env=dict(os.environ, DSCOPE_PROFILE_PATH=a.profiles))
    return out.text + ("" if out.returncode is not None else "\n(GDB did not end)")


def lldb(a, target, sysroot=None):
    out, _first = session.run_lldb_aware(session_argv("lldb", a.lldb_plugin, target, sysroot), timeout=120,
                                         env=dict(os.environ, DSCOPE_PROFILE_PATH=a.profiles))
    return out.text + ("" if out.returncode is not None else "\n(lldb-16 did not end)")


def debuggers(a):
    return [("gdb", gdb)] + ([("lldb-16", lldb)] if a.lldb_plugin else [])


def check_live(a, box):
    path, libtorch_id = box.libtorch()
    runner, pid = box.start()
    problems = []
    try:
        problems += found_answer("dscope pid", dscope(a, "pid", pid, *COMMAND.split()), libtorch_id, a.profiles)
        for name, run in debuggers(a):
            problems += found_answer(name + " attached", run(a, pid), libtorch_id, a.profiles)
    finally:
        session.kill_group(runner)
    # A library gone from the container while the job runs (a layer updated, a package upgraded):
    # the program runs with its own copy of libc10, which is then deleted.
    libdir = box.dir / "lib"
    libdir.mkdir()
    c10 = [p for p in sorted((box.root / "usr/lib/x86_64-linux-gnu").glob("libc10.so.*")) if not p.is_symlink()][0]
    soname = re.search(r"SONAME.*\[(.*)\]", subprocess.run(["readelf", "-d", str(c10)], capture_output=True, text=True,
                                                            timeout=60).stdout).group(1)
    shutil.copy(c10, libdir / soname)
    runner, pid = box.start(libdir=box.inside + "/lib")
    try:
        (libdir / soname).unlink()
        gone = r"dscope: cannot find %s/lib/%s \(build-id %s\), which the process mapped, in its root /proc/%d/root or on" % (
            re.escape(box.inside), re.escape(soname), build_id(c10), pid)
        problems += one_line("dscope pid, libc10 deleted", dscope(a, "pid", pid, *COMMAND.split()), re=gone)
        for name, run in debuggers(a):
            problems += one_line(name + " attached, libc10 deleted", run(a, pid), re=gone)
    finally:
        session.kill_group(runner)
    return problems


def kernel_core(box):
    runner, _pid = box.start("crash")
    runner.wait(timeout=60)
    cores = sorted(box.dir.glob("core*"), key=lambda p: p.stat().st_mtime)
    if not cores:
        raise SystemExit("no kernel core in %s (core_pattern %s)" % (
            box.dir, pathlib.Path("/proc/sys/kernel/core_pattern").read_text().strip()))
    return cores[-1]


def check_core(a, box, trixie):
    path, libtorch_id = box.libtorch()
    core = kernel_core(box)
    problems = found_answer("dscope core --sysroot ROOT", dscope(a, "core", "--sysroot", box.root, core, *COMMAND.split()),
                            libtorch_id, a.profiles)
    text = dscope(a, "core", core, *COMMAND.split())
    problems += one_line("dscope core (no sysroot)", text, "cannot find ", path, "dscope core --sysroot DIR %s" % core)
    # The trixie root holds libc.so.6 (and more) of another build at the paths the process mapped.
    text = dscope(a, "core", "--sysroot", trixie, core, *COMMAND.split())
    problems += one_line("dscope core --sysroot TRIXIE", text, " is not the file the process of ")
    named = re.search(r"dscope: (%s(/\S+)) is not the file .*its build-id is ([0-9a-f]+), the core's ([0-9a-f]+)" %
                      re.escape(str(trixie)), text)
    if not named or named.group(3) != build_id(named.group(1)) or named.group(4) != build_id(box.root / named.group(2).lstrip("/")):
        problems.append("dscope core --sysroot TRIXIE: expected a trixie file and both build-ids (readelf):\n" + text[-2000:])
    return problems


def check_gcore(a, box, trixie):
    path, libtorch_id = box.libtorch()
    runner, pid = box.start()
    core = a.workdir / "program.gcore"
    try:
        subprocess.run(session.gdb_batch("-iex", "set debuginfod enabled off", "-p", str(pid), "-ex", "gcore %s" % core),
                       capture_output=True, timeout=120, check=True)
    finally:
        session.kill_group(runner)
    program = box.dir / "program"
    # Another build of libtorch_cpu at the paths the process has it by (the file's and its soname's,
    # which the link map names): an image rebuilt with trixie's.
    other = a.workdir / "other-build"
    libdir = "usr/lib/x86_64-linux-gnu"
    (other / libdir).mkdir(parents=True)
    trixie_torch = [p for p in sorted((trixie / libdir).glob("libtorch_cpu.so.*")) if not p.is_symlink()][0]
    for name in (box.root / libdir).glob("libtorch_cpu.so.*"):
        os.symlink(trixie_torch, other / libdir / name.name)
    other_id = build_id(trixie_torch)
    library = r"/%s/libtorch_cpu\.so\.[0-9.]+" % libdir
    settings = {"gdb": 'gdb -iex "set sysroot DIR"', "lldb-16": 'lldb-16 -O "platform select remote-linux --sysroot DIR"'}
    problems = []
    for name, run in debuggers(a):
        problems += found_answer(name + " core, sysroot ROOT", run(a, (program, core), box.root), libtorch_id, a.profiles)
        problems += one_line(name + " core, no sysroot", run(a, (program, core)), settings[name], re=(
            r"dscope: cannot find %s \(build-id %s\)" % (library, libtorch_id)))
        problems += one_line(name + " core, sysroot of another build", run(a, (program, core), other), settings[name], re=(
            r"dscope: %s%s is another build than the process's %s: its build-id is %s, the process's %s" % (
                re.escape(str(other)), library, library, other_id, libtorch_id)))
    return problems


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--check", choices=["live", "core", "gcore"], required=True)
    p.add_argument("--roots-script", required=True)
    p.add_argument("--dscope", required=True)
    p.add_argument("--gdb-script", required=True)
    p.add_argument("--lldb-plugin")
    p.add_argument("--profiles", required=True)
    p.add_argument("--workdir", type=pathlib.Path, required=True)
    a = p.parse_args()
    shutil.rmtree(a.workdir, ignore_errors=True)
    a.workdir.mkdir(parents=True)
    trixie = roots.root_dir(a.roots_script, "trixie")
    started = time.monotonic()
    box = Container(a)
    try:
        problems = {"live": lambda: check_live(a, box), "core": lambda: check_core(a, box, trixie),
                    "gcore": lambda: check_gcore(a, box, trixie)}[a.check]()
    finally:
        box.remove()
    print("container %s: %d problems (%.1f s)" % (a.check, len(problems), time.monotonic() - started))
    for problem in problems[:8]:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
