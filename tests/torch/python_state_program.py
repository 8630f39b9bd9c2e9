"""A PyTorch 2.x program whose threads stop inside Python dispatch state, each writing its own view.

  python_state_program.py ORACLE.json

Three threads, each stopped (blocked) inside:
  main       vmap(grad(f)): functorch depth 2; in f, MyMode, then FakeTensorMode (an infra mode: its
             slot FAKE), then OtherMode, then the Python dispatcher (enable_python_dispatcher)
  inference  torch.inference_mode()
  no_grad    torch.no_grad() and one OtherMode
Once all three are there, ORACLE.json gets every thread's own account (torch's, not DispatchScope's):
its native thread id (as its pid namespace numbers it), the mode stack as
torch.utils._python_dispatch._get_current_dispatch_mode_stack() lists it (class names, bottom to
top), the infra modes by slot (torch._C._get_dispatch_mode), its TLS include and exclude sets
(torch._C._dispatch_tls_local_include_set() / _exclude_set(), printed and raw), whether each key the
Python dispatch state puts there is included or excluded (torch._C._dispatch_tls_is_dispatch_key_*),
whether it entered the Python dispatcher, grad and inference mode (torch.is_grad_enabled(),
torch.is_inference_mode_enabled()) and the functorch interpreters it is inside; then "ready" on
stdout, and every thread waits until the process is killed.
"""

import json
import sys
import threading

import torch
from torch._dispatch.python import enable_python_dispatcher
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.utils._python_dispatch import TorchDispatchMode, _get_current_dispatch_mode_stack

KEYS = ["Python", "PythonTLSSnapshot", "PythonDispatcher", "FuncTorchDynamicLayerFrontMode",
        "FuncTorchDynamicLayerBackMode", "ADInplaceOrView", "AutogradOther", "AutogradFunctionality",
        "AutogradNestedTensor"]


class MyMode(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


class OtherMode(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def functorch_depth():
    try:
        from torch._functorch.pyfunctorch import retrieve_all_functorch_interpreters
        return len(retrieve_all_functorch_interpreters())
    except ImportError:
        return torch._C._functorch.maybe_current_level() or 0


def own_view(role, python_dispatcher):
    infra = {}
    for name, key in torch._C._TorchDispatchModeKey.__members__.items():  # in slot order
        mode = torch._C._get_dispatch_mode(key)
        if mode is not None:
            infra[name] = type(mode).__name__
    included, excluded = torch._C._dispatch_tls_local_include_set(), torch._C._dispatch_tls_local_exclude_set()
    keys = {}
    for name in KEYS:
        key = getattr(torch._C.DispatchKey, name)
        keys[name] = {"included": torch._C._dispatch_tls_is_dispatch_key_included(key),
                      "excluded": torch._C._dispatch_tls_is_dispatch_key_excluded(key)}
    return {"role": role, "tid": threading.get_native_id(),
            "modes": [type(m).__name__ for m in _get_current_dispatch_mode_stack()], "infra": infra,
            "included": str(included), "excluded": str(excluded),
            "included_raw": "%#x" % included.raw_repr(), "excluded_raw": "%#x" % excluded.raw_repr(),
            "keys": keys, "python_dispatcher": python_dispatcher, "grad_mode": torch.is_grad_enabled(),
            "inference_mode": torch.is_inference_mode_enabled(), "functorch_depth": functorch_depth()}


views, lock, all_there, forever = [], threading.Lock(), threading.Barrier(3), threading.Event()


def stop_here(role, python_dispatcher=False):
    with lock:
        views.append(own_view(role, python_dispatcher))
    all_there.wait()
    if role == "main":
        with open(sys.argv[1], "w") as out:
            json.dump(views, out)
        print("ready", flush=True)
    forever.wait()


def inference():
    with torch.inference_mode():
        stop_here("inference")


def no_grad():
    with torch.no_grad(), OtherMode():
        stop_here("no_grad")


def f(x):
    with MyMode(), FakeTensorMode(), OtherMode(), enable_python_dispatcher():
        stop_here("main", python_dispatcher=True)
    return x.sum()


for target in (inference, no_grad):
    threading.Thread(target=target, daemon=True).start()
torch.func.vmap(torch.func.grad(f))(torch.ones(2, 3))
