"""A Python kernel that re-enters its own operator through the dispatcher (issue 37): the program
defines dscopetest::again(Tensor x, int n) with a Python CPU kernel that calls the operator again
with n - 1, called from inside nested nn.Modules, while a second thread sleeps in a function of its
own. At n == 0 (DEPTH levels deep, well short of the RecursionError the interpreter would raise)
it writes its own account as JSON, then either stands still ("stop": the test attaches or takes a
core; `ready` on stdout) or crashes there ("crash": a segfault through ctypes inside the Python
kernel, which leaves a kernel core). Its account: the kernel's Python function (module, qualname,
file, first line), the main thread's traceback.format_stack() (innermost first) and the side
thread's, by native thread id; the interpreter's version and file."""

import ctypes
import json
import os
import sys
import threading
import time
import traceback

import torch

DEPTH = 40
MODE, ORACLE = sys.argv[1], sys.argv[2]

lib = torch.library.Library("dscopetest", "DEF")
lib.define("again(Tensor x, int n) -> Tensor")
side_ready = threading.Event()
account = {}


def frame_lines(stack):
    return [entry.splitlines()[0] for entry in stack][::-1]


def side_sleeper():
    side_ready.set()
    while True:
        time.sleep(1000)


def write_account(main_stack):
    side = next(t for t in threading.enumerate() if t.name == "side")
    account.update({
        "python": "%d.%d.%d" % sys.version_info[:3], "executable": os.path.realpath(sys.executable), "pid": os.getpid(),
        "torch": torch.__version__, "depth": DEPTH,
        "kernel": {"module": again_kernel.__module__, "qualname": again_kernel.__qualname__,
                   "file": again_kernel.__code__.co_filename, "line": again_kernel.__code__.co_firstlineno},
        "main": {"native_id": threading.get_native_id(), "frames": frame_lines(main_stack)},
        "side": {"native_id": side.native_id, "frames": frame_lines(traceback.format_stack(sys._current_frames()[side.ident]))},
    })
    with open(ORACLE + ".tmp", "w") as f:
        json.dump(account, f)
    os.rename(ORACLE + ".tmp", ORACLE)


def again_kernel(x, n):
    if n == 0:
        if MODE == "crash":  # one line: the account's innermost frame is the line that crashes
            write_account(traceback.format_stack()), print("ready", flush=True), ctypes.string_at(0)
        # One line, and a wait with no Python frame of its own: the account's innermost frame is the
        # line the thread stands still on.
        write_account(traceback.format_stack()), print("ready", flush=True), time.sleep(10 ** 7)
    return torch.ops.dscopetest.again(x, n - 1)


lib.impl("again", again_kernel, "CPU")


class Inner(torch.nn.Module):
    def forward(self, x):
        return torch.ops.dscopetest.again(x, DEPTH)


class Outer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Inner()

    def forward(self, x):
        return self.inner(x) + 1


threading.Thread(target=side_sleeper, name="side", daemon=True).start()
side_ready.wait()
Outer()(torch.ones(2))
