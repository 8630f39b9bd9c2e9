#!/usr/bin/env python3
"""Core-corruption fuzz: DispatchScope's commands in GDB and in lldb-16 on damaged copies of the
crash tests' real kernel cores (issue 21).

  core_fuzz.py --gdb-script build/release/gdb/dscope-gdb.py --lldb-plugin build/release/lldb/libdscope_lldb.so
               --core SAMPLE=PROGRAM=CORE [--core ...] [--seed S] [--count N] [--only N] [--jobs J]

For each pristine core the script finds its targets WITHOUT DispatchScope: one plain GDB session
(no DispatchScope script) prints the address of `dscope_debug_descriptor` and the offsets of the
C++ members the operator list is made of (the release build has DWARF); everything else is read
from the core's own bytes through its ELF program headers (PT_LOAD: vaddr -> file offset), with
the C structs of runtime/include/dscope/DebugInterface.h hard-coded below. Every walk (record
blocks, operator list) is bounded by the count the descriptor / dispatcher states.

Mutations (seeded: the same --seed, --count and --core list, on the same core files, give the
same list; each prints as a record {kind, offset, bytes} on failure and replays with --only N,
which also prints both transcripts; --list prints the list. ctest keeps the cores in
build/<preset>/cores until the crash fixtures run again, which writes new cores with other
addresses, so replay before re-running them, or take the new list):
  * truncation of the core file at several fractions;
  * random byte flips and zeroed 4 KiB pages in the heap segment (the PT_LOAD holding the
    operator entries) and in the thread record blocks;
  * targeted fields of the dispatching thread's record block: magic, next, tid, state, tls,
    depth; the innermost record's op/kernel/keyset/slot/kind and a record in the middle;
    operator list `next_` links (null, self-loop, wild) and operator name bytes (0x80/0xff).

Each mutated core is opened in both debuggers (batch mode, one session per debugger with a fixed
command list per sample, output cut per command with compare_debuggers.py's marker helpers).
A mutation passes when, in each debugger:
  * the session ends within --timeout seconds (a hang fails), does not crash (no signal, no LLVM
    stack dump) and exits with the status it has on the pristine core;
  * no transcript holds a Python traceback, "Python Exception", "Exception ignored" or a GDB
    internal error;
  * every command's output equals that command's output on the pristine core in the same
    debugger, or contains a line starting with "dscope:" (the corruption was reported); for the
    few mutations that make another well-formed core (CONSISTENT below) this check is moot.
The expected text is always the pristine core's: never a value taken from a corrupted run."""

import argparse
import difflib
import json
import mmap
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import compare_debuggers as cmp
import session

# Command lists per sample: the commands that read the parts the mutations damage (records,
# TLS, operator list, names). Every one prints something on the pristine core.
COMMANDS = {
    "infinite_redispatch": ["dispatch-trace", "dispatch-trace --all", "dispatch-trace --json", "keyset --tls",
                            "op-table myops::my_add", "op-table --list my", "op-table --missing AutogradCPU"],
    "multithread": ["dispatch-trace", "dispatch-trace --all", "dispatch-trace --all --json", "keyset --tls",
                    "op-table myops::loop", "op-table --list loop", "op-table --missing Meta"],
    "tls_leak": ["keyset --tls", "dispatch-trace", "dispatch-trace --all", "dispatch-trace --json",
                 "op-table aten::mm", "op-table --list mm", "op-table --missing Meta"],
    "missing_kernel": ["dispatch-trace", "dispatch-trace --all", "dispatch-trace --json", "keyset --tls",
                       "op-table myops::only_cpu", "op-table --list only", "op-table --missing Meta"],
    "op_catalog": ["op-table --list", "op-table aten::linear", "op-table aten::mm", "op-table --list linear",
                   "op-table --missing Meta", "dispatch-trace", "keyset --tls"],
}

# Text no session may print, corrupt input or not.
TRACEBACK = ["Traceback (most recent call last)", "Python Exception", "Exception ignored", "Error occurred in Python"]
CRASH = ["PLEASE submit a bug report", "Stack dump:", "internal-error"]
DSCOPE_LINE = re.compile(r"^dscope:", re.MULTILINE)


def reported(out):
    """The output says something is wrong: a "dscope:" line, or in a JSON answer (one document) a
    "dscope: ..." string (its "warnings" array, a thread's "error")."""
    if DSCOPE_LINE.search(out):
        return True
    try:
        document = json.loads(out)
    except ValueError:
        return False
    return '"dscope: ' in json.dumps(document)

# runtime/include/dscope/DebugInterface.h, a static C layout (x86-64 / LP64). Its offsets are part
# of the layout hash the tools check, so a change there changes the runtime's hash, and the
# pristine-core sanity checks in locate() (magic, count, sizeof) fail loudly instead of fuzzing
# the wrong bytes.
DESC_DISPATCHER, DESC_THREAD_RECORDS, DESC_THREAD_RECORDS_COUNT = 24, 32, 40
BLOCK_MAGIC, BLOCK_NEXT, BLOCK_TID, BLOCK_STATE, BLOCK_TLS, BLOCK_DEPTH = 0, 8, 16, 20, 24, 32
BLOCK_FIRST, BLOCK_RING, BLOCK_SIZE = 56, 56 + 64 * 32, 56 + (64 + 256) * 32
RECORDS_FIRST, RECORDS_RING, RECORD_SIZE = 64, 256, 32
REC_OP, REC_KERNEL, REC_KEYSET, REC_SLOT, REC_KIND = 0, 8, 16, 24, 26
THREAD_RECORDS_MAGIC = 0x5344524F43455244
WILD = 0x00007F0DEAD0BEE0  # canonical, 16-aligned and (in these cores) unmapped: a plausible wild pointer
PAGE = 4096
U64 = 2 ** 64


class Setup(Exception):
    """The pristine input is not what the test needs: an error of the test, not a finding."""


# ------------------------------------------------------------------------------------ the core

class Core:
    """A pristine ELF core: its bytes (the file mapped read-only: a real PyTorch core is 650 MB,
    never copied into memory whole) and its PT_LOAD segments (vaddr, file offset, filesz)."""

    def __init__(self, path):
        with open(path, "rb") as f:
            self.data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        d = self.data
        if d[:4] != b"\x7fELF" or d[4] != 2 or struct.unpack_from("<H", d, 16)[0] != 4:
            raise Setup("%s is not a 64-bit ELF core file" % path)
        phoff, = struct.unpack_from("<Q", d, 32)
        phentsize, phnum = struct.unpack_from("<HH", d, 54)
        self.loads = []
        for i in range(phnum):
            p_type, _flags, p_offset, p_vaddr, _paddr, p_filesz = struct.unpack_from("<IIQQQQ", d, phoff + i * phentsize)
            if p_type == 1 and p_filesz:  # PT_LOAD with bytes in the file
                self.loads.append((p_vaddr, p_offset, p_filesz))

    def segment(self, vaddr):
        for seg in self.loads:
            if seg[0] <= vaddr < seg[0] + seg[2]:
                return seg
        raise Setup("address 0x%x is in no PT_LOAD segment of the core" % vaddr)

    def offset(self, vaddr, size=1):
        """File offset of vaddr; the size bytes must lie in one segment's file bytes."""
        start, off, filesz = self.segment(vaddr)
        if vaddr + size > start + filesz:
            raise Setup("0x%x+%d runs past its segment" % (vaddr, size))
        return off + vaddr - start

    def u64(self, vaddr):
        return struct.unpack_from("<Q", self.data, self.offset(vaddr, 8))[0]

    def u32(self, vaddr):
        return struct.unpack_from("<I", self.data, self.offset(vaddr, 4))[0]

    def cstring(self, vaddr, limit=256):
        off = self.offset(vaddr)
        end = self.data.find(b"\0", off, off + limit)
        if end < 0:
            raise Setup("no string at 0x%x" % vaddr)
        return self.data[off:end]


GDB_VALUE = re.compile(r"^\$\d+ = (0x[0-9a-f]+|\d+)$", re.MULTILINE)


def gdb_facts(program, core_path, timeout):
    """Values only DWARF knows, from a plain GDB (no DispatchScope): the descriptor's address (the
    executable's copy or the library's, whichever the program uses) and C++ member offsets."""
    exprs = ["(unsigned long)&dscope_debug_descriptor",
             "(unsigned long)&((dscope::Dispatcher*)0)->operators_head_",
             "(unsigned long)&((dscope::Dispatcher*)0)->num_operators_",
             "(unsigned long)&((dscope::impl::OperatorEntry*)0)->full_name_",
             "(unsigned long)&((dscope::impl::OperatorEntry*)0)->next_",
             "sizeof(struct dscope_thread_records)"]
    # The frame a core stops in may be C code (abort in glibc): parse the expressions as C++.
    argv = session.gdb_batch("-ex", "set language c++", *[x for e in exprs for x in ("-ex", "p/x " + e)]) + [program, core_path]
    run = session.run(argv, timeout)
    values = [int(v, 0) for v in GDB_VALUE.findall(run.text)]
    if run.timed_out or len(values) != len(exprs):
        raise Setup("plain gdb could not read the layout from %s:\n%s" % (core_path, run.text[-3000:]))
    names = ["descriptor", "head", "num", "full_name", "next", "block_size"]
    return dict(zip(names, values))


class Target:
    """One sample's pristine core and what the mutations aim at (file offsets in the core)."""

    def __init__(self, sample, program, core_path, timeout):
        self.sample, self.program, self.core_path = sample, program, core_path
        self.core = c = Core(core_path)
        f = gdb_facts(program, core_path, timeout)
        if f["block_size"] != BLOCK_SIZE:
            raise Setup("sizeof(dscope_thread_records) is %d, this test knows %d: update the offsets above"
                        % (f["block_size"], BLOCK_SIZE))
        desc = f["descriptor"]
        if c.data[c.offset(desc, 8):c.offset(desc, 8) + 8] != b"DSCOPEDD":
            raise Setup("no descriptor magic at 0x%x in %s" % (desc, core_path))
        # Record blocks: at most thread_records_count hops (DEBUG-INTERFACE.md section 3).
        self.blocks = []
        block, count = c.u64(desc + DESC_THREAD_RECORDS), c.u32(desc + DESC_THREAD_RECORDS_COUNT)
        while block and len(self.blocks) < count:
            if c.u64(block + BLOCK_MAGIC) != THREAD_RECORDS_MAGIC:
                raise Setup("block 0x%x has no magic in the pristine core" % block)
            self.blocks.append({"addr": block, "depth": c.u64(block + BLOCK_DEPTH), "state": c.u32(block + BLOCK_STATE)})
            block = c.u64(block + BLOCK_NEXT)
        # The block dispatch-trace is about: the deepest chain (the crashing thread in every sample
        # that dispatches; op_catalog registers its operators and aborts without a dispatch).
        self.main = max(self.blocks, key=lambda b: b["depth"]) if self.blocks else None
        # Operator list: at most num_operators_ hops.
        dispatcher = c.u64(desc + DESC_DISPATCHER)
        self.ops = []
        op, num = c.u64(dispatcher + f["head"]), c.u32(dispatcher + f["num"])
        while op and len(self.ops) < num:
            name_ptr = c.u64(op + f["full_name"])
            self.ops.append({"addr": op, "name_ptr": name_ptr, "name": c.cstring(name_ptr).decode()})
            op = c.u64(op + f["next"])
        if len(self.ops) != num:
            raise Setup("the operator list holds %d entries, num_operators_ says %d" % (len(self.ops), num))
        self.next_off = f["next"]
        self.heap = c.segment(self.ops[len(self.ops) // 2]["addr"])  # (vaddr, file offset, filesz)

    def op_named(self, name):
        return next(o for o in self.ops if o["name"] == name)

    def record(self, block, depth):
        """vaddr of the record of depth `depth` (DEBUG-INTERFACE.md section 3)."""
        total = block["depth"]
        if depth >= total - RECORDS_RING:
            return block["addr"] + BLOCK_RING + (depth % RECORDS_RING) * RECORD_SIZE
        return block["addr"] + BLOCK_FIRST + depth * RECORD_SIZE


# ------------------------------------------------------------------------------- mutations

# CONSISTENT: a mutation that turns the core into another well-formed core the runtime could
# have written, so no reader can tell it from the truth, and a different output without a
# "dscope:" line is right, not a failure: a depth of 0 (no dispatch active), depth-1 (one
# dispatch fewer), a dead block's tid (its owner has exited anyway) and, where the ring is full
# (infinite_redispatch: ~40 000 deep), depth+1 (the record at the old depth is a well-formed
# stale record of the same loop). These are still checked for hangs, crashes, tracebacks, the
# exit status and a complete session. Every other targeted mutation leaves a trace a bounded
# reader can check (a magic, an enum, a tid no thread of the core has, a pointer outside the
# operator list or the core, a count that disagrees with its list, a record whose slot or kernel
# disagrees with its key set and operator, a name that is no operator name). Random flips are
# strict too: a flip that happens to write another valid value (kind 1 -> 3) would be a false
# failure, so a new seed's failures are read before they are believed.
def write_sparse(path, data, block=65536):
    """Writes data with its all-zero blocks left as holes, as the kernel writes a core: a CI run
    keeps five presets' cores on a disk that can be small (a dense copy of a 140 MB core with
    50 MB of holes is 50 MB more)."""
    zero = bytes(block)
    with open(path, "wb") as f:
        for at in range(0, len(data), block):
            chunk = data[at:at + block]
            if chunk == zero[:len(chunk)]:
                f.seek(len(chunk), os.SEEK_CUR)
            else:
                f.write(chunk)
        f.truncate(len(data))


def mutation(target, kind, patches=(), truncate=None, consistent=False):
    """{sample, kind, truncate, patches: [[file offset, hex bytes]]}: all a replay needs."""
    m = {"sample": target.sample, "kind": kind, "truncate": truncate,
         "patches": [[off, data.hex()] for off, data in patches]}
    if consistent:
        m["consistent"] = True
    return m


def field(target, vaddr, value, size=8, signed=False):
    fmt = {8: "<q" if signed else "<Q", 4: "<i" if signed else "<I", 2: "<H", 1: "<B"}[size]
    return (target.core.offset(vaddr, size), struct.pack(fmt, value))


def flips(target, rng, start, length, n):
    """n random bytes in [start, start+length) of the file, each XORed with a nonzero byte."""
    offs = sorted(rng.sample(range(start, start + length), n))
    return [(o, bytes([target.core.data[o] ^ rng.randrange(1, 256)])) for o in offs]


def zero_page(target, vaddr):
    seg_vaddr, seg_off, filesz = target.core.segment(vaddr)
    page = max(seg_vaddr, vaddr & ~(PAGE - 1))
    size = min(PAGE, seg_vaddr + filesz - page)
    return [(seg_off + page - seg_vaddr, bytes(size))]


def targeted(t):
    """The fixed mutations of one target: every field issue 21 names, where this core has it."""
    m, b = [], t.main
    a, depth = (b["addr"], b["depth"]) if b else (None, None)
    if t.sample == "infinite_redispatch":
        # The block: magic, next, tid, state, tls, depth.
        m.append(mutation(t, "block magic = 0", [field(t, a + BLOCK_MAGIC, 0)]))
        m.append(mutation(t, "block next = wild", [field(t, a + BLOCK_NEXT, WILD)]))
        m.append(mutation(t, "block next = self", [field(t, a + BLOCK_NEXT, a)]))
        for v in (0, -1):
            m.append(mutation(t, "block tid = %d" % v, [field(t, a + BLOCK_TID, v, 4, True)]))
        for v in (0, 7):
            m.append(mutation(t, "block state = %d" % v, [field(t, a + BLOCK_STATE, v, 4)]))
        m.append(mutation(t, "block tls = null", [field(t, a + BLOCK_TLS, 0)]))
        for name, v in (("0", 0), ("2^64-1", U64 - 1), ("2^63", 2 ** 63), ("2^62", 2 ** 62),
                        ("depth+1", depth + 1), ("depth-1", depth - 1), ("2^64-37", U64 - 37)):
            m.append(mutation(t, "block depth = %s" % name, [field(t, a + BLOCK_DEPTH, v)],
                              consistent=name in ("0", "depth+1", "depth-1")))
        # The innermost record (depth-1) and one in the middle of the ring, and one first[] record.
        inner, middle = t.record(b, depth - 1), t.record(b, depth - 1 - RECORDS_RING // 2)
        m.append(mutation(t, "innermost record op = wild", [field(t, inner + REC_OP, WILD)]))
        m.append(mutation(t, "innermost record kernel = wild", [field(t, inner + REC_KERNEL, WILD)]))
        m.append(mutation(t, "innermost record keyset = 2^64-1", [field(t, inner + REC_KEYSET, U64 - 1)]))
        m.append(mutation(t, "innermost record slot = 0xffff", [field(t, inner + REC_SLOT, 0xFFFF, 2)]))
        m.append(mutation(t, "innermost record kind = 0", [field(t, inner + REC_KIND, 0, 1)]))
        m.append(mutation(t, "innermost record kind = 9", [field(t, inner + REC_KIND, 9, 1)]))
        m.append(mutation(t, "middle record op = null", [field(t, middle + REC_OP, 0)]))
        m.append(mutation(t, "middle record kind = 0", [field(t, middle + REC_KIND, 0, 1)]))
        m.append(mutation(t, "first[1] record op = wild", [field(t, t.record(b, 1) + REC_OP, WILD)]))
        # The operator the chain is about: its name and its list link.
        op = t.op_named("myops::my_add")
        m.append(mutation(t, "name byte 'myops::my_add'[2] = 0xff",
                          [(t.core.offset(op["name_ptr"] + 2), b"\xff")]))
        m.append(mutation(t, "op list next_ of myops::my_add = self", [field(t, op["addr"] + t.next_off, op["addr"])]))
        for frac in (0.1, 0.5, 0.9):
            m.append(mutation(t, "truncate at %d%%" % (frac * 100), truncate=int(len(t.core.data) * frac)))
        m.append(mutation(t, "zero page of the block header", zero_page(t, a)))
        m.append(mutation(t, "zero page of the innermost record", zero_page(t, inner)))
    elif t.sample == "multithread":
        # Several blocks: the overflowing one and a healthy one (dispatch-trace --all lists both).
        # A block in the middle of the registry list (not its head, not the overflowing thread's):
        # a walk that stops at its bad magic loses it and every block after it.
        others = [x for x in t.blocks[1:] if x is not b]
        other = others[len(others) // 2]
        o = other["addr"]
        m.append(mutation(t, "other block magic = 0", [field(t, o + BLOCK_MAGIC, 0)]))
        m.append(mutation(t, "head block next = null", [field(t, t.blocks[0]["addr"] + BLOCK_NEXT, 0)]))
        m.append(mutation(t, "head block next = self",
                          [field(t, t.blocks[0]["addr"] + BLOCK_NEXT, t.blocks[0]["addr"])]))
        # A tid no thread of the core has is a trace only in an alive block: a dead block keeps
        # the tid of an owner that has exited.
        alive = [x for x in t.blocks if x is not b and x["state"] == 1]
        victim = alive[0] if alive else other
        m.append(mutation(t, "%s block tid = random" % ("alive" if alive else "dead"),
                          [field(t, victim["addr"] + BLOCK_TID, 0x2A5F3, 4, True)], consistent=not alive))
        m.append(mutation(t, "block tid = other block's tid",
                          [field(t, a + BLOCK_TID, struct.unpack_from("<i", t.core.data, t.core.offset(o + BLOCK_TID))[0],
                                 4, True)]))
        m.append(mutation(t, "block tls = wild", [field(t, a + BLOCK_TLS, WILD)]))
        m.append(mutation(t, "other block depth = 2^64-1", [field(t, o + BLOCK_DEPTH, U64 - 1)]))
        m.append(mutation(t, "block depth = 2^64-200", [field(t, a + BLOCK_DEPTH, U64 - 200)]))
        inner = t.record(b, depth - 1)
        m.append(mutation(t, "innermost record op = op list entry + 8", [field(t, inner + REC_OP, t.ops[0]["addr"] + 8)]))
    elif t.sample == "tls_leak":
        m.append(mutation(t, "block tls = wild", [field(t, a + BLOCK_TLS, WILD)]))
        m.append(mutation(t, "block tls = null", [field(t, a + BLOCK_TLS, 0)]))
        m.append(mutation(t, "block depth = 2^62", [field(t, a + BLOCK_DEPTH, 2 ** 62)]))
        m.append(mutation(t, "op list next_ of aten::mm = null", [field(t, t.op_named("aten::mm")["addr"] + t.next_off, 0)]))
    elif t.sample == "missing_kernel":
        # A 2-deep chain: the ring is far from full, so the record at the old depth was never
        # written (kind 0), which the reader names (docs/USER-GUIDE.md 4.7): not CONSISTENT here.
        m.append(mutation(t, "block depth = depth+1", [field(t, a + BLOCK_DEPTH, depth + 1)]))
        m.append(mutation(t, "innermost record op = aten::mm's entry",
                          [field(t, t.record(b, depth - 1) + REC_OP, t.op_named("aten::mm")["addr"])]))
        m.append(mutation(t, "block tid = random", [field(t, a + BLOCK_TID, 0x1D2C3, 4, True)]))
    elif t.sample == "op_catalog":
        mid = t.ops[len(t.ops) // 2]
        nxt = mid["addr"] + t.next_off
        m.append(mutation(t, "op list next_ of entry %d = null" % (len(t.ops) // 2), [field(t, nxt, 0)]))
        m.append(mutation(t, "op list next_ of entry %d = self" % (len(t.ops) // 2), [field(t, nxt, mid["addr"])]))
        m.append(mutation(t, "op list next_ of entry %d = wild" % (len(t.ops) // 2), [field(t, nxt, WILD)]))
        m.append(mutation(t, "op list next_ of entry %d = entry 0 (a cycle)" % (len(t.ops) - 2),
                          [field(t, t.ops[-2]["addr"] + t.next_off, t.ops[0]["addr"])]))
        lin = t.op_named("aten::linear")
        m.append(mutation(t, "name byte 'aten::linear'[6] = 0x80", [(t.core.offset(lin["name_ptr"] + 6), b"\x80")]))
        third = t.ops[len(t.ops) // 3]
        m.append(mutation(t, "name byte %r[0] = 0xff" % third["name"], [(t.core.offset(third["name_ptr"]), b"\xff")]))
        m.append(mutation(t, "name of entry %d = empty string" % (len(t.ops) // 4),
                          [(t.core.offset(t.ops[len(t.ops) // 4]["name_ptr"]), b"\0")]))
        m.append(mutation(t, "truncate at 60%", truncate=int(len(t.core.data) * 0.6)))
        m.append(mutation(t, "zero page of an operator entry", zero_page(t, t.ops[len(t.ops) * 2 // 3]["addr"])))
    return m


def random_mutation(t, rng):
    """One seeded random mutation: flips or a zeroed page in the heap or the record block."""
    choice = rng.randrange(4 if t.blocks else 2) * (1 if t.blocks else 2)  # heap choices only without a block
    b = rng.choice(t.blocks) if t.blocks else None
    if choice == 0:
        _vaddr, off, filesz = t.heap
        return mutation(t, "16 byte flips in the heap segment", flips(t, rng, off, filesz, 16))
    if choice == 1:
        start = t.core.offset(b["addr"], BLOCK_SIZE)
        return mutation(t, "8 byte flips in the record block at 0x%x" % b["addr"], flips(t, rng, start, BLOCK_SIZE, 8))
    if choice == 2:
        vaddr, _off, filesz = t.heap
        return mutation(t, "zero a 4 KiB page of the heap segment", zero_page(t, vaddr + rng.randrange(filesz)))
    return mutation(t, "zero a 4 KiB page of the record block at 0x%x" % b["addr"],
                    zero_page(t, b["addr"] + rng.randrange(BLOCK_SIZE)))


def mutations(targets, seed, count):
    """The seeded list: every target's fixed mutations, then random ones up to count (a count
    below the fixed list's length takes a seeded subset of it, in order)."""
    rng = random.Random(seed)
    fixed = [m for t in targets for m in targeted(t)]
    if count <= len(fixed):
        keep = sorted(rng.sample(range(len(fixed)), count))
        return [fixed[i] for i in keep]
    extra = [random_mutation(targets[i % len(targets)], rng) for i in range(count - len(fixed))]
    return fixed + extra


def describe(m):
    patches = m["patches"]
    shown = patches if len(patches) <= 4 else patches[:4] + [["...", "%d patches in all" % len(patches)]]
    brief = {"kind": m["kind"], "sample": m["sample"]}
    if m.get("consistent"):
        brief["consistent"] = True
    if m["truncate"] is not None:
        brief["truncate"] = m["truncate"]
    else:
        brief["offset/bytes"] = [[o if isinstance(o, str) else hex(o), d if len(d) <= 64 else d[:64] + "..."]
                                 for o, d in shown]
    return json.dumps(brief)


# ---------------------------------------------------------------------------------- sessions

class Args:
    """What compare_debuggers.build_steps reads: a core, nothing launched or attached."""
    launch = attach_after = break_at = up = exits = None


class Runner:
    def __init__(self, a):
        self.a = a
        self.nonce = "fuzz%d" % a.seed
        self.local = threading.local()
        self.workdir = tempfile.mkdtemp(prefix="core_fuzz.")
        self.lock = threading.Lock()
        self.next_worker = 0

    def worker_dir(self):
        """One directory (one core file, one LLDB command file) per pool thread, reused."""
        if not hasattr(self.local, "dir"):
            with self.lock:
                self.local.dir = os.path.join(self.workdir, "w%d" % self.next_worker)
                self.next_worker += 1
            os.mkdir(self.local.dir)
        return self.local.dir

    def session(self, name, wd, sample):
        if name == "gdb":
            return cmp.GdbSession(self.nonce, [], self.a.gdb_script)
        s = cmp.LldbSession(self.nonce, [], self.a.lldb_plugin, wd)
        s.argv.insert(1, "--no-lldbinit")
        return s

    def run(self, name, program, core, sample):
        """(result, {index: output} or None, elapsed) of one debugger session on core."""
        wd = self.worker_dir()
        commands = COMMANDS[sample]
        s = self.session(name, wd, sample)
        s.commands(cmp.build_steps(s, Args, commands))
        s.argv += s.target(program, core, None)
        env = dict(os.environ)
        env.setdefault("LLDB_DEBUGSERVER_PATH", "/usr/lib/llvm-16/bin/lldb-server")
        start = time.monotonic()
        result, _aborted = session.run_lldb_aware(s.argv, self.a.timeout, env)
        elapsed = time.monotonic() - start
        try:
            outputs = cmp.sections(s, result.text, commands)
        except cmp.Failure:
            outputs = None
        return result, outputs, elapsed

    def core_file(self, target, m):
        path = os.path.join(self.worker_dir(), "mutated.core")
        data = bytearray(target.core.data if m["truncate"] is None else target.core.data[:m["truncate"]])
        for off, hexbytes in m["patches"]:
            patch = bytes.fromhex(hexbytes)
            data[off:off + len(patch)] = patch
        write_sparse(path, data)
        return path


def check(name, result, outputs, pristine, commands, robust_only=False):
    """The failures of one session: [(command or None, class, detail)]. robust_only: a mutation
    that makes another well-formed core (see CONSISTENT): only hangs, crashes, tracebacks, the
    exit status and a session cut short count."""
    fails = []
    text = result.text
    if result.timed_out:
        fails.append((None, "hang", "did not finish within the timeout"))
    elif result.hung_after_crash or (result.returncode is not None and result.returncode < 0):
        fails.append((None, "crash", "died (exit %s)" % result.returncode))
    elif result.returncode != pristine["returncode"]:
        fails.append((None, "exit status", "exit %s, %s on the pristine core" % (result.returncode, pristine["returncode"])))
    for t in CRASH:
        if t in text:
            fails.append((None, "crash", "printed %r" % t))
    for t in TRACEBACK:
        if t in text:
            fails.append((None, "traceback", "printed %r" % t))
    if outputs is None:
        if not result.timed_out:
            fails.append((None, "ended early", "an output marker is missing: the session ended before its last command"))
        return fails
    if robust_only:
        return fails
    for i, command in enumerate(commands):
        out, want = outputs[i], pristine["outputs"][i]
        if out != want and not reported(out):
            fails.append((command, "differs, no dscope: line", diff(want, out)))
    return fails


def diff(want, got, limit=24):
    """The first lines of a unified diff pristine -> mutated, long lines (JSON) cut."""
    rows = list(difflib.unified_diff(want.splitlines(), got.splitlines(), "pristine", "mutated", n=1, lineterm=""))
    rows = [r if len(r) <= 240 else r[:240] + "..." for r in rows]
    if len(rows) > limit:
        rows = rows[:limit] + ["[... %d more diff lines]" % (len(rows) - limit)]
    return "\n".join(rows)


def excerpt(text, lines=30):
    rows = text.splitlines()
    if len(rows) > lines:
        rows = rows[:lines // 2] + ["[... %d lines ...]" % (len(rows) - lines)] + rows[-lines // 2:]
    return "\n".join("    | " + r for r in rows)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gdb-script", required=True)
    p.add_argument("--lldb-plugin", required=True)
    p.add_argument("--core", action="append", required=True, metavar="SAMPLE=PROGRAM=CORE",
                   help="a sample name (a key of COMMANDS), its program and its pristine kernel core")
    p.add_argument("--seed", type=int, default=21)
    p.add_argument("--count", type=int, default=60,
                   help="mutations in all (default 60: every fixed one, then seeded random flips and zeroed pages)")
    p.add_argument("--only", type=int, help="run mutation N of the list only, printing both transcripts")
    p.add_argument("--list", action="store_true", help="print the mutation list and exit")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--timeout", type=float, default=30.0, help="seconds for one debugger session")
    a = p.parse_args()

    start = time.monotonic()
    runner = Runner(a)
    try:
        targets = []
        for spec in a.core:
            sample, program, core = spec.split("=", 2)
            if sample not in COMMANDS:
                p.error("no command list for sample %r" % sample)
            targets.append(Target(sample, program, core, a.timeout))
        by_sample = {t.sample: t for t in targets}
        muts = mutations(targets, a.seed, a.count)
        if a.list:
            for i, m in enumerate(muts):
                print("%3d %s" % (i, describe(m)))
            return 0
        chosen = list(enumerate(muts))
        if a.only is not None:
            chosen = [chosen[a.only]]
        debuggers = ["gdb", "lldb-16"]

        # The pristine outputs: the expected text of every command (and the exit status).
        pristine = {}
        with ThreadPoolExecutor(a.jobs) as pool:
            jobs = {(t.sample, d): pool.submit(runner.run, d, t.program, t.core_path, t.sample)
                    for t in targets if any(m["sample"] == t.sample for _i, m in chosen) for d in debuggers}
            for (sample, d), job in jobs.items():
                result, outputs, elapsed = job.result()
                bad = [x for x in TRACEBACK + CRASH if x in result.text]
                if result.timed_out or outputs is None or bad or result.returncode != 0:
                    raise Setup("%s on the pristine %s core is not clean (%s):\n%s"
                                % (d, sample, bad or "exit %s" % result.returncode, result.text[-4000:]))
                for i, c in enumerate(COMMANDS[sample]):
                    if not outputs[i].strip():
                        raise Setup("%s printed nothing for %r on the pristine %s core" % (d, c, sample))
                pristine[sample, d] = {"returncode": result.returncode, "outputs": outputs}
                if a.only is not None:
                    print("pristine %s on %s: %.1f s" % (d, sample, elapsed))

        def one(item):
            i, m = item
            t = by_sample[m["sample"]]
            core = runner.core_file(t, m)
            report = []
            for d in debuggers:
                result, outputs, elapsed = runner.run(d, t.program, core, t.sample)
                report.append((d, result, outputs, elapsed,
                               check(d, result, outputs, pristine[t.sample, d], COMMANDS[t.sample],
                                     m.get("consistent", False))))
            return i, m, report

        failures = 0
        failed_mutations = []
        with ThreadPoolExecutor(a.jobs) as pool:
            for i, m, report in pool.map(one, chosen):
                bad = [(d, f) for d, _r, _o, _e, fs in report for f in fs]
                times = " ".join("%s %.1fs" % (d, e) for d, _r, _o, e, _f in report)
                print("%s mutation %d: %s  (%s)" % ("FAIL" if bad else "ok  ", i, describe(m), times))
                if bad:
                    failures += 1
                    failed_mutations.append(i)
                for d, cls_fail in bad:
                    command, cls, detail = cls_fail
                    print("  %s [%s] %s:" % (d, cls, repr(command) if command else "session"))
                    print(excerpt(detail) if command else "    " + detail)
                if a.only is not None:
                    for d, r, _o, e, _f in report:
                        print("---- %s transcript (%.1f s, exit %s) ----\n%s" % (d, e, r.returncode, r.text))
        print("core_fuzz: %d mutations x %d debuggers x %s commands: %d failures (%.0f s, seed %d)"
              % (len(chosen), len(debuggers), "/".join(sorted({str(len(COMMANDS[t.sample])) for t in targets})),
                 failures, time.monotonic() - start, a.seed))
        if failed_mutations:
            print("core_fuzz: failing mutations (replay one with --only N): %s"
                  % " ".join(map(str, failed_mutations)))
        return 1 if failures else 0
    except Setup as e:
        print("core_fuzz: SETUP ERROR: %s" % e)
        return 2
    finally:
        shutil.rmtree(runner.workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
