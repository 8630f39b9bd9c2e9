#!/usr/bin/env python3
"""Core-corruption fuzz on real PyTorch 1.13: DispatchScope's commands in `dscope core`, GDB and
lldb-16 on damaged copies of a libtorch program's kernel core (issue 33, item 7).

  torch_core_fuzz.py --gdb-script G --lldb-plugin L --dscope D --program libtorch_program
                     --profile P --workdir DIR [--seed S] [--count N] [--headline] [--only N] [--list] [--jobs J]

On one core: the four headline cases, then a seeded sample of the other mutations (--headline: the
headline cases alone).

Runs tests/torch/libtorch_program.cpp (as libtorch_core_test.py does) for a fresh kernel core, then
finds the targets WITHOUT DispatchScope: one plain GDB session (no DispatchScope script) prints the
address of the exported c10::Dispatcher::realSingleton(); everything else is read from the core's
own bytes through its ELF program headers, with the offsets of the build's layout profile (--profile,
the file the tools read too: a wrong offset there fails the pristine sanity checks below, loudly).
Walks are bounded by the counts the structures state.

Mutations (seeded; each prints as a record {kind, patches: [[file offset, hex bytes]]} and
replays with --only N, which prints every transcript; --list prints the list):
  * the four headline cases of issue 33 item 7 (--headline runs only these): aten::mm's CPU
    kernel-map key rewritten to CUDA's; dscope_cpp::twice's CPU functor's vtable pointer aimed at a
    list node (whose bytes read as a type_info whose name is raw pointer bytes); a kwarg_only byte
    of aten::mm's schema set to 2; a PT_LOAD header moved over the heap segment holding aten::mm;
  * kernel maps (keys invalid, duplicated, of another key; distances; slot counts; lookups;
    element counts; list links and sizes; the table pointer), vtable pointers (null, wild, into
    the heap, into the middle of a vtable), schema bytes (bools, the optional's flag, the alias
    kind, an argument name's length), a dispatch-table entry;
  * seeded random byte flips in a kernel-map table and in the heap segment.

Every mutated core is read by each front end (one batch session per debugger with the command
list below, output cut per command at markers; `dscope core` once per command). A mutation
passes when, in each front end:
  * every run ends within --timeout seconds (a hang fails), does not crash (no signal, no LLVM
    stack dump) and exits with the status it has on the pristine core (GDB, LLDB);
  * no output holds a Python traceback, "Python Exception" or a GDB internal error;
  * every command's output equals that command's output on the pristine core in the same front
    end (dscope's "note:" lines aside: a note such as "the core is corrupt: its memory segments
    overlap" goes with an answer that did not read the damaged part), or contains a line starting
    with "dscope:" (the corruption was reported).
The expected text is always the pristine core's: never a value taken from a corrupted run.
Exits 0 when every mutation passes, 1 naming the failures, 2 when the pristine core is not what
the test needs, 77 when the kernel pipes cores elsewhere."""

import argparse
import os
import pathlib
import random
import re
import shutil
import signal
import struct
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "e2e"))
import torch_oracle_test as oracle_test  # noqa: E402
import session  # noqa: E402
from core_fuzz import Core, Setup, TRACEBACK, CRASH, reported, diff, excerpt  # noqa: E402

# What the mutations damage: aten::mm's kernels and schema, dscope_cpp's kernels (one a
# compile-time function, one a runtime functor holding a lambda) and names; each prints something
# on the pristine core, and no "dscope:" line.
COMMANDS = ["op-table aten::mm", "op-table aten::mm --key CPU", "op-table dscope_cpp::twice",
            "op-table dscope_cpp::twice --key CPU", "op-table dscope_cpp::combine --key CPU"]
FRONT_ENDS = ["dscope", "gdb", "lldb-16"]
WILD = 0x00007F0DEAD0BEE0  # canonical, 16-aligned and unmapped in these cores
PAGE = 4096
PT_LOAD = 1


def read_profile(path):
    """The numeric entries of a layout profile ("name value" lines)."""
    values = {}
    for line in pathlib.Path(path).read_text().splitlines():
        parts = line.split()
        if len(parts) == 2:
            try:
                values[parts[0]] = int(parts[1], 0)
            except ValueError:
                pass
    return values


def make_core(program, workdir):
    """Runs libtorch_program in workdir with cores on; the core's path."""
    def unlimited_cores():
        import resource
        resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    # The kernel's default filter (anonymous and written private pages): file-backed pages the
    # tools read from the files, and a 75 MB core instead of 550 MB.
    with open("/proc/self/coredump_filter", "w") as f:
        f.write("0x33")
    run = subprocess.run([program, str(workdir / "oracle.txt")], cwd=workdir, preexec_fn=unlimited_cores,
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
    cores = sorted(workdir.glob("core*"))
    if run.returncode != -signal.SIGABRT or not cores:
        raise Setup("libtorch_program exited with %s (expected SIGABRT) and left %s:\n%s%s"
                    % (run.returncode, [c.name for c in cores], run.stdout, run.stderr))
    return cores[0]


GDB_VALUE = re.compile(r"^\$\d+ = (0x[0-9a-f]+)$", re.MULTILINE)


class Target:
    """The pristine core and what the mutations aim at, found from the profile and the core's bytes."""

    def __init__(self, program, core_path, profile, timeout):
        self.program, self.core_path = program, core_path
        self.core = c = Core(core_path)
        self.p = p = read_profile(profile)
        run = session.run(session.gdb_batch("-ex", "set debuginfod enabled off", "-ex",
                                            "p/x (unsigned long)&'c10::Dispatcher::realSingleton()'",
                                            program, str(core_path)), timeout)
        found = GDB_VALUE.findall(run.text)
        if run.timed_out or len(found) != 1:
            raise Setup("plain gdb did not print realSingleton's address:\n%s" % run.text[-3000:])
        dispatcher = int(found[0], 16) + p["Dispatcher_from_realSingleton"]
        head = dispatcher + p["Dispatcher_operators"]
        count = c.u64(head + p["StdList_size"])
        self.ops = {}
        node = c.u64(head)
        for _ in range(count):
            entry = node + p["StdListNode_data"] + p["OperatorDef_op"]
            name = self.string(entry + p["OperatorEntry_name"] + p["OperatorName_name"])
            overload = self.string(entry + p["OperatorEntry_name"] + p["OperatorName_overload_name"])
            self.ops[name + ("." + overload if overload else "")] = entry
            node = c.u64(node)
        if node != head or len(self.ops) != count:
            raise Setup("the operator list of %d does not end at its head after %d nodes" % (count, len(self.ops)))
        for name in ("aten::mm", "dscope_cpp::twice", "dscope_cpp::combine"):
            if name not in self.ops:
                raise Setup("no operator %s in the core" % name)
        self.heap = c.segment(self.ops["aten::mm"])

    def string(self, addr):
        data, size = self.core.u64(addr), self.core.u64(addr + 8)
        if size > 4096:
            raise Setup("a std::string of %d bytes at 0x%x" % (size, addr))
        off = self.core.offset(data, max(size, 1))
        return self.core.data[off:off + size].decode()

    def kernel_map(self, op):
        """{map, entries, slots_minus_one, max_lookups, items: [{index, addr, key, node, functor}]}."""
        p, c = self.p, self.core
        m = self.ops[op] + p["OperatorEntry_kernels"]
        entries = c.u64(m + p["KernelMap_entries"])
        slots_minus_one = c.u64(m + p["KernelMap_num_slots_minus_one"])
        lookups = struct.unpack_from("<b", c.data, c.offset(m + p["KernelMap_max_lookups"]))[0]
        items = []
        for i in range(slots_minus_one + lookups):
            e = entries + i * p["sizeof_KernelMapEntry"]
            if struct.unpack_from("<b", c.data, c.offset(e))[0] < 0:
                continue
            key = struct.unpack_from("<H", c.data, c.offset(e + p["KernelMapEntry_key"], 2))[0]
            node = c.u64(e + p["KernelMapEntry_list"])
            kernel = node + p["StdListNode_data"]
            functor = c.u64(kernel + p["AnnotatedKernel_kernel"] + p["KernelFunction_functor"])
            items.append({"index": i, "addr": e, "key": key, "node": node, "functor": functor})
        return {"map": m, "entries": entries, "slots_minus_one": slots_minus_one, "items": items}

    def key_value(self, name):
        """A key's value in this build, from the profile's key table ("key VALUE NAME ...")."""
        for line in pathlib.Path(self.profile_path).read_text().splitlines():
            parts = line.split()
            if len(parts) >= 3 and parts[0] == "key" and parts[2] == name:
                return int(parts[1])
        raise Setup("the profile has no key %s" % name)

    def schema(self, op):
        p = self.p
        return self.ops[op] + p["OperatorEntry_schema"] + p["OptionalSchema_payload"] + p["AnnotatedSchema_schema"]

    def arguments(self, op):
        p, c = self.p, self.core
        vec = self.schema(op) + p["FunctionSchema_arguments"]
        begin, end = c.u64(vec + p["StdVector_begin"]), c.u64(vec + p["StdVector_end"])
        return list(range(begin, end, p["sizeof_Argument"]))


# ------------------------------------------------------------------------------- mutations

def mutation(kind, patches, expect=None):
    """{kind, patches: [[file offset, hex bytes]]}; expect: {front end: text} that front end's every
    output must hold (where the damage has one right explanation)."""
    m = {"kind": kind, "patches": [[off, data.hex()] for off, data in patches]}
    if expect:
        m["expect"] = expect
    return m


def field(t, vaddr, value, fmt="<Q"):
    return (t.core.offset(vaddr, struct.calcsize(fmt)), struct.pack(fmt, value))


def phdr_vaddr_patch(t, index, vaddr):
    """The p_vaddr of program header `index`, in the file's header table."""
    d = t.core.data
    phoff, = struct.unpack_from("<Q", d, 32)
    phentsize, = struct.unpack_from("<H", d, 54)
    return (phoff + index * phentsize + 16, struct.pack("<Q", vaddr))


def overlapping_load(t):
    """A PT_LOAD listed after the heap segment holding aten::mm (with 64 KiB or more of file
    bytes) moved over aten::mm's operator entry: a reader taking the last segment that holds an
    address reads aten::mm from another segment's bytes."""
    d = t.core.data
    phoff, = struct.unpack_from("<Q", d, 32)
    phentsize, phnum = struct.unpack_from("<HH", d, 54)
    heap_index, loads = None, []
    for i in range(phnum):
        p_type, _f, p_offset, p_vaddr, _pa, p_filesz = struct.unpack_from("<IIQQQQ", d, phoff + i * phentsize)
        if p_type != PT_LOAD:
            continue
        if (p_vaddr, p_offset, p_filesz) == t.heap:
            heap_index = i
        elif heap_index is not None and p_filesz >= 16 * PAGE:
            loads.append((i, p_filesz))
    if heap_index is None or not loads:
        raise Setup("no PT_LOAD of 64 KiB or more after the heap segment's header")
    index, size = loads[0]
    return phdr_vaddr_patch(t, index, max(t.heap[0], (t.ops["aten::mm"] - size // 2) & ~(PAGE - 1)))


def fixed_mutations(t):
    p = t.p
    mm, twice, combine = t.kernel_map("aten::mm"), t.kernel_map("dscope_cpp::twice"), t.kernel_map("dscope_cpp::combine")
    cpu, cuda, autograd_cpu = t.key_value("CPU"), t.key_value("CUDA"), t.key_value("AutogradCPU")
    by_key = lambda km, k: next(i for i in km["items"] if i["key"] == k)  # noqa: E731
    mm_cpu, twice_cpu, combine_cpu = by_key(mm, cpu), by_key(twice, cpu), by_key(combine, cpu)
    key_at = lambda item: item["addr"] + p["KernelMapEntry_key"]  # noqa: E731
    args = t.arguments("aten::mm")
    vptr = t.core.u64(twice_cpu["functor"])
    headline = [
        mutation("aten::mm kernel-map key CPU -> CUDA", [field(t, key_at(mm_cpu), cuda, "<H")]),
        mutation("dscope_cpp::twice CPU functor vptr -> its kernel list node + 8 (a type name of pointer bytes)",
                 [field(t, twice_cpu["functor"], twice_cpu["node"] + 8)]),
        mutation("aten::mm schema argument 0 kwarg_only = 2", [field(t, args[0] + p["Argument_kwarg_only"], 2, "<B")]),
        # dscope reads the core's segments itself: it must say they overlap (GDB and LLDB read
        # the first segment holding an address, the heap here, and answer as on the pristine core).
        mutation("a PT_LOAD moved over aten::mm's operator entry", [overlapping_load(t)],
                 {"dscope": "the core is corrupt: its memory segments (PT_LOAD) overlap"}),
    ]
    others = [m for m in mm["items"] if m is not mm_cpu]
    schema = t.schema("aten::mm")
    rest = [
        mutation("aten::mm kernel-map key CPU -> 999", [field(t, key_at(mm_cpu), 999, "<H")]),
        mutation("aten::mm kernel-map key CPU -> 0", [field(t, key_at(mm_cpu), 0, "<H")]),
        mutation("aten::mm kernel-map key CPU -> AutogradCPU", [field(t, key_at(mm_cpu), autograd_cpu, "<H")]),
        mutation("aten::mm kernel-map key CPU -> the next entry's key",
                 [field(t, key_at(mm_cpu), others[0]["key"], "<H")]),
        mutation("aten::mm kernel-map keys of two entries swapped",
                 [field(t, key_at(mm_cpu), others[0]["key"], "<H"), field(t, key_at(others[0]), cpu, "<H")]),
        mutation("aten::mm kernel-map CPU distance -> 1", [field(t, mm_cpu["addr"], 1, "<b")]),
        mutation("aten::mm kernel-map CPU distance -> -1 (empty)", [field(t, mm_cpu["addr"], -1, "<b")]),
        mutation("aten::mm kernel-map num_elements + 1",
                 [field(t, mm["map"] + p["KernelMap_num_elements"], len(mm["items"]) + 1)]),
        mutation("aten::mm kernel-map slots_minus_one -> 2*slots-1",
                 [field(t, mm["map"] + p["KernelMap_num_slots_minus_one"], 2 * mm["slots_minus_one"] + 1)]),
        mutation("aten::mm kernel-map slots_minus_one -> 2^40", [field(t, mm["map"] + p["KernelMap_num_slots_minus_one"], 2 ** 40)]),
        mutation("aten::mm kernel-map max_lookups -> 100", [field(t, mm["map"] + p["KernelMap_max_lookups"], 100, "<b")]),
        mutation("aten::mm kernel-map entries -> null", [field(t, mm["map"] + p["KernelMap_entries"], 0)]),
        mutation("aten::mm kernel-map entries -> wild", [field(t, mm["map"] + p["KernelMap_entries"], WILD)]),
        mutation("aten::mm kernel-map entries -> entries + one entry",
                 [field(t, mm["map"] + p["KernelMap_entries"], mm["entries"] + p["sizeof_KernelMapEntry"])]),
        mutation("aten::mm CPU kernel list next -> the list head (empty)",
                 [field(t, mm_cpu["addr"] + p["KernelMapEntry_list"], mm_cpu["addr"] + p["KernelMapEntry_list"])]),
        mutation("aten::mm CPU kernel list size -> 2", [field(t, mm_cpu["addr"] + p["KernelMapEntry_list"] + p["StdList_size"], 2)]),
        mutation("aten::mm dispatch table CPU entry unboxed -> AutogradCPU's",
                 [field(t, t.ops["aten::mm"] + p["OperatorEntry_dispatchTable"] + 1 * p["sizeof_KernelFunction"]
                        + p["KernelFunction_unboxed"],
                        t.core.u64(t.ops["aten::mm"] + p["OperatorEntry_dispatchTable"] + 76 * p["sizeof_KernelFunction"]
                                   + p["KernelFunction_unboxed"]))]),
        mutation("dscope_cpp::twice CPU functor vptr -> null", [field(t, twice_cpu["functor"], 0)]),
        mutation("dscope_cpp::twice CPU functor vptr -> wild", [field(t, twice_cpu["functor"], WILD)]),
        mutation("dscope_cpp::twice CPU functor vptr -> the functor itself", [field(t, twice_cpu["functor"], twice_cpu["functor"])]),
        mutation("dscope_cpp::twice CPU functor vptr -> vptr + 8", [field(t, twice_cpu["functor"], vptr + 8)]),
        mutation("dscope_cpp::twice CPU functor vptr -> vptr - 8", [field(t, twice_cpu["functor"], vptr - 8)]),
        mutation("dscope_cpp::combine CPU functor vptr -> its kernel list node + 8",
                 [field(t, combine_cpu["functor"], combine_cpu["node"] + 8)]),
        mutation("aten::mm schema argument 1 kwarg_only = 0xff", [field(t, args[1] + p["Argument_kwarg_only"], 0xFF, "<B")]),
        mutation("aten::mm schema is_vararg = 2", [field(t, schema + p["FunctionSchema_is_vararg"], 2, "<B")]),
        mutation("aten::mm schema is_varret = 0x80", [field(t, schema + p["FunctionSchema_is_varret"], 0x80, "<B")]),
        mutation("aten::mm schema optional flag = 2",
                 [field(t, t.ops["aten::mm"] + p["OperatorEntry_schema"], 2, "<B")]),
        mutation("aten::mm schema alias kind engaged = 3",
                 [field(t, schema + p["FunctionSchema_alias_kind"] + p["OptionalAliasKind_engaged"], 3, "<B")]),
        mutation("aten::mm schema argument 0 name length = 2^40",
                 [field(t, args[0] + p["Argument_name"] + 8, 2 ** 40)]),
        mutation("aten::mm schema arguments end = begin + 1", [field(t, schema + p["FunctionSchema_arguments"] + p["StdVector_end"],
                                                                        args[0] + 1)]),
    ]
    return headline, rest


def random_mutation(t, rng, maps):
    """Seeded byte flips: in a kernel map's entry table (every byte is a distance, key, list link,
    list size or padding), or anywhere in the heap segment holding aten::mm."""
    if rng.randrange(2) == 0:
        op = rng.choice(sorted(maps))
        km = maps[op]
        size = (km["slots_minus_one"] + 1) * t.p["sizeof_KernelMapEntry"]
        start = t.core.offset(km["entries"], size)
        offs = sorted(rng.sample(range(start, start + size), 2))
        return mutation("2 byte flips in the kernel-map table of %s" % op,
                        [(o, bytes([t.core.data[o] ^ rng.randrange(1, 256)])) for o in offs])
    _vaddr, off, filesz = t.heap
    offs = sorted(rng.sample(range(off, off + filesz), 16))
    return mutation("16 byte flips in the heap segment", [(o, bytes([t.core.data[o] ^ rng.randrange(1, 256)])) for o in offs])


def mutations(t, seed, count, headline_only):
    """The headline mutations, then (unless headline_only) a seeded sample of the others (three
    quarters of count) and random flips up to count."""
    rng = random.Random(seed)
    headline, rest = fixed_mutations(t)
    if headline_only:
        return headline
    maps = {op: t.kernel_map(op) for op in ("aten::mm", "dscope_cpp::twice", "dscope_cpp::combine")}
    n_rest = min(len(rest), count - count // 4)
    chosen = [rest[i] for i in sorted(rng.sample(range(len(rest)), n_rest))]
    return headline + chosen + [random_mutation(t, rng, maps) for _ in range(max(0, count - n_rest))]


def describe(m):
    shown = m["patches"][:4] + ([["...", "%d patches" % len(m["patches"])]] if len(m["patches"]) > 4 else [])
    return "%s %s" % (m["kind"], [[o if isinstance(o, str) else hex(o), d] for o, d in shown])


# ---------------------------------------------------------------------------------- sessions

class Result:
    def __init__(self, returncode=0, timed_out=False, text=""):
        self.returncode, self.timed_out, self.text = returncode, timed_out, text


class Runner:
    def __init__(self, a, target):
        self.a, self.t = a, target
        self.local = threading.local()
        self.lock = threading.Lock()
        self.workers = 0

    def worker_dir(self):
        """One directory per pool thread (its command files, its core), reused."""
        if not hasattr(self.local, "dir"):
            with self.lock:
                self.local.dir = self.a.workdir / ("w%d" % self.workers)
                self.workers += 1
            self.local.dir.mkdir()
        return self.local.dir

    def worker_core(self):
        """One copy of the pristine core per pool thread (sparse, as the kernel wrote it): each
        mutation is patched in and undone after, so no core is copied per mutation."""
        if not hasattr(self.local, "core"):
            self.local.core = self.worker_dir() / "mutated.core"
            subprocess.run(["cp", "--sparse=always", str(self.t.core_path), str(self.local.core)], check=True)
        return self.local.core

    def patch(self, path, m, undo=False):
        with open(path, "r+b") as f:
            for off, hexbytes in m["patches"]:
                data = bytes.fromhex(hexbytes)
                f.seek(off)
                f.write(self.t.core.data[off:off + len(data)] if undo else data)

    def session(self, front_end, core):
        """{command: output} (None when a marker is missing) and a Result."""
        if front_end == "dscope":
            outputs, text, worst = {}, "", Result()
            for c in COMMANDS:
                r = session.run([self.a.dscope, "core", str(core), self.t.program] + c.split(), self.a.timeout)
                outputs[c] = r.text
                text += r.text
                if r.timed_out or (r.returncode is not None and r.returncode < 0):
                    worst = Result(r.returncode, r.timed_out)
            worst.text = text
            worst.returncode = 0 if not worst.timed_out and (worst.returncode or 0) >= 0 else worst.returncode
            return outputs, worst
        debugger = "gdb" if front_end == "gdb" else "lldb"
        lines = []
        for i, c in enumerate(COMMANDS):
            lines += [oracle_test.marker(debugger, "c%d" % i), c]
        lines.append(oracle_test.marker(debugger, "end"))
        commands = self.worker_dir() / ("commands." + debugger)
        commands.write_text("\n".join(lines) + "\n")
        plugin = self.a.gdb_script if debugger == "gdb" else self.a.lldb_plugin
        argv = oracle_test.debugger_argv(debugger, plugin, self.t.program, core=core, commands=commands)
        env = dict(os.environ)
        env.setdefault("LLDB_DEBUGSERVER_PATH", "/usr/lib/llvm-16/bin/lldb-server")
        r, _first = session.run_lldb_aware(argv, self.a.timeout, env)
        found = oracle_test.sections(r.text)
        if "end" not in found:
            return None, r
        return {c: found.get("c%d" % i, "") for i, c in enumerate(COMMANDS)}, r


def without_notes(text):
    """dscope's output without its "note:" lines: a note says what the target lacks or has wrong
    (a truncated core, overlapping segments, whose bytes are then not read), beside an answer
    that did not need those bytes; an answer that did fails with a "dscope:" line."""
    return "".join(line for line in text.splitlines(keepends=True) if not line.startswith("note: "))


def check(result, outputs, pristine, expect=None):
    fails = []
    if result.timed_out:
        fails.append((None, "hang", "did not finish within the timeout"))
    elif getattr(result, "hung_after_crash", False) or (result.returncode is not None and result.returncode < 0):
        fails.append((None, "crash", "died (exit %s)" % result.returncode))
    elif result.returncode != pristine["returncode"]:
        fails.append((None, "exit status", "exit %s, %s on the pristine core" % (result.returncode, pristine["returncode"])))
    for t in CRASH + TRACEBACK:
        if t in result.text:
            fails.append((None, "crash or traceback", "printed %r" % t))
    if outputs is None:
        if not result.timed_out:
            fails.append((None, "ended early", "an output marker is missing"))
        return fails
    for c in COMMANDS:
        if without_notes(outputs[c]) != pristine["outputs"][c] and not reported(outputs[c]):
            fails.append((c, "differs, no dscope: line", diff(pristine["outputs"][c], outputs[c])))
        if expect and expect not in outputs[c]:
            fails.append((c, "no %r" % expect, excerpt(outputs[c])))
    return fails


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gdb-script", required=True)
    p.add_argument("--lldb-plugin", required=True)
    p.add_argument("--dscope", required=True)
    p.add_argument("--program", required=True)
    p.add_argument("--profile", required=True, help="the layout profile of Debian's libtorch 1.13 (its offsets)")
    p.add_argument("--workdir", type=pathlib.Path, required=True)
    p.add_argument("--seed", type=int, default=33)
    p.add_argument("--count", type=int, default=6, help="mutations besides the headline ones")
    p.add_argument("--headline", action="store_true", help="only the four headline mutations")
    p.add_argument("--only", type=int, help="run mutation N of the list only, printing every transcript")
    p.add_argument("--list", action="store_true")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--timeout", type=float, default=60.0, help="seconds for one session or dscope run")
    a = p.parse_args()
    pattern = pathlib.Path("/proc/sys/kernel/core_pattern").read_text().strip()
    if pattern.startswith("|"):
        print("SKIP: kernel.core_pattern pipes cores to a program (%s)" % pattern)
        return 77
    start = time.monotonic()
    shutil.rmtree(a.workdir, ignore_errors=True)
    a.workdir.mkdir(parents=True)
    a.program = os.path.realpath(a.program)
    try:
        core = make_core(a.program, a.workdir)
        t = Target(a.program, core, a.profile, a.timeout)
        t.profile_path = a.profile
        muts = mutations(t, a.seed, a.count, a.headline)
        if a.list:
            for i, m in enumerate(muts):
                print("%3d %s" % (i, describe(m)))
            return 0
        chosen = list(enumerate(muts))
        if a.only is not None:
            chosen = [chosen[a.only]]
        runner = Runner(a, t)

        pristine = {}
        with ThreadPoolExecutor(a.jobs) as pool:
            jobs = {fe: pool.submit(runner.session, fe, core) for fe in FRONT_ENDS}
            for fe, job in jobs.items():
                outputs, r = job.result()
                bad = [x for x in TRACEBACK + CRASH if x in r.text]
                if r.timed_out or outputs is None or bad or r.returncode != 0:
                    raise Setup("%s on the pristine core is not clean (%s):\n%s" % (fe, bad or "exit %s" % r.returncode, r.text[-4000:]))
                for c in COMMANDS:
                    if not outputs[c].strip() or reported(outputs[c]):
                        raise Setup("%s printed nothing, or a dscope: line, for %r on the pristine core:\n%s" % (fe, c, outputs[c]))
                pristine[fe] = {"returncode": r.returncode, "outputs": outputs}

        def one(item):
            i, m = item
            path = runner.worker_core()
            runner.patch(path, m)
            try:
                report = []
                for fe in FRONT_ENDS:
                    started = time.monotonic()
                    outputs, r = runner.session(fe, path)
                    report.append((fe, r, time.monotonic() - started,
                                   check(r, outputs, pristine[fe], m.get("expect", {}).get(fe))))
            finally:
                runner.patch(path, m, undo=True)
            return i, m, report

        failed = []
        with ThreadPoolExecutor(a.jobs) as pool:
            for i, m, report in pool.map(one, chosen):
                bad = [(fe, f) for fe, _r, _e, fs in report for f in fs]
                times = " ".join("%s %.1fs" % (fe, e) for fe, _r, e, _f in report)
                print("%s mutation %d: %s  (%s)" % ("FAIL" if bad else "ok  ", i, describe(m), times))
                if bad:
                    failed.append(i)
                for fe, (command, cls, detail) in bad:
                    print("  %s [%s] %s:" % (fe, cls, repr(command) if command else "session"))
                    print(excerpt(detail) if command else "    " + detail)
                if a.only is not None:
                    for fe, r, e, _f in report:
                        print("---- %s transcript (%.1f s, exit %s) ----\n%s" % (fe, e, r.returncode, r.text))
        print("torch_core_fuzz: %d mutations x %d front ends x %d commands: %d failures (%.0f s, seed %d)"
              % (len(chosen), len(FRONT_ENDS), len(COMMANDS), len(failed), time.monotonic() - start, a.seed))
        if failed:
            print("torch_core_fuzz: failing mutations (replay one with --only N): %s" % " ".join(map(str, failed)))
        return 1 if failed else 0
    except Setup as e:
        print("torch_core_fuzz: SETUP ERROR: %s" % e)
        return 2
    finally:
        for core in a.workdir.glob("core*"):
            core.unlink()
        for w in a.workdir.glob("w*"):
            shutil.rmtree(w, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
