"""keyset_input_test.py's PyTorch process: objects that are no tensors and tensors of three Python
types, and what the process says of each, then it waits inside inference_mode.

Run with /usr/bin/python3 (Debian's python3-torch). Writes to ORACLE_FILE one line per object:
"object NAME ADDR TYPE MODULE.TYPE" (hex(id(o)) and the type's name, bare and with its module, of
a list, a dict, an nn.Module and a storage), "memory NAME ADDR" (a tensor's data_ptr(): no object at all), "tensor NAME ADDR KEYS"
(torch._C._dispatch_keys of a tensor, an nn.Parameter and a subclass instance), and, inside
inference_mode, "excluded REPR" and "excluded-functionality AutogradFunctionality BOOL"
(_dispatch_tls_local_exclude_set() and whether it holds AutogradFunctionality, which its repr
never shows). With KEY_SET_OFFSET (the profile's TensorImpl_key_set), also "raw NAME RAW KEYS": a
CPU tensor's key set word as its TensorImpl holds it, read by ctypes, and its _dispatch_keys.
Prints "ready" and waits inside the guard.
"""
import ctypes
import sys
import time

import torch


class Subclass(torch.Tensor):
    pass


plain = torch.ones(2, 3)
objects = {"list": [1, 2, 3], "dict": {"a": 1}, "module": torch.nn.Linear(2, 2), "storage": plain.storage()}
tensors = {"plain": plain, "parameter": torch.nn.Parameter(torch.ones(2)), "subclass": torch.ones(2).as_subclass(Subclass)}

with open(sys.argv[1], "w") as out:
    for name, o in objects.items():
        kind = type(o)
        out.write("object %s %s %s %s.%s\n" % (name, hex(id(o)), kind.__name__, kind.__module__, kind.__qualname__))
    out.write("memory data_ptr %s\n" % hex(plain.data_ptr()))
    if len(sys.argv) > 2:
        capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
        capsule_pointer.restype, capsule_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        impl = capsule_pointer(torch._C._tensor_impl_raw_handle(plain), None)
        raw = ctypes.c_uint64.from_address(impl + int(sys.argv[2])).value
        out.write("raw plain %s %s\n" % (hex(raw), torch._C._dispatch_keys(plain)))
    for name, t in tensors.items():
        out.write("tensor %s %s %s\n" % (name, hex(id(t)), torch._C._dispatch_keys(t)))
    with torch.inference_mode():
        excluded = torch._C._dispatch_tls_local_exclude_set()
        out.write("excluded %s\n" % excluded)
        out.write("excluded-functionality AutogradFunctionality %s\n" % excluded.has(torch._C.DispatchKey.AutogradFunctionality))

with torch.inference_mode():
    print("ready", flush=True)
    while True:
        time.sleep(60)
