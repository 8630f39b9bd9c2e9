#!/usr/bin/env python3
"""Bad and ill-fitting layout profiles on a real PyTorch core (issue 33, items 1 and 2).

  profile_fuzz.py --dscope build/release/cli/dscope --gdb-script build/release/gdb/dscope-gdb.py
                  [--lldb-plugin build/release/lldb/libdscope_lldb.so] --workdir DIR
                  --profile profiles/<build-id>.profile [--headline] [--fuzz [--seed S] [--count N]]

A small /usr/bin/python3 program (Debian's python3-torch 1.13) makes a tensor that requires grad,
holds an exclude guard, prints what torch._C says about them and aten::mm, and waits; GDB writes
a gcore core of it. Every command then runs on that core with DSCOPE_PROFILE_PATH naming a
directory that holds one profile for its libtorch_cpu: the shipped one (pristine) or a damaged
copy. The pristine answers are checked against the program's torch._C first; they are the
expected text of every other run.

--headline: each headline case of the issue (key -5, a FIFO, /dev/zero, a profile cut short and
sealed again, swapped key names, TensorImpl_key_set off by 8, a zero set_default_excluded) in
dscope core, GDB and lldb-16: exactly one line, the `dscope:` line naming the profile and what is
wrong with it.

--fuzz: seeded mutations (numbers, names, truncation, duplicated lines, garbage bytes, special
files; a third of them absurd numbers sealed again), each run with two of the commands in turn in `dscope core` (--all-commands: all), and a
sample of them with every command in one GDB and one lldb-16 session.
Every run must end in time, not crash, print no traceback, and answer each command exactly as
with the pristine profile or with exactly one `dscope:` line naming the profile. Most mutations
keep the shipped digest line (so the digest refuses them); "sealed" ones are sealed again
(profile_text.py) and must be caught by the semantic checks behind the digest or by the checks
against the process. Only mutations that make a profile the checks are meant to refuse are
sealed: a sealed profile that moves an offset to another plausible place describes another build,
which no check can tell from this one without that build. --only N replays mutation N, --list
prints them."""

import argparse
import concurrent.futures
import os
import pathlib
import random
import shutil
import signal
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "e2e"))
sys.path.insert(0, str(HERE))
import session  # noqa: E402
from profile_text import sealed, unsealed  # noqa: E402
from torch_oracle_test import REJECT, debugger_argv, marker, sections  # noqa: E402

TORCH_PYTHON = "/usr/bin/python3"
PROGRAM = r'''
import ctypes, sys, time, torch
t = torch.randn(3, 3, requires_grad=True)
guard = torch._C.ExcludeDispatchKeyGuard(torch._C.DispatchKeySet(torch._C.DispatchKey.AutogradCPU))
get = ctypes.pythonapi.PyCapsule_GetPointer
get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
print("impl %s" % hex(get(torch._C._tensor_impl_raw_handle(t), None)))
print("keys %s" % torch._C._dispatch_keys(t))
print("tls included %s" % torch._C._dispatch_tls_local_include_set())
print("tls excluded %s" % torch._C._dispatch_tls_local_exclude_set())
print("== computed\n%s== registered\n%s== end" % (torch._C._dispatch_dump_table("aten::mm"), torch._C._dispatch_dump("aten::mm")))
print("ready", flush=True)
time.sleep(3600)
'''
CRASH = ["Fatal signal", "PLEASE submit a bug report", "Stack dump:", "Segmentation fault", "free(): ", "malloc(): ",
         "double free", "internal-error", "Aborted"] + REJECT
TIMEOUT = 60  # one command or debugger session; a hang fails


class Fixture:
    """The program's core, what its torch._C said, and the commands."""

    def __init__(self, workdir, profile):
        self.workdir = workdir
        self.profile = profile
        self.program = os.path.realpath(TORCH_PYTHON)
        session.keep_file_pages_in_cores()
        proc = subprocess.Popen([TORCH_PYTHON, "-c", PROGRAM], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        lines = []
        try:
            for line in proc.stdout:
                if line.strip() == "ready":
                    break
                lines.append(line)
            else:
                sys.exit("the torch program did not start:\n" + "".join(lines))
            self.core = workdir / "python.core"
            subprocess.run(session.gdb_batch("-ex", "set debuginfod enabled off", "-p", str(proc.pid), "-ex",
                                             "gcore " + str(self.core)), capture_output=True, timeout=300, check=True)
        finally:
            proc.kill()
            proc.wait()
        text = "".join(lines)
        facts = dict(l.split(" ", 1) for l in text.splitlines() if l.split(" ", 1)[0] in ("impl", "keys"))
        self.impl, self.keys = facts["impl"].strip(), facts["keys"].strip()
        self.tls = {w: l.split(" ", 2)[2] for l in text.splitlines() if l.startswith("tls ") for w in [l.split()[1]]}
        self.computed = text.split("== computed\n")[1].split("== registered\n")[0]
        self.registered = text.split("== registered\n")[1].split("== end")[0]
        self.commands = ["op-table aten::mm --computed", "op-table aten::mm --registered", "keyset " + self.impl,
                         "keyset --tls", "dispatch-summary", "op-table --list aten::mm"]

    def check_pristine(self, answers):
        """The pristine profile's answers against torch._C: the problems."""
        problems = []
        if answers["op-table aten::mm --computed"] != self.computed:
            problems.append("op-table aten::mm --computed differs from torch._C:\n%s" % answers["op-table aten::mm --computed"])
        if answers["op-table aten::mm --registered"] != self.registered:
            problems.append("op-table aten::mm --registered differs from torch._C:\n%s" % answers["op-table aten::mm --registered"])
        if answers["keyset " + self.impl].splitlines()[:1] != [self.keys]:
            problems.append("keyset %s: %r, torch says %r" % (self.impl, answers["keyset " + self.impl][:200], self.keys))
        for which, keys in self.tls.items():
            if "  %s: %s (raw " % (which, keys) not in answers["keyset --tls"]:
                problems.append("keyset --tls: no %s %s" % (which, keys))
        return problems

    def profile_dir(self, name):
        d = self.workdir / name
        if d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True)
        # The interpreter's profile beside it (CPython 3.11's, which Python frames need): the
        # directory holds what the process needs, the torch profile under test aside.
        for other in self.profile.parent.glob("*.profile"):
            if other.read_text().split("\n")[1:2] == ["runtime cpython"]:
                shutil.copy(other, d / other.name)
        return d, d / self.profile.name


def run_dscope(fx, directory, command):
    """(text, problem or None) of `dscope core CORE PROGRAM COMMAND` with profiles from directory."""
    env = dict(os.environ, DSCOPE_PROFILE_PATH=str(directory))
    r = session.run([ARGS.dscope, "core", str(fx.core), fx.program] + command.split(), TIMEOUT, env=env)
    if r.timed_out:
        return r.text, "hang (no answer in %d s)" % TIMEOUT
    if r.returncode is None or r.returncode < 0:
        return r.text, "crash (exit %s)" % r.returncode
    return r.text, None


def run_debugger(fx, debugger, plugin, steps):
    """One batch session of the debugger on the core running every step, a (label, profile
    directory, commands): DSCOPE_PROFILE_PATH is set in the debugger's own environment before each
    step's commands (the library looks its profile up at every command). Returns
    ({(label, command): section text}, problem or None, transcript)."""
    setenv = ("python import os; os.environ['DSCOPE_PROFILE_PATH'] = %r" if debugger == "gdb"
              else "script import os; os.environ['DSCOPE_PROFILE_PATH'] = %r")
    extra = []
    for label, directory, commands in steps:
        extra.append(setenv % str(directory))
        for j, c in enumerate(commands):
            extra += [marker(debugger, "%s/%d" % (label, j)), c]
    extra.append(marker(debugger, "end"))
    argv = debugger_argv(debugger, plugin, fx.program, core=fx.core, extra=extra)
    timeout = TIMEOUT + 10 * len(steps)
    r = session.run_lldb_aware(argv, timeout)[0] if debugger == "lldb" else session.run(argv, timeout)
    found = sections(r.text)
    answers = {(label, c): found.get("%s/%d" % (label, j)) for label, _d, commands in steps for j, c in enumerate(commands)}
    last = [k for k in found if k != "end"][-1:] or ["(none)"]
    if r.timed_out:
        return answers, "hang (the session did not end in %d s; last answer: %s)" % (timeout, last[0]), r.text
    if r.returncode is None or r.returncode < 0:
        return answers, "crash (exit %s; last answer: %s)" % (r.returncode, last[0]), r.text
    if "end" not in found:
        return answers, "the session ended before its last command (last answer: %s)" % last[0], r.text
    return answers, None, r.text


def crash_text(text):
    return [t for t in CRASH if t in text]


def one_line_about(text, profile_path):
    """Whether text is exactly one line, a `dscope:` line naming the profile."""
    lines = text.splitlines()
    return len(lines) == 1 and lines[0].startswith("dscope:") and str(profile_path) in lines[0]


# ------------------------------------------------------------------------------- mutations

def lines_of(text):
    return unsealed(text).splitlines(keepends=True)


def set_value(text, name, value):
    return "".join("%s %s\n" % (name, value) if l.split(" ", 1)[0] == name else l for l in lines_of(text))


def key_line(text, name):
    return next(l for l in lines_of(text) if l.startswith("key ") and l.split()[2] == name)


def swap_key_names(text, a, b):
    out = []
    for l in lines_of(text):
        w = l.split(" ")
        if l.startswith("key ") and w[2] in (a, b):
            w[2] = b if w[2] == a else a
            l = " ".join(w)
        out.append(l)
    return "".join(out)


def replace_line(text, old, new):
    return "".join(new if l == old else l for l in lines_of(text))


def old_digest(edited, pristine):
    """edited text ending with the pristine profile's digest line, which no longer matches it."""
    return edited + next(l for l in pristine.splitlines(keepends=True) if l.startswith("digest "))


def drop_from(text, line):
    """The text cut just before `line` (a profile that lost its end), digest line gone."""
    body = unsealed(text)
    return body[:body.index(line)]


def headline(pristine):
    """(name, kind, content, commands, what the one line must say): the issue's own cases.
    kind: 'text' (content written as the profile), 'fifo', 'devzero'."""
    cpu = key_line(pristine, "CPU")
    k = ["op-table aten::mm --computed", "keyset --tls"]
    return [
        ("key -5", "text", old_digest(replace_line(pristine, cpu, cpu.replace("key 43 ", "key -5 ")), pristine), k,
         "its digest does not match its contents (edited or damaged)"),
        ("key -5 sealed", "text", sealed(replace_line(pristine, cpu, cpu.replace("key 43 ", "key -5 "))), k,
         "has '-5', which is not a number"),
        ("fifo", "fifo", None, k, "it is a FIFO, not a regular file"),
        ("/dev/zero", "devzero", None, k, "it is a device, not a regular file"),
        ("cut before AutogradCPU", "text", drop_from(pristine, key_line(pristine, "AutogradCPU")), k,
         "it does not end with its digest line (cut short"),
        ("cut before AutogradCPU, sealed", "text", sealed(drop_from(pristine, key_line(pristine, "AutogradCPU"))), k,
         "(cut short, or of another schema)"),
        ("AutogradCPU's line gone, sealed", "text", sealed(replace_line(pristine, key_line(pristine, "AutogradCPU"), "")), k,
         "it lists 121 keys, count_dispatch_keys says 122 (cut short?)"),
        ("CPU and CUDA swapped, sealed", "text", sealed(swap_key_names(pristine, "CPU", "CUDA")), k,
         "is named CUDA, but its bits 0x4001 are backend CPUBit"),
        ("TensorImpl_key_set +8, sealed", "text", sealed(set_value(pristine, "TensorImpl_key_set", 192)), ["keyset IMPL"],
         "does not fit this process: the TensorImpl at IMPL holds key set"),
        ("set_default_excluded 0, sealed", "text", sealed(set_value(pristine, "set_default_excluded", "0x0")), k,
         "set_default_excluded 0x0 is not the Autocast keys'"),
        ("count_table_slots 0, sealed", "text", sealed(set_value(pristine, "count_table_slots", 0)), ["dispatch-summary"],
         "count_table_slots is 0"),
        ("sizeof_KernelFunction 0, sealed", "text", sealed(set_value(pristine, "sizeof_KernelFunction", 0)),
         ["dispatch-summary"], "sizeof_KernelFunction is 0 bytes"),
    ]


NUMBERS = ["-5", "-1", "0", "1", "2147483648", "4294967296", "18446744073709551615", "18446744073709551616",
           "0x", "1e3", "+7", "0x1000000000000000000"]


def sealed_targets(pristine):
    """Mutations the checks behind the digest must refuse, each sealed again."""
    out = []
    for name, v in [("count_table_slots", 0), ("count_table_slots", 107), ("count_table_slots", 1 << 31),
                    ("sizeof_KernelFunction", 0), ("sizeof_KernelFunction", 8), ("count_dispatch_keys", 121),
                    ("count_dispatch_keys", 123), ("count_backends", 13), ("count_backends", 0), ("count_backends", 64),
                    ("count_functionality_keys", 60), ("set_default_excluded", "0x0"), ("set_default_included", "0x0"),
                    ("set_default_excluded", "0x0000030000000000"), ("set_full_backend_mask", "0x1fff"),
                    ("TensorImpl_key_set", 176), ("TensorImpl_key_set", 192), ("PODLocalDispatchKeySet_excluded", 0),
                    ("KernelFunction_boxed", 16), ("OperatorEntry_dispatchTable", 256), ("AnnotatedKernel_debug", 48),
                    ("Dispatcher_from_realSingleton", 103839248 + 64), ("sizeof_AnnotatedKernel", 1 << 20)]:
        out.append(("sealed %s %s" % (name, v), sealed(set_value(pristine, name, v))))
    for a, b in [("CPU", "CUDA"), ("AutogradCPU", "AutogradCUDA"), ("QuantizedCPU", "SparseCPU"), ("Meta", "AutogradMeta"),
                 ("NestedTensorCPU", "NestedTensorCUDA")]:
        out.append(("sealed keys %s and %s swapped" % (a, b), sealed(swap_key_names(pristine, a, b))))
    for name in ["AutogradCPU", "PythonDispatcher", "Autograd"]:
        out.append(("sealed cut before key %s" % name, sealed(drop_from(pristine, key_line(pristine, name)))))
    body = lines_of(pristine)
    for prefix in ["runtime-keys", "backend 13", "THPVariable_cdata", "name IValueTag 1 ", "symbol fallthrough_kernel"]:
        out.append(("sealed cut before '%s'" % prefix, sealed(drop_from(pristine, next(l for l in body if l.startswith(prefix))))))
    cpu, cuda = key_line(pristine, "CPU"), key_line(pristine, "CUDA")
    for v in ["-5", "-1", "2147483648", "4096", "122", "44"]:
        out.append(("sealed key %s CPU" % v, sealed(replace_line(pristine, cpu, cpu.replace("key 43 ", "key %s " % v)))))
    out.append(("sealed CUDA in CPU's slot", sealed(replace_line(pristine, cuda, cuda.replace("slot=2 ", "slot=1 ")))))
    out.append(("sealed CPU slot 106", sealed(replace_line(pristine, cpu, cpu.replace("slot=1 ", "slot=106 ")))))
    out.append(("sealed CPU bits 0x4003", sealed(replace_line(pristine, cpu, cpu.replace("bits=0x4001", "bits=0x4003")))))
    out.append(("sealed CPU bits 0x1", sealed(replace_line(pristine, cpu, cpu.replace("bits=0x4001", "bits=0x1")))))
    out.append(("sealed CPU in alias 44", sealed(replace_line(pristine, cpu, cpu.replace("in=118,", "in=44,")))))
    rt = next(l for l in body if l.startswith("runtime-keys"))
    out.append(("sealed runtime key 9999", sealed(replace_line(pristine, rt, rt.replace(" 43 ", " 9999 ")))))
    out.append(("sealed runtime key twice", sealed(replace_line(pristine, rt, rt.replace(" 43 ", " 44 ")))))
    out.append(("sealed runtime key an alias", sealed(replace_line(pristine, rt, rt.replace(" 43 ", " 117 ")))))
    for prefix in ["key 43 ", "TensorImpl_key_set", "backend 3 ", "runtime-keys", "symbol realSingleton", "name TypeKind 3 "]:
        line = next(l for l in body if l.startswith(prefix))
        out.append(("sealed line '%s' twice" % prefix.strip(), sealed(replace_line(pristine, line, line + line))))
    return out


def random_mutation(pristine, rng):
    """One seeded mutation of the profile text, its digest line kept (or cut off)."""
    text = pristine
    body = text.splitlines(keepends=True)
    kind = rng.choice(["number", "number", "name", "truncate", "duplicate", "garbage", "drop"])
    i = rng.randrange(1, len(body))
    line = body[i]
    if kind == "number":
        words = line.rstrip("\n").split(" ")
        j = rng.randrange(1, len(words)) if len(words) > 1 else 0
        w = words[j]
        new = rng.choice(NUMBERS)
        words[j] = (w.split("=", 1)[0] + "=" + new) if "=" in w else new
        body[i] = " ".join(words) + "\n"
        what = "line %d word %d -> %s" % (i + 1, j, new)
    elif kind == "name":
        j = rng.randrange(1, len(body))
        wi, wj = body[i].split(" "), body[j].split(" ")
        a, b = (2, 2) if body[i].startswith("key ") and body[j].startswith("key ") else (0, 0)
        wi[a], wj[b] = wj[b].rstrip("\n") + ("\n" if wi[a].endswith("\n") else ""), wi[a].rstrip("\n") + ("\n" if wj[b].endswith("\n") else "")
        body[i], body[j] = " ".join(wi), " ".join(wj)
        what = "names of lines %d and %d swapped" % (i + 1, j + 1)
    elif kind == "truncate":
        cut = rng.randrange(0, len(text))
        return "truncated at byte %d" % cut, text[:cut]
    elif kind == "duplicate":
        body.insert(rng.randrange(1, len(body)), line)
        what = "line %d duplicated" % (i + 1)
    elif kind == "drop":
        del body[i]
        what = "line %d dropped" % (i + 1)
    else:
        pos = rng.randrange(0, len(text))
        junk = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 9))).decode("latin-1")
        return "garbage %r at byte %d" % (junk, pos), text[:pos] + junk + text[pos:]
    return kind + ": " + what, "".join(body)


ABSURD = ["-5", "-1", "2147483648", "4294967296", "18446744073709551615", "18446744073709551616", "0x", "12abc"]


def sealed_absurd_number(pristine, rng):
    """A seeded absurd number (negative, >= 2^31, junk) in a key, backend, runtime-keys or value
    line, sealed again: the range and consistency checks must refuse it whichever line it lands
    in. Not in name-table lines or set_autogradother_backends, where such a value can be another
    build's (only the digest protects those)."""
    body = lines_of(pristine)
    candidates = [i for i, l in enumerate(body) if i > 0 and not l.startswith(("name ", "set_autogradother_backends",
                                                                                 "symbol ", "build-id ", "version ", "runtime "))]
    i = rng.choice(candidates)
    words = body[i].rstrip("\n").split(" ")
    numeric = [j for j, w in enumerate(words) if j > 0 and (w.split("=", 1)[-1][:1].isdigit() or w.startswith("slot="))]
    if not numeric:
        return None
    j, new = rng.choice(numeric), rng.choice(ABSURD)
    w = words[j]
    if "=" in w:
        head, args = w.split("=", 1)
        parts = args.split(",")
        parts[rng.randrange(len(parts))] = new
        words[j] = head + "=" + ",".join(parts)
    else:
        words[j] = new
    body[i] = " ".join(words) + "\n"
    return "sealed: line %d word %d -> %s" % (i + 1, j, new), sealed("".join(body))


def mutations(pristine, seed, count):
    """[(name, kind, content)]: the special files, every sealed target, then seeded random ones."""
    out = [("fifo", "fifo", None), ("/dev/zero", "devzero", None), ("directory", "dir", None), ("empty", "text", ""),
           ("2 MiB", "big", None), ("symlink loop", "loop", None), ("no digest", "text", unsealed(pristine)),
           ("old format", "text", pristine.replace("dscope-profile 1", "dscope-profile 2", 1))]
    out += [(n, "text", t) for n, t in sealed_targets(pristine)]
    rng = random.Random(seed)
    while len(out) < count:
        made = sealed_absurd_number(pristine, rng) if len(out) % 3 == 0 else random_mutation(pristine, rng)
        if made:
            out.append((made[0], "text", made[1]))
    return out


def place(fx, index, kind, content):
    """A directory whose profile for the core's libtorch_cpu is this mutation."""
    d, path = fx.profile_dir("m%d" % index)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "devzero":
        os.symlink("/dev/zero", path)
    elif kind == "dir":
        path.mkdir()
    elif kind == "loop":
        os.symlink(path.name, path)
    elif kind == "big":
        with open(path, "w") as f:
            f.write(fx.profile.read_text())
            f.truncate(2 << 20)
    else:
        path.write_bytes(content.encode("latin-1"))
    return d, path


# ------------------------------------------------------------------------------------ runs

def pristine_answers(fx, debuggers):
    """{front end: {command: text}} with the shipped profile, checked against torch._C."""
    d, path = fx.profile_dir("pristine")
    shutil.copy(fx.profile, path)
    answers, problems = {"dscope": {}}, []
    for c in fx.commands:
        text, problem = run_dscope(fx, d, c)
        answers["dscope"][c] = text
        problems += ["dscope %s: %s" % (c, problem)] if problem else []
    problems += ["dscope: " + p for p in fx.check_pristine(answers["dscope"])]
    for name, plugin in debuggers:
        found, problem, text = run_debugger(fx, name, plugin, [("pristine", d, fx.commands)])
        got = answers[name] = {c: found[("pristine", c)] for c in fx.commands}
        if problem or crash_text(text):
            problems.append("%s on the pristine profile: %s %s\n%s" % (name, problem, crash_text(text), text[-2000:]))
        else:
            problems += ["%s: %s" % (name, p) for p in fx.check_pristine(got)]
    return answers, problems


def judge(front, command, got, expected, path, problem, text):
    if problem:
        return ["%s %s: %s" % (front, command, problem)]
    if crash_text(text):
        return ["%s %s: printed %s" % (front, command, crash_text(text))]
    if got == expected or (got is not None and one_line_about(got, path)):
        return []
    return ["%s %s: neither the pristine answer nor one dscope: line naming %s:\n%s" % (front, command, path, (got or "")[-1500:])]


def fuzz(fx, a, debuggers):
    pristine_text = fx.profile.read_text()
    expected, problems = pristine_answers(fx, debuggers)
    if problems:
        return problems, 0
    muts = mutations(pristine_text, a.seed, a.count)
    if a.list:
        for i, (name, kind, _c) in enumerate(muts):
            print("%3d %s (%s)" % (i, name, kind))
        return [], 0
    chosen = [(a.only, muts[a.only])] if a.only is not None else list(enumerate(muts))
    # GDB and lldb-16: the special files, the first sealed targets and every seventh of the rest.
    in_debuggers = {i for i, _m in chosen if i < 12 or i % 7 == 0 or a.only is not None}

    def one(item):
        i, (name, kind, content) = item
        d, path = place(fx, i, kind, content)
        found = []
        # Two of the commands a mutation, in turn (--all-commands: every one): most profiles are
        # refused at load whatever the command, and each command still meets every kind.
        n = len(fx.commands)
        commands = fx.commands if a.all_commands else [fx.commands[(2 * i) % n], fx.commands[(2 * i + 1) % n]]
        for c in commands:
            text, problem = run_dscope(fx, d, c)
            found += judge("dscope", c, text, expected["dscope"][c], path, problem, text)
        if a.only is not None:
            print("mutation %d content:\n%s" % (i, content if content is not None else kind))
        return ["mutation %d (%s): %s" % (i, name, f) for f in found]

    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        for found in pool.map(one, chosen):
            problems += found
    # GDB and lldb-16, one session each over a sample, every command: the special files and every
    # eighth mutation of the rest.
    sample = [(i, m) for i, m in chosen if i < 8 or i % 8 == 0 or a.only is not None]
    steps = [("m%d" % i, fx.workdir / ("m%d" % i), fx.commands) for i, _m in sample]
    for dbg, plugin in debuggers:
        got, problem, text = run_debugger(fx, dbg, plugin, steps)
        if problem or crash_text(text):
            problems.append("%s: %s %s\n%s" % (dbg, problem or "", crash_text(text), text[-3000:]))
            continue
        for i, (name, _kind, _content) in sample:
            path = fx.workdir / ("m%d" % i) / fx.profile.name
            for c in fx.commands:
                problems += ["mutation %d (%s): %s" % (i, name, f)
                             for f in judge(dbg, c, got[("m%d" % i, c)], expected[dbg][c], path, None, "")]
    return problems, len(chosen)


def headlines(fx, a, debuggers):
    pristine = fx.profile.read_text()
    problems, count, steps, cases = [], 0, [], headline(pristine)
    for i, (name, kind, content, commands, says) in enumerate(cases):
        d, path = place(fx, i, kind, content)
        commands = [c.replace("IMPL", fx.impl) for c in commands]
        steps.append(("m%d" % i, d, commands))
        for c in commands:
            text, problem = run_dscope(fx, d, c)
            count += 1
            if problem or not one_line_about(text, path) or says.replace("IMPL", fx.impl) not in text:
                problems.append("%s: dscope %s: %s, expected the one line '...%s...' naming %s, got:\n%s"
                                % (name, c, problem or "wrong answer", says, path, text[-1500:]))
    for dbg, plugin in debuggers:
        got, problem, text = run_debugger(fx, dbg, plugin, steps)
        if problem or crash_text(text):
            problems.append("%s: %s %s\n%s" % (dbg, problem or "", crash_text(text), text[-3000:]))
            continue
        for (label, d, commands), (name, _kind, _content, _commands, says) in zip(steps, cases):
            path = d / fx.profile.name
            for c in commands:
                count += 1
                answer = got[(label, c)]
                if answer is None or not one_line_about(answer, path) or says.replace("IMPL", fx.impl) not in answer:
                    problems.append("%s: %s %s: expected the one line '...%s...', got:\n%s" % (name, dbg, c, says, answer))
    return problems, count


def main():
    global ARGS
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dscope", required=True)
    p.add_argument("--gdb-script", required=True)
    p.add_argument("--lldb-plugin")
    p.add_argument("--workdir", type=pathlib.Path, required=True)
    p.add_argument("--profile", type=pathlib.Path, required=True, help="the shipped profile of Debian's torch")
    p.add_argument("--headline", action="store_true")
    p.add_argument("--fuzz", action="store_true")
    p.add_argument("--seed", type=int, default=33)
    p.add_argument("--count", type=int, default=96,
                   help="mutations in all (at least the special files and sealed targets, 64), the rest seeded random ones")
    p.add_argument("--all-commands", action="store_true", help="every command on every mutation in dscope core")
    p.add_argument("--only", type=int)
    p.add_argument("--list", action="store_true")
    p.add_argument("--jobs", type=int, default=2)
    a = ARGS = p.parse_args()
    if not (a.headline or a.fuzz):
        p.error("say --headline, --fuzz or both (both share one core)")
    if a.workdir.exists():
        shutil.rmtree(a.workdir)
    a.workdir.mkdir(parents=True)
    debuggers = [("gdb", a.gdb_script)] + ([("lldb", a.lldb_plugin)] if a.lldb_plugin else [])
    fx = Fixture(a.workdir, a.profile)
    problems = []
    try:
        for name, part in (("headline", headlines), ("fuzz", fuzz)):
            if getattr(a, name):
                found, count = part(fx, a, debuggers)
                print("%s: %d runs checked, %d problems" % (name, count, len(found)))
                problems += found
    finally:
        fx.core.unlink(missing_ok=True)
    for problem in problems[:12]:
        print(problem)
    return 1 if problems else 0


ARGS = None

if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main())
