"""A Python kernel that re-enters its own operator through the dispatcher (issue 37): the program
defines dscopetest::again(Tensor x, int n) with a Python CPU kernel that calls the operator again
with n - 1, called from inside nested nn.Modules, while a second thread sleeps in a function of its
own. At n == 0 (DEPTH levels deep, well short of the RecursionError the interpreter would raise)
it writes its own account as JSON, then either stands still ("stop": the test attaches or takes a
core; `ready` on stdout) or crashes there ("crash": a segfault through ctypes inside the Python
kernel, which leaves a kernel core). Its account: the kernel's Python function (module, qualname,
file, first line), the main thread's traceback.format_stack() (innermost first) and the side
thread's, by native thread id; the interpreter's version and file; and, by operator and key, every
Python kernel it registered at CPU or Meta (a Python meta kernel; on 2.x a torch.library.custom_op
with its register_fake, and register_fake for an operator of its own library), each by the function
torch.library handed the dispatcher."""

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

# What each Python kernel registration hands to the dispatcher: every torch.library path (custom_op,
# register_fake, impl) goes through Library.impl, which passes its fn to the C++ registration as it
# is; by (operator, key), the function's own account of itself.
registered = {}
library_impl = torch.library.Library.impl


def recorded_impl(self, op_name, fn, dispatch_key="", *args, **kwargs):
    name = op_name if isinstance(op_name, str) else op_name._schema.name
    key = dispatch_key or self.dispatch_key
    if self.ns == "dscopetest" and key in ("CPU", "Meta") and hasattr(fn, "__code__"):
        registered.setdefault("dscopetest::" + name.split("::")[-1], {})[key] = function_account(fn)
    return library_impl(self, op_name, fn, dispatch_key, *args, **kwargs)


def function_account(f):
    return {"module": f.__module__, "qualname": f.__qualname__, "file": f.__code__.co_filename, "line": f.__code__.co_firstlineno}


torch.library.Library.impl = recorded_impl
lib = torch.library.Library("dscopetest", "DEF")
lib.define("again(Tensor x, int n) -> Tensor")
# A Python meta registration (torch.library's Library.impl at Meta, 1.13 on), beside a CPU kernel.
lib.define("shaped(Tensor x) -> Tensor")
lib.impl("shaped", lambda x: x * 2, "CPU")


def shaped_meta(x):
    return torch.empty_like(x)


lib.impl("shaped", shaped_meta, "Meta")
if hasattr(torch.library, "custom_op"):  # 2.4 on
    @torch.library.custom_op("dscopetest::custom", mutates_args=(), device_types="cpu")
    def custom(x: torch.Tensor) -> torch.Tensor:
        return x.clone()

    @custom.register_fake
    def custom_fake(x):
        return torch.empty_like(x)

    # register_fake for an operator a Library defined.
    lib.define("faked(Tensor x) -> Tensor")
    lib.impl("faked", lambda x: x + 0, "CPU")

    @torch.library.register_fake("dscopetest::faked", lib=lib)
    def faked_fake(x):
        return torch.empty_like(x)
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
        "kernel": function_account(again_kernel), "registered": registered,
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
