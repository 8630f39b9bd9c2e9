"""The program dispatch-break is tested and measured on (tests/torch/torch_break_test.py,
bench/torch_bench.py): 1 000 operators on CPU tensors, MM_CALLS of them aten::mm on tensors that
require grad, none that calls aten::mm inside its own kernel; then, each as many times as asked:
aten::view (its CPU kernel is a SymInt kernel), aten::linear without a bias (a `Tensor?` that is
None; on 1-d tensors, where it calls neither aten::mm nor aten::view) and myops::late (a Python
kernel). Before the loop it writes what the process itself says of the arguments and of its
thread's TLS, at the AutogradCPU call and under the guard the autograd kernel holds when it
redispatches to CPU, and (2.x) of its Python dispatch state, which no stop changes.

    python3 break_program.py ORACLE_JSON [--mm N] [--ops N] [--view N] [--linear N] [--late N] [--go FILE]
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
    """The thread's Python dispatch state as torch says it (2.x): the stops' "python state" row."""
    if not hasattr(torch._C, "_TorchDispatchModeKey"):
        return None
    from torch.utils._python_dispatch import _get_current_dispatch_mode_stack
    return {"modes": [type(m).__name__ for m in _get_current_dispatch_mode_stack()],
            "python_dispatcher": torch._C._dispatch_tls_is_dispatch_key_included(torch._C.DispatchKey.PythonDispatcher),
            "functorch_depth": torch._C._functorch.maybe_current_level() or 0,
            "grad_mode": torch.is_grad_enabled(), "inference_mode": torch.is_inference_mode_enabled()}


oracle = {"mm_calls": options.mm, "ops": options.ops, "view_calls": options.view, "linear_calls": options.linear,
          "late_calls": options.late, "x": str(torch._C._dispatch_keys(x)), "w": str(torch._C._dispatch_keys(w)),
          "self": str(torch._C._dispatch_keys(a)), "mat2": str(torch._C._dispatch_keys(b)), "tls": tls(), "python_state": python_state()}
# The Python line every aten::mm stop names as its caller, as traceback prints the frame.
oracle["mm_caller"] = 'File "%s", line %d, in <module>' % (sys._getframe().f_code.co_filename, next(
    n for n, line in enumerate(open(__file__), 1) if line.strip() == "torch.mm(a, b)"))
# What the autograd kernel's AutoDispatchBelowADInplaceOrView holds (1.13's Python has no such guard).
guard = torch._C._AutoDispatchBelowAutograd()
torch._C._dispatch_tls_set_dispatch_key_excluded(torch._C.DispatchKey.ADInplaceOrView, True)
oracle["tls_below_autograd"] = tls()
torch._C._dispatch_tls_set_dispatch_key_excluded(torch._C.DispatchKey.ADInplaceOrView, False)
del guard
with open(options.oracle + ".partial", "w") as f:  # whole once it has its name
    json.dump(oracle, f)
os.replace(options.oracle + ".partial", options.oracle)


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

# An operator registered after the debugger placed its breakpoints: they are placed again.
if options.late:
    library = torch.library.Library("myops", "DEF")
    library.define("late(Tensor x) -> Tensor")
    library.impl("late", lambda t: t + 1, "CPU")
    for _ in range(options.late):
        torch.ops.myops.late(x)
    print("late calls: %d" % options.late, flush=True)
