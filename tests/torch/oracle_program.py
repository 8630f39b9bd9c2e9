"""A real-PyTorch process for DispatchScope's tests, and its own account of its dispatcher.

Run with /usr/bin/python3 (Debian's python3-torch). It registers a custom operator (CPU and Meta
kernels in Python), a fallthrough backend fallback for PrivateUse1, runs mm and add on tensors
that require grad, holds an exclude guard, then writes what torch._C says about every operator,
a few tensors and the thread's TLS sets to ORACLE_FILE, prints "ready" and waits. The tests read
the same things from memory and compare: the process is the oracle.
"""
import ctypes
import sys
import time

import torch

out_path = sys.argv[1]

lib = torch.library.Library("dscope_test", "DEF")
lib.define("scale(Tensor x, float factor=2.0) -> Tensor")
lib.impl("scale", lambda x, factor=2.0: x * factor, "CPU")
lib.impl("scale", lambda x, factor=2.0: torch.empty_like(x), "Meta")
fallback = torch._C._dispatch_library("IMPL", "_", "PrivateUse1", "oracle_program.py", 24)
fallback.fallback_fallthrough()

a = torch.randn(3, 3, requires_grad=True)
b = torch.randn(3, 3, requires_grad=True)
product = torch.mm(a, b)
total = torch.add(a, b)
plain = torch.ones(2)
meta = torch.empty(2, 2, device="meta")
scaled = torch.ops.dscope_test.scale(plain)

guard = torch._C.ExcludeDispatchKeyGuard(torch._C.DispatchKeySet(torch._C.DispatchKey.AutogradCPU))

capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
capsule_pointer.restype = ctypes.c_void_p
capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]

with open(out_path, "w") as out:
    for name, t in [("a", a), ("product", product), ("plain", plain), ("meta", meta), ("scaled", scaled)]:
        impl = capsule_pointer(torch._C._tensor_impl_raw_handle(t), None)
        out.write("tensor %s id=%s impl=%s %s\n" % (name, hex(id(t)), hex(impl), torch._C._dispatch_keys(t)))
    out.write("tls included %s\n" % torch._C._dispatch_tls_local_include_set())
    out.write("tls excluded %s\n" % torch._C._dispatch_tls_local_exclude_set())
    ops = sorted(torch._C._dispatch_get_registrations_for_dispatch_key(""))
    out.write("operators %d\n" % len(ops))
    for op in ops:
        out.write("== registered %s\n%s" % (op, torch._C._dispatch_dump(op)))
        out.write("== computed %s\n%s" % (op, torch._C._dispatch_dump_table(op)))

print("ready", flush=True)
while True:
    time.sleep(60)
