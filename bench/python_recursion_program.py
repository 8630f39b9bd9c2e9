"""A PyTorch process whose Python kernel recurses through the dispatcher, then crashes at the bottom
(bench/python_frames.py: the core of `dispatch-trace` with Python frames).

    python3 python_recursion_program.py [DEPTH]      # default 200

Defines the operator x::op(Tensor self, int depth) in a torch.library Library("x", "DEF") and
implements it for CPU with a Python function that calls torch.ops.x.op(self, depth - 1) again: each
level is a dispatcher call whose kernel is Python (a native _PyEval_EvalFrameDefault frame running
op_cpu under the dispatcher's frames). At depth 0 it prints "bottom" and sends itself SIGSEGV: the
kernel writes its core (ulimit -c, core_pattern) with DEPTH dispatches on the main thread's stack.
Works with torch 1.13 (Debian 12's) and 2.x."""
import os
import signal
import sys

import torch

DEPTH = int(sys.argv[1]) if len(sys.argv) > 1 else 200

lib = torch.library.Library("x", "DEF")
lib.define("op(Tensor self, int depth) -> Tensor")


def op_cpu(self, depth):
    if depth <= 0:
        print("bottom", flush=True)
        os.kill(os.getpid(), signal.SIGSEGV)
    return torch.ops.x.op(self, depth - 1)


lib.impl("op", op_cpu, "CPU")
print("torch %s, depth %d" % (torch.__version__, DEPTH), flush=True)
torch.ops.x.op(torch.ones(2), DEPTH)
