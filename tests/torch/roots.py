"""The Debian roots of scripts/torch-roots.sh (real PyTorch 2.x), as the tests use them, and the
debugger sessions that read a process of a root (or its core) from the host."""

import pathlib
import subprocess
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "e2e"))
import session  # noqa: E402


def root_dir(script, suite):
    """The folder of the suite's root (made or not: scripts/torch-roots.sh ensure makes it)."""
    return pathlib.Path(subprocess.run([str(script), "dir", suite], capture_output=True, text=True,
                                       check=True).stdout.strip())


def runner_children(runner_pid, timeout=30):
    """The host pids of the program `torch-roots.sh run` started: the children of the unshare the
    script becomes (it runs the program as its pid namespace's init). Waits until there is one, up to
    timeout seconds; [] when the runner has none by then or has ended."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            children = pathlib.Path("/proc/%d/task/%d/children" % (runner_pid, runner_pid)).read_text().split()
        except OSError:
            return []
        if children or time.monotonic() >= deadline:
            return [int(c) for c in children]
        time.sleep(0.05)


def lldb_attach_in_root(pid, sysroot, program):
    """lldb-16's commands that attach to pid with the process's files read under sysroot: its host
    platform has no sysroot, so the target's module search path maps / there before the attach."""
    return ["-o", "target create %s" % program, "-o", "target modules search-paths add / %s/" % sysroot,
            "-o", "process attach -p %d" % pid]


def debugger_argv(debugger, plugin, program=None, core=None, pid=None, commands=None, extra=(), sysroot=None):
    """A batch session of gdb or lldb-16 with DispatchScope loaded, on a core of program or attached
    to pid, running the command file and then the extra commands. sysroot: where the process's files
    are (a process in a root: /proc/PID/root; its core: the root's folder), given to the debugger
    before it loads any module: gdb's `set sysroot`, and the program by the name the host has for it
    (/proc/PID/exe; without it gdb 13 reads no symbols of an attached process's libraries). lldb-16's
    host platform has no sysroot: a core gets the remote-linux platform's --sysroot, a live process
    lldb_attach_in_root."""
    if debugger == "gdb":
        argv = session.gdb_batch("-iex", "set debuginfod enabled off")
        if sysroot:
            argv += ["-iex", "set sysroot %s" % sysroot]
        argv += ["-x", str(plugin)] + (["-x", str(commands)] if commands else [])
        argv += sum((["-ex", c] for c in extra), [])
        if core:
            return argv + [str(program), str(core)]
        return argv + ([str(program)] if sysroot else []) + ["-p", str(pid)]
    argv = ["lldb-16", "--no-lldbinit", "-b", "-O", "plugin load %s" % plugin]
    if core:
        argv += (["-O", "platform select remote-linux --sysroot %s" % sysroot] if sysroot else []) + [
            "-c", str(core), str(program)]
    elif sysroot:
        argv += lldb_attach_in_root(pid, sysroot, program)
    else:
        argv += ["-p", str(pid)]
    argv += (["-s", str(commands)] if commands else []) + sum((["-o", c] for c in extra), [])
    return argv + ([] if core else ["-o", "detach"])
