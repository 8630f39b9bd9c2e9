"""The Debian roots of scripts/torch-roots.sh (real PyTorch 2.x), as the tests use them."""

import pathlib
import subprocess
import time


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
