"""The program dispatch-break is tested and measured on (tests/torch/torch_break_test.py,
bench/torch_bench.py): 1 000 operators on CPU tensors, MM_CALLS of them aten::mm on tensors that
require grad, none that calls aten::mm inside its own kernel; then, each as many times as asked:
aten::view (its CPU kernel is a SymInt kernel), aten::linear without a bias (a `Tensor?` that is
None; on 1-d tensors, where it calls neither aten::mm nor aten::view), on 2.x aten::mm under a
TorchDispatchMode of its own (BreakMode) and under FakeTensorMode, and myops::late (a Python
kernel). Before the loop it writes what the process itself says of the arguments and of its
thread's TLS, at the AutogradCPU call and under the guard the autograd kernel holds when it
redispatches to CPU, (2.x) of its Python dispatch state, which no stop changes, and of myops::late's
Python function; at the end it adds what it says at the calls under the modes (the "mode" and
"fake" parts, each {"outer": ..., "inner": ...}: at the call, and where the mode calls the
operator's kernel: inside BreakMode.__torch_dispatch__, inside FakeTensorMode's kernel invocation).

    python3 break_program.py ORACLE_JSON [--mm N] [--ops N] [--view N] [--linear N] [--mode N] [--fake N] [--late N]
                             [--go FILE]
The loop's own time goes to stdout as "loop seconds: S", each count as "<operator> calls: N".
--go FILE: before the loop, wait (at most GO_WAIT_S) until FILE exists: a debugger attached from
outside the program's root creates it once it has set its breakpoints (inside a pid namespace the
program cannot see its tracer)."""
import argparse
import json
import os
import sys
import time

import torch

parser = argparse.ArgumentParser()
parser.add_argument("oracle")
parser.add_argument("--mm", type=int, default=37)
parser.add_argument("--ops", type=int, default=1000)
parser.add_argument("--view", type=int, default=0, help="then call x.view(8, 8) N times")
parser.add_argument("--linear", type=int, default=0, help="then call F.linear(x, w) N times, without a bias")
parser.add_argument("--mode", type=int, default=0, help="then call torch.mm(a, b) N times under BreakMode")
parser.add_argument("--fake", type=int, default=0, help="then call torch.mm N times on fake tensors under FakeTensorMode")
parser.add_argument("--late", type=int, default=0, help="then register myops::late (a Python CPU kernel) and call it N times")
parser.add_argument("--go", help="wait until this file exists before the loop")
options = parser.parse_args()

torch.manual_seed(0)
a = torch.randn(4, 3, requires_grad=True)
b = torch.randn(3, 5, requires_grad=True)
x = torch.randn(64)
w = torch.randn(64)


def tls():
    """The TLS sets as c10 prints them, and an excluded AutogradFunctionality bit with no backend bit
    (what _AutoDispatchBelowAutograd excludes: c10 prints no key for it) as a stop names it."""
    excluded = torch._C._dispatch_tls_local_exclude_set()
    keys = torch._C.DispatchKey
    backendless = excluded.has(keys.AutogradFunctionality) and not excluded.has(keys.AutogradCPU)
    return {"included": str(torch._C._dispatch_tls_local_include_set()),
            "excluded": str(excluded) + (" + AutogradFunctionality (every backend)" if backendless else "")}


def python_state():
    """The thread's Python dispatch state as torch says it (2.x), in the fields of
    python_state_program.py's accounts (python_state_test.expected_state makes a stop's "python
    state" row and "because" lines of it): the mode stack by class, bottom to top; the infra modes by
    slot (torch._C._get_dispatch_mode, in slot order); whether the thread's TLS includes or excludes
    each key the state puts there."""
    if not hasattr(torch._C, "_TorchDispatchModeKey"):
        return None
    from torch.utils._python_dispatch import _get_current_dispatch_mode_stack
    infra = {}
    for name, key in torch._C._TorchDispatchModeKey.__members__.items():
        if torch._C._get_dispatch_mode(key) is not None:
            infra[name] = type(torch._C._get_dispatch_mode(key)).__name__
    keys = dict((name, {"included": torch._C._dispatch_tls_is_dispatch_key_included(getattr(torch._C.DispatchKey, name)),
                        "excluded": torch._C._dispatch_tls_is_dispatch_key_excluded(getattr(torch._C.DispatchKey, name))})
                for name in STATE_KEYS)
    return {"role": "break_program", "modes": [type(m).__name__ for m in _get_current_dispatch_mode_stack()], "infra": infra,
            "keys": keys, "python_dispatcher": keys["PythonDispatcher"]["included"],
            "functorch_depth": torch._C._functorch.maybe_current_level() or 0,
            "grad_mode": torch.is_grad_enabled(), "inference_mode": torch.is_inference_mode_enabled()}


def account():
    """What a stop's explanation says of the thread, as the process says it here."""
    return {"tls": tls(), "python_state": python_state()}


def function_account(f):
    """A Python function as the process says of it: what a Python kernel's "kernel" row names."""
    return {"module": f.__module__, "qualname": f.__qualname__, "file": f.__code__.co_filename, "line": f.__code__.co_firstlineno}


# The keys a Python dispatch state puts in the TLS sets (python_state_program.py's KEYS).
STATE_KEYS = ["Python", "PythonTLSSnapshot", "PythonDispatcher", "FuncTorchDynamicLayerFrontMode",
              "FuncTorchDynamicLayerBackMode", "ADInplaceOrView", "AutogradOther", "AutogradFunctionality",
              "AutogradNestedTensor"]


late_kernel = lambda t: t + 1  # noqa: E731  (a lambda: its kernel row names "<lambda>")
oracle = {"mm_calls": options.mm, "ops": options.ops, "view_calls": options.view, "linear_calls": options.linear,
          "late_calls": options.late, "x": str(torch._C._dispatch_keys(x)), "w": str(torch._C._dispatch_keys(w)),
          "self": str(torch._C._dispatch_keys(a)), "mat2": str(torch._C._dispatch_keys(b)), "tls": tls(), "python_state": python_state(),
          "mode_calls": options.mode, "fake_calls": options.fake, "late_kernel": function_account(late_kernel)}


def caller(statement):
    """The program's line that is `statement`, as traceback prints its frame: the Python caller a
    stop names for the calls it makes."""
    return 'File "%s", line %d, in <module>' % (sys._getframe().f_code.co_filename, next(
        n for n, line in enumerate(open(__file__), 1) if line.strip() == statement))


# The Python line each aten::mm stop names as its caller: the loop's, BreakMode's, FakeTensorMode's.
oracle.update(mm_caller=caller("torch.mm(a, b)"), mode_caller=caller("torch.mm(a, b)  # under BreakMode"),
              fake_caller=caller("torch.mm(fa, fb)"))
# What the autograd kernel's AutoDispatchBelowADInplaceOrView holds (1.13's Python has no such guard).
guard = torch._C._AutoDispatchBelowAutograd()
torch._C._dispatch_tls_set_dispatch_key_excluded(torch._C.DispatchKey.ADInplaceOrView, True)
oracle["tls_below_autograd"] = tls()
torch._C._dispatch_tls_set_dispatch_key_excluded(torch._C.DispatchKey.ADInplaceOrView, False)
del guard


def write_oracle():
    with open(options.oracle + ".partial", "w") as f:  # whole once it has its name
        json.dump(oracle, f)
    os.replace(options.oracle + ".partial", options.oracle)


write_oracle()


GO_WAIT_S = 120
deadline = time.monotonic() + GO_WAIT_S
while options.go and not os.path.exists(options.go):
    if time.monotonic() > deadline:
        raise SystemExit("break_program: %s did not appear in %d seconds" % (options.go, GO_WAIT_S))
    time.sleep(0.05)

# Operators that call no aten::mm: each its own kernel on a 1-d tensor.
others = [lambda: x.add(1), lambda: x.mul(2), lambda: x.relu(), lambda: x.neg(), lambda: x.sum()]
every = options.ops // max(options.mm, 1)
start = time.perf_counter()
done = 0
for i in range(options.ops):
    if done < options.mm and i % every == 0:
        torch.mm(a, b)
        done += 1
    else:
        others[i % len(others)]()
print("loop seconds: %.6f" % (time.perf_counter() - start), flush=True)
print("mm calls: %d" % done, flush=True)

for _ in range(options.view):
    x.view(8, 8)
print("view calls: %d" % options.view, flush=True)
for _ in range(options.linear):
    torch.nn.functional.linear(x, w)
print("linear calls: %d" % options.linear, flush=True)

if options.mode:
    from torch.utils._python_dispatch import TorchDispatchMode

    class BreakMode(TorchDispatchMode):
        """Calls each operator's kernel as it is, saying first what the thread's state is there."""

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            oracle["mode"]["inner"] = account()
            return func(*args, **(kwargs or {}))

    oracle["mode"] = {}
    with BreakMode():
        oracle["mode"]["outer"] = account()
        for _ in range(options.mode):
            torch.mm(a, b)  # under BreakMode
    print("mode calls: %d" % options.mode, flush=True)

if options.fake:
    # FakeTensorMode runs an operator's Meta kernel inside in_kernel_invocation_manager (which sets
    # the TLS the kernel runs under), looked up in its module at each call: the program's own
    # manager around it says what the thread's state is there.
    import contextlib
    from torch._subclasses import fake_tensor

    kernel_invocation = fake_tensor.in_kernel_invocation_manager

    @contextlib.contextmanager
    def said_kernel_invocation(mode):
        with kernel_invocation(mode):
            oracle["fake"]["inner"] = account()
            yield

    fake_tensor.in_kernel_invocation_manager = said_kernel_invocation
    oracle["fake"] = {}
    with fake_tensor.FakeTensorMode() as fake_mode:
        # Each call on tensors of its own shape: FakeTensorMode caches an operator's output by its
        # arguments' metadata and runs the Meta kernel only where the cache has none.
        fakes = [(fake_mode.from_tensor(torch.randn(4, 3 + i, requires_grad=True)),
                  fake_mode.from_tensor(torch.randn(3 + i, 5, requires_grad=True))) for i in range(options.fake)]
        oracle["fake"].update(outer=account(), self=str(torch._C._dispatch_keys(fakes[0][0])),
                              mat2=str(torch._C._dispatch_keys(fakes[0][1])))
        for fa, fb in fakes:
            torch.mm(fa, fb)
    fake_tensor.in_kernel_invocation_manager = kernel_invocation
    print("fake calls: %d" % options.fake, flush=True)
write_oracle()

# An operator registered after the debugger placed its breakpoints: they are placed again.
if options.late:
    library = torch.library.Library("myops", "DEF")
    library.define("late(Tensor x) -> Tensor")
    library.impl("late", late_kernel, "CPU")
    for _ in range(options.late):
        torch.ops.myops.late(x)
    print("late calls: %d" % options.late, flush=True)
