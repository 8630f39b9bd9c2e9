"""keyset_input_test.py's PyTorch process: objects that are no tensors and tensors of three Python
types, and what the process says of each, then it waits inside inference_mode.

Run with /usr/bin/python3 (Debian's python3-torch). Writes to ORACLE_FILE one line per object:
"object NAME ADDR TYPE" (hex(id(o)) and type(o).__name__ of a list, a dict, an nn.Module and a
storage), "memory NAME ADDR" (a tensor's data_ptr(): no object at all), "tensor NAME ADDR KEYS"
(torch._C._dispatch_keys of a tensor, an nn.Parameter and a subclass instance), and, inside
inference_mode, "excluded REPR" and "excluded-functionality AutogradFunctionality BOOL"
(_dispatch_tls_local_exclude_set() and whether it holds AutogradFunctionality, which its repr
never shows). Prints "ready" and waits inside the guard.
"""
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
        out.write("object %s %s %s\n" % (name, hex(id(o)), type(o).__name__))
    out.write("memory data_ptr %s\n" % hex(plain.data_ptr()))
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
