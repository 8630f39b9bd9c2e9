"""A real-PyTorch process for DispatchScope's tests, and its own account of its dispatcher.

Run with /usr/bin/python3 (Debian's python3-torch: 1.13 on the host, 2.x inside a root made by
scripts/torch-roots.sh; the same source works on each). It registers a custom operator (CPU and
Meta kernels in Python), a fallthrough backend fallback for PrivateUse1, runs mm and add on
tensors that require grad, then, inside no_grad and CPU autocast and holding an exclude guard,
writes what torch._C says about every operator (its name, registrations and computed table), a
few tensors and the thread's TLS sets (with their raw words, on 2.x) to
ORACLE_FILE, prints "ready" and waits there. The tests read the same things from memory and
compare: the process is the oracle.
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

capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
capsule_pointer.restype = ctypes.c_void_p
capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def raw(keys):
    """The set's 64-bit word, where torch can say it (DispatchKeySet.raw_repr is 2.x only)."""
    return " raw=%#x" % keys.raw_repr() if hasattr(keys, "raw_repr") else ""


def write_oracle(out):
    for name, t in [("a", a), ("product", product), ("plain", plain), ("meta", meta), ("scaled", scaled)]:
        impl = capsule_pointer(torch._C._tensor_impl_raw_handle(t), None)
        keys = torch._C._dispatch_keys(t)
        out.write("tensor %s id=%s impl=%s %s\n" % (name, hex(id(t)), hex(impl), keys))
        out.write("raw tensor %s%s\n" % (name, raw(keys)))
    included, excluded = torch._C._dispatch_tls_local_include_set(), torch._C._dispatch_tls_local_exclude_set()
    out.write("tls included %s\n" % included)
    out.write("tls excluded %s\n" % excluded)
    out.write("raw tls included%s\nraw tls excluded%s\n" % (raw(included), raw(excluded)))
    # Every operator's name as the dispatcher lists them (_dispatch_get_all_op_names is 2.x only;
    # 1.13's registrations for no key are every operator too).
    names = getattr(torch._C, "_dispatch_get_all_op_names", None)
    for name in names() if names else torch._C._dispatch_get_registrations_for_dispatch_key(""):
        out.write("op-name %s\n" % name)
    ops = sorted(torch._C._dispatch_get_registrations_for_dispatch_key(""))
    out.write("operators %d\n" % len(ops))
    for op in ops:
        out.write("== registered %s\n%s" % (op, torch._C._dispatch_dump(op)))
        out.write("== computed %s\n%s" % (op, torch._C._dispatch_dump_table(op)))


# The thread-local state the tests read is this thread's while it waits: grad mode off, CPU
# autocast on (it takes AutocastCPU out of the excluded set), AutogradCPU excluded by a guard.
with torch.no_grad(), torch.autocast("cpu"):
    guard = torch._C.ExcludeDispatchKeyGuard(torch._C.DispatchKeySet(torch._C.DispatchKey.AutogradCPU))
    with open(out_path, "w") as out:
        write_oracle(out)
    print("ready", flush=True)
    while True:
        time.sleep(60)
