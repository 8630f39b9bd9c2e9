"""What the debugger benchmarks (gdb_bench, lldb_bench, frames_bench) share: one timer, one core
recipe, how to start gdb and lldb-16, and one way to time a command inside either debugger."""

import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time

GDB = shutil.which("gdb") or "gdb"
LLDB = shutil.which("lldb-16") or "lldb-16"
BENCH = os.path.splitext(os.path.basename(sys.argv[0]))[0]  # prefix of every line a bench prints


def log(msg):
    print(msg, flush=True)


def summary(msg):
    log("%s: %s" % (BENCH, msg))


def fail(msg):
    sys.exit("%s: %s" % (BENCH, msg))


def require(build, paths, hint=""):
    """The build outputs a bench runs, and a core_pattern that writes core files."""
    for path in paths:
        if not os.path.exists(os.path.join(build, path)):
            fail("%s missing: cmake --build %s%s" % (path, build, hint))
    pattern = open("/proc/sys/kernel/core_pattern").read().strip()
    if pattern.startswith("|"):
        fail("kernel.core_pattern pipes cores to a program (%s); no core file to read" % pattern)


def run_timed(argv, timeout=None, mem_limit=None, stdout=subprocess.DEVNULL, env=None, cwd=None):
    """(seconds, returncode or None on timeout, stdout text or None). Kills the process group.
    The wait blocks and a timer does the killing: Popen's waits with a timeout poll every 50 ms,
    which put every time with no output pipe on a 50 ms grid (0.366 s for 0.33 to 0.36 s)."""

    def limits():
        os.setsid()
        if mem_limit:
            resource.setrlimit(resource.RLIMIT_AS, (mem_limit, mem_limit))

    killed = []

    def kill():
        try:
            os.killpg(proc.pid, signal.SIGKILL)
            killed.append(True)
        except ProcessLookupError:  # it ended as the timer fired
            pass

    start = time.monotonic()
    proc = subprocess.Popen(argv, stdout=stdout, stderr=subprocess.STDOUT if stdout == subprocess.PIPE
                            else subprocess.DEVNULL, preexec_fn=limits, env=env, cwd=cwd, text=True)
    timer = threading.Timer(timeout, kill) if timeout else None
    if timer:
        timer.start()
    out, _ = proc.communicate()
    seconds = time.monotonic() - start
    if timer:
        timer.cancel()
        timer.join()
    return (seconds, None, None) if killed else (seconds, proc.returncode, out)


def make_core(workdir, argv, stack_kib, label):
    """Runs argv with kernel cores on (as tests/e2e/expect_crash.sh) and the given stack limit;
    returns the core's path."""
    d = os.path.join(workdir, label)
    os.makedirs(d)
    script = ('ulimit -c unlimited; ulimit -s %d; echo 0x37 > /proc/self/coredump_filter; exec "$@"'
              % stack_kib)
    subprocess.run(["bash", "-c", script, "crash"] + argv, cwd=d, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, env=dict(os.environ, DSCOPE_CRASH_HANDLER="0"))
    cores = sorted((f for f in os.listdir(d) if f.startswith("core")),
                   key=lambda f: os.path.getmtime(os.path.join(d, f)))
    if not cores:
        fail("no core written for %s (kernel.core_pattern: %s)"
             % (label, open("/proc/sys/kernel/core_pattern").read().strip()))
    return os.path.join(d, cores[-1])


def gdb_argv(build, *extra):
    return [GDB, "-batch", "-nx", "-x", os.path.join(build, "gdb", "dscope-gdb.py")] + list(extra)


def lldb_argv(core, prog, *commands, plugin=None, pre=(), sysroot=None):
    """sysroot: where the core's files are (a container's root); lldb-16's host platform ignores
    --sysroot, so the core is loaded under the remote-linux platform's."""
    argv = [LLDB, "-b"]
    if plugin:
        argv += ["-O", "plugin load " + plugin]
    for p in pre:
        argv += ["-O", p]
    if sysroot:
        argv += ["-o", "platform select remote-linux --sysroot " + sysroot, "-o", "target create --core %s %s" % (core, prog)]
    else:
        argv += ["-c", core, prog]
    for c in commands:
        argv += ["-o", c]
    return argv


class Debugger:
    """How to run commands in one debugger on one core, bare or with DispatchScope, and time one
    from inside (start-up and core load excluded)."""

    def __init__(self, name, build, prog, core, sysroot=None):
        """sysroot: the root a core was written in (a container's), given to the debugger as its
        sysroot before the core is loaded (None: the files are this machine's)."""
        self.name, self.build, self.prog, self.core, self.sysroot = name, build, prog, core, sysroot

    def argv(self, commands, plugin):
        if self.name == "gdb":
            argv = gdb_argv(self.build) if plugin else [GDB, "-batch", "-nx"]
            if self.sysroot:
                argv[1:1] = ["-iex", "set sysroot " + self.sysroot, "-iex", "set debuginfod enabled off"]
            for c in commands:
                argv += ["-ex", c]
            return argv + [self.prog, self.core]
        so = os.path.join(self.build, "lldb", "libdscope_lldb.so")
        return lldb_argv(self.core, self.prog, *commands, plugin=so if plugin else None, sysroot=self.sysroot)

    def python(self, code):
        """One debugger command that runs a line of Python."""
        return ("python " if self.name == "gdb" else "script ") + code

    def script_command(self, script, workdir):
        """A debugger command that runs script (Python source)."""
        path = os.path.join(workdir, self.name + "_script.py")
        open(path, "w").write(script)
        return self.python("exec(open(%r).read())" % path)

    def timed(self, command, plugin, workdir, stdout=subprocess.DEVNULL):
        """(command seconds inside the debugger, process wall seconds, stdout text or None)."""
        stamp = os.path.join(workdir, "command_s")
        if os.path.exists(stamp):
            os.unlink(stamp)
        commands = [self.python("import time; t0 = time.monotonic()"), command,
                    self.python("open(%r, 'w').write('%%.4f' %% (time.monotonic() - t0))" % stamp)]
        wall, rc, out = run_timed(self.argv(commands, plugin), timeout=600, stdout=stdout)
        if rc != 0 or not os.path.exists(stamp):
            fail("%s %r failed (%s)" % (self.name, command, "killed at 600 s" if rc is None else "exit %d" % rc))
        return float(open(stamp).read()), wall, out


# Every operator's op-table in one session, timed inside the debugger (lldb_bench's catalogue,
# torch_bench's PyTorch core): OPTABLE_RUNNERS[debugger] defines RUN(command) -> its output.
OPTABLE_SCRIPT = r'''
import time
t0 = time.monotonic()
names = [l.strip() for l in RUN("op-table --list").splitlines() if "::" in l and " " not in l.strip()]
failed = sum("_dispatch_dump_table" not in RUN("op-table " + name) for name in names)
print("OPTABLE ops=%d failed=%d total_s=%.4f" % (len(names), failed, time.monotonic() - t0))
'''

OPTABLE_RUNNERS = {
    "gdb": "import gdb\nRUN = lambda c: gdb.execute(c, to_string=True)\n",
    "lldb": "import lldb\ndef RUN(c):\n    r = lldb.SBCommandReturnObject()\n"
            "    lldb.debugger.GetCommandInterpreter().HandleCommand(c, r)\n    return r.GetOutput() or ''\n",
}


def optable_session(name, build, prog, core, workdir, minimum_ops, sysroot=None):
    """One debugger session running OPTABLE_SCRIPT on core: (operators, seconds inside the debugger)."""
    debugger = Debugger(name, build, prog, core, sysroot)
    command = debugger.script_command(OPTABLE_RUNNERS[name] + OPTABLE_SCRIPT, workdir)
    _, rc, out = run_timed(debugger.argv([command], plugin=True), stdout=subprocess.PIPE, timeout=600)
    m = re.search(r"OPTABLE ops=(\d+) failed=(\d+) total_s=([\d.]+)", out or "")
    if rc != 0 or not m or int(m.group(2)) or int(m.group(1)) < minimum_ops:
        fail("%s: op-table of every operator failed:\n%s" % (name, (out or "")[-2000:]))
    return int(m.group(1)), float(m.group(3))
