#!/usr/bin/env python3
"""dispatch-trace on a real-PyTorch overflow core (tests/torch/torch_loop.cpp: a kernel that
calls its own operator, one registered at the Autograd alias key that does, two that call each other
(also as plain function pointers of one signature, on a worker thread), a boxed kernel that calls
op.callBoxed again, an aten::mm AutogradCPU override that calls
at::mm, a CPU override that calls at::matmul whose own kernel calls aten::mm), in GDB
and lldb-16: the loop, the operator(s), the key, the kernel(s) with their `registered at`, the
thread's TLS and the fix; both debuggers print the same chain, on the core and live (the process
stopped by its SIGSEGV under the debugger).

With --suite, the same on real PyTorch 2.x in a Debian root (scripts/torch-roots.sh): torch_loop
is built inside the root by its own g++ against its libtorch-dev (once per source and torch, kept
in --cache), runs there as a container does, and its kernel core (written in its working folder
inside the root) is read from the host: GDB with the root as sysroot, lldb-16 with it as its
platform's sysroot, `dscope core --sysroot ROOT` on the core. The self, mutual and mm cores are
left in --cache, and --scenario batch reads the three in one `dscope core --sysroot ROOT` batch.

  torch_loop_test.py --gdb-script S [--lldb-plugin P] [--dscope D] --program build/.../torch_loop
                     --scenario self|mutual|mm|matmul|alias|shared|boxed --workdir DIR
  torch_loop_test.py --gdb-script S --lldb-plugin P --dscope D --suite trixie|sid --roots scripts/torch-roots.sh
                     --cache DIR --scenario self|mutual|mm|batch
"""

import argparse
import fcntl
import filecmp
import hashlib
import json
import os
import pathlib
import re
import resource
import shutil
import signal
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import libtorch_core_test  # noqa: E402
import torch_oracle_test as oracle_test  # noqa: E402
import session  # noqa: E402
import roots as torch_roots  # noqa: E402

SOURCE = HERE / "torch_loop.cpp"


def line_of(text):
    """The source line holding text: where the kernels say they were registered."""
    return next(i for i, l in enumerate(SOURCE.read_text().splitlines(), 1) if text in l)


def matmul_registration():
    """aten::matmul's CPU entry's "registered at ..." as the installed torch prints it."""
    code = "import torch; print(torch._C._dispatch_dump_table('aten::matmul'))"
    table = subprocess.run(["/usr/bin/python3", "-c", code], capture_output=True, text=True, timeout=120).stdout
    row = next(l for l in table.splitlines() if l.startswith("CPU: "))
    return row[len("CPU: "):row.rindex(" [")]


def program_tls(stdout):
    """The thread's TLS sets as the program printed them (its "TLS: ..." line)."""
    return next((l for l in stdout.splitlines() if l.startswith("TLS: ")), "TLS: (the program printed none)")


def expected(scenario, tls, source=SOURCE):
    """What dispatch-trace must say about each scenario's core (from the source, compiled as source,
    and the TLS line the program printed, not the tool). How many repetitions fit in the 400
    innermost frames depends on the frames above the loop where the stack overflowed (198 or 199
    of a 2-frame loop in 400)."""
    registered = "registered at %s:%d" % (source, line_of("TORCH_LIBRARY_IMPL(myops, AutogradCPU, m)"))
    common = [
        "dispatch chain rebuilt from the native stack (PyTorch keeps no dispatch records): 400 frames walked, the innermost",
        "  " + tls + "\n",
        "(autograd is not excluded on this thread)",
        "continue below autograd: op.redispatch(ks & after_autograd_keyset, ...) with the kernel's DispatchKeySet argument",
    ]
    if scenario == "self":
        return common + [
            "  loop: a cycle of 2 stack frames, at least ",
            "[kernel] op=[myops::loop], key=[AutogradCPU] loop_autograd(c10::DispatchKeySet, at::Tensor const&), " + registered,
            "  diagnosis: myops::loop's AutogradCPU kernel (loop_autograd(c10::DispatchKeySet, at::Tensor const&), %s) calls "
            "myops::loop again through the dispatcher: " % registered, "so the kernel re-enters itself",
            "  fix: in that kernel,"]
    if scenario == "alias":  # registered at the Autograd alias key: it fills AutogradCPU and every other autograd slot
        alias = "registered at %s:%d" % (source, line_of("TORCH_LIBRARY_IMPL(myops, Autograd, m)"))
        return common + [
            "  loop: a cycle of 2 stack frames, at least ",
            "[kernel] op=[myops::aloop], key=[Autograd] aloop_autograd(c10::DispatchKeySet, at::Tensor const&), " + alias,
            "  diagnosis: myops::aloop's Autograd kernel (aloop_autograd(c10::DispatchKeySet, at::Tensor const&), %s) calls "
            "myops::aloop again through the dispatcher: " % alias,
            "which still select one of the keys Autograd covers, so the kernel re-enters itself",
            "  fix: in that kernel,"]
    if scenario == "shared":
        # Plain function pointers of one signature: one trampoline runs both kernels (its frames say
        # "one of N operators"); the frame it calls is the kernel function, named by the function
        # (with its source line where the program has -g) its table entry's runtime functor holds.
        return common + [
            "[kernel] op=[myops::tick], key=[AutogradCPU] tick_autograd(c10::DispatchKeySet, at::Tensor const&)",
            "[kernel] op=[myops::tock], key=[AutogradCPU] tock_autograd(c10::DispatchKeySet, at::Tensor const&)",
            ", %s\n" % registered,
            "  diagnosis: myops::tick's AutogradCPU kernel (tick_autograd(c10::DispatchKeySet, at::Tensor const&)",
            ", %s) calls myops::tock, whose AutogradCPU kernel (tock_autograd(c10::DispatchKeySet, at::Tensor const&)" % registered,
            ", %s) calls myops::tick again through the dispatcher: " % registered, "so the kernels re-enter each other",
            "  fix: in those kernels,"]
    if scenario == "boxed":
        # The boxed kernel and the function makeFromBoxedFunction wraps it in were tail-called away:
        # only Dispatcher::callBoxed's frames are left, and the table slot lookup() returned (saved
        # on the stack by the next callBoxed) tells the operator, key and kernel.
        boxed = "bloop_boxed(c10::OperatorHandle const&, c10::DispatchKeySet, std::vector<c10::IValue, std::allocator<c10::IValue> >*)"
        return common[:3] + [
            "  loop: a cycle of 1 stack frame, at least ",
            "[code] c10::Dispatcher::callBoxed(c10::OperatorHandle const&, ",
            "  diagnosis: c10::Dispatcher::callBoxed re-enters itself: a boxed kernel calls op.callBoxed(stack) again for the "
            "operator it was called for, and the compiler tail-called the kernel away (no frame of it is left): myops::bloop's "
            "AutogradCPU kernel (%s, %s) calls myops::bloop again: " % (boxed, registered),
            "so the kernel re-enters itself",
            "  fix: in that kernel, continue below autograd: op.redispatchBoxed(ks & after_autograd_keyset, ...) with the "
            "kernel's DispatchKeySet argument"]
    if scenario == "mutual":
        return common + [
            "  loop: a cycle of 4 stack frames, at least ",
            "[kernel] op=[myops::ping], key=[AutogradCPU] ping_autograd(c10::DispatchKeySet, at::Tensor const&), " + registered,
            "[kernel] op=[myops::pong], key=[AutogradCPU] pong_autograd(c10::DispatchKeySet, at::Tensor const&), " + registered,
            "  diagnosis: myops::ping's AutogradCPU kernel (ping_autograd(c10::DispatchKeySet, at::Tensor const&), %s) calls "
            "myops::pong, whose AutogradCPU kernel (pong_autograd(c10::DispatchKeySet, at::Tensor const&), %s) calls "
            "myops::ping again through the dispatcher: " % (registered, registered), "so the kernels re-enter each other",
            "  fix: in those kernels,"]
    if scenario == "matmul":  # the cycle runs through aten::matmul's own kernel, inside libtorch
        cpu = "registered at %s:%d" % (source, line_of("c10::DispatchKey::CPU, __FILE__, __LINE__"))
        # Its math kernel has no symbol: found by the function start .eh_frame_hdr lists, named with
        # the registration torch itself prints for it and the function its functor's type names
        # (PyTorch 1.13's RegisterCompositeImplicitAutograd.cpp); registered at the alias key, it
        # fills every key's slot, CPU's too, and is told by that alias key.
        composite = "aten::matmul's CompositeImplicitAutograd kernel (at::(anonymous namespace)::(anonymous namespace)::" \
                    "wrapper__matmul, %s)" % matmul_registration()
        return common[:1] + [
            "[call] at::_ops::matmul (at::_ops::matmul::call(at::Tensor const&, at::Tensor const&))",
            "[code] at::native::matmul(at::Tensor const&, at::Tensor const&)",
            "[kernel] op=[aten::matmul], key=[CompositeImplicitAutograd] at::(anonymous namespace)::(anonymous namespace)::"
            "wrapper__matmul, " + matmul_registration(),
            "[kernel] op=[aten::mm], key=[CPU] mm_cpu(at::Tensor const&, at::Tensor const&), " + cpu,
            "  diagnosis: %s calls aten::mm, whose CPU kernel (mm_cpu(at::Tensor const&, at::Tensor const&), %s) calls "
            "aten::matmul again through the dispatcher (at::_ops::matmul): " % (composite, cpu),
            "so the kernels re-enter each other",
            "  fix: break the cycle: one of those kernels must call neither operator again: compute the result there"]
    mm = "registered at %s:%d" % (source, line_of("c10::DispatchKey::AutogradCPU, __FILE__, __LINE__"))
    return common + [
        "  loop: a cycle of 2 stack frames, at least ",
        "[call] at::_ops::mm (at::_ops::mm::call(at::Tensor const&, at::Tensor const&))",
        "[kernel] op=[aten::mm], key=[AutogradCPU] mm_autograd(c10::DispatchKeySet, at::Tensor const&, at::Tensor const&), " + mm,
        "  diagnosis: aten::mm's AutogradCPU kernel (mm_autograd(c10::DispatchKeySet, at::Tensor const&, at::Tensor const&), "
        "%s) calls aten::mm again through the dispatcher (at::_ops::mm): " % mm]


def idle_threads_cut(text):
    """A trace or summary without the whole-stack walks of idle threads (the shared scenario's main
    thread, waiting in join): GDB's unwinder stops at main (its `backtrace past-main` default),
    LLDB's and dscope's go on to _start, so those walks differ in depth between front ends."""
    text = re.sub(r"  thread tid \d+: \d+ frames \(the whole stack\), 0 kernel frames\n", "", text)
    return "\n".join(t for t in text.split("\n\n") if "frames (the whole stack)\nthread tid" not in t)


def chains_start(text):
    return text.find("dispatch chain rebuilt from the native stack")


def signature(scenario):
    """The crash signature of each scenario's core (from the source): the kernel of the cycle with the
    smallest operator name, whichever frame the stack ran out in; a kernel registered at an alias key
    (aloop's at Autograd, matmul's own at CompositeImplicitAutograd) is told by that key."""
    return {"self": "infinite-redispatch myops::loop AutogradCPU kernel=loop_autograd",
            "mutual": "infinite-redispatch myops::ping AutogradCPU kernel=ping_autograd",
            "alias": "infinite-redispatch myops::aloop Autograd kernel=aloop_autograd",
            "shared": "infinite-redispatch myops::tick AutogradCPU kernel=tick_autograd",
            "boxed": "infinite-redispatch myops::bloop AutogradCPU kernel=bloop_boxed",
            "mm": "infinite-redispatch aten::mm AutogradCPU kernel=mm_autograd",
            "matmul": "infinite-redispatch aten::matmul CompositeImplicitAutograd kernel=wrapper__matmul"}[scenario]


# Each scenario's cycle (from the source): the kernels, outermost first from the smallest operator
# name, as (operator, the key each is told by).
CYCLES = {"self": [("myops::loop", "AutogradCPU")],
          "mutual": [("myops::ping", "AutogradCPU"), ("myops::pong", "AutogradCPU")],
          "alias": [("myops::aloop", "Autograd")],
          "shared": [("myops::tick", "AutogradCPU"), ("myops::tock", "AutogradCPU")],
          "boxed": [("myops::bloop", "AutogradCPU")],
          "mm": [("aten::mm", "AutogradCPU")],
          "matmul": [("aten::matmul", "CompositeImplicitAutograd"), ("aten::mm", "CPU")]}


def json_problems(scenario, tls, answer, trace):
    """`dispatch-trace --json` on the scenario's core: one thread whose cycle's kernels are the
    source's, its TLS the line the program printed, and the diagnosis and fix the text trace's."""
    try:
        threads = json.loads(answer)["threads"]
    except (ValueError, KeyError, TypeError) as e:
        return ["dispatch-trace --json is no {\"threads\": [...]} object (%s):\n%s" % (e, answer[:2000])]
    if len(threads) != 1 or not threads[0].get("cycle"):
        return ["dispatch-trace --json: not one thread with a cycle:\n%s" % answer[:2000]]
    t, problems = threads[0], []
    cycle = [(k["op"], k["key"]) for k in t["cycle"]["kernels"]]
    if cycle != CYCLES[scenario]:
        problems.append("dispatch-trace --json: the cycle's kernels are %s, the source's %s" % (cycle, CYCLES[scenario]))
    if len(t["cycle"]["frames"]) != t["cycle"]["period"] or t["cycle"]["start_frame"] != len(t["top"]):
        problems.append("dispatch-trace --json: the cycle's frames do not fold the walk: %s" % json.dumps(t["cycle"])[:2000])
    # The TLS: the text's, and the program's where the loop runs under no guard (expected() says).
    shown = "TLS: included %s, excluded %s" % (t["tls"]["included"], t["tls"]["excluded"])
    if "\n  %s\n" % shown not in trace or ("  " + tls + "\n" in expected(scenario, tls) and shown != tls):
        problems.append("dispatch-trace --json: %r, the program printed %r" % (shown, tls))
    for field in ("diagnosis", "fix"):
        line = next((l.strip() for l in trace.splitlines() if l.startswith("  %s: " % field)), None)
        if line != "%s: %s" % (field, t[field]):
            problems.append("dispatch-trace --json's %s is not the text's:\n  %r\n  %r" % (field, t[field], line))
    return problems


# Where the program, its source and its runs live inside a root (the root's /tmp).
IN_ROOT = "/tmp/dscope-tests"


def cxx_standard(root):
    """The C++ standard the root's torch needs: its TorchConfig.cmake's CXX_STANDARD (17 in 2.6, 20 in 2.14)."""
    for config in sorted(root.glob("usr/lib/*/cmake/Torch/TorchConfig.cmake")):
        found = re.search(r"CXX_STANDARD\s+(\d+)", config.read_text(errors="replace"))
        if found:
            return max(17, int(found.group(1)))
    return 17


def root_program(roots, suite, cache):
    """torch_loop built inside the suite's root by its g++ against its libtorch-dev (flags as
    libtorch_program.cmake's), once per source, flags and torch: (the root, the folder inside it
    that holds the program, the build folder's copy of the program). The folder is named by that
    hash, so tests of several checkouts share one root; a lock there makes one of them compile."""
    subprocess.run([roots, "ensure", suite], check=True, timeout=1800, stdin=subprocess.DEVNULL)
    root = torch_roots.root_dir(roots, suite)
    flags = ["-std=c++%d" % cxx_standard(root), "-O2", "-g", "-D_GLIBCXX_USE_CXX11_ABI=1",
             "-isystem", "/usr/include/torch/csrc/api/include"]
    key = hashlib.sha256(SOURCE.read_bytes() + " ".join(flags).encode() + (root / ".dscope-root").read_bytes()).hexdigest()[:16]
    inside = "%s/torch_loop-%s" % (IN_ROOT, key)
    folder = root / inside.lstrip("/")
    folder.mkdir(parents=True, exist_ok=True)
    cache.mkdir(parents=True, exist_ok=True)
    kept = cache / ("torch_loop-%s-%s" % (suite, key))
    with open(folder / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not kept.is_file():
            shutil.copyfile(SOURCE, folder / "torch_loop.cpp")
            built = subprocess.run([roots, "run", suite, "g++"] + flags + [inside + "/torch_loop.cpp", "-o", inside + "/torch_loop",
                                   "-ltorch", "-ltorch_cpu", "-lc10"], capture_output=True, text=True, timeout=900,
                                   stdin=subprocess.DEVNULL)
            if built.returncode != 0:
                raise SystemExit("FAIL: torch_loop.cpp does not compile in the %s root:\n%s" % (suite, built.stderr[-3000:]))
            shutil.copyfile(folder / "torch_loop", kept.with_suffix(".partial"))
            os.chmod(kept.with_suffix(".partial"), 0o755)
            os.replace(kept.with_suffix(".partial"), kept)
        program = folder / "torch_loop"
        if not program.is_file() or not filecmp.cmp(program, kept, shallow=False):  # a root made again
            shutil.copyfile(kept, program)
            os.chmod(program, 0o755)
    return root, inside, kept


def no_core_here():
    """The runner (unshare) raises its child's SIGSEGV on itself: a soft limit of 0 keeps it from
    writing a core of its own; the shell inside the root raises the limit for the program."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, resource.RLIM_INFINITY))


def run_in_root(roots, suite, root, inside, scenario):
    """Runs the scenario inside the root as a container does; the kernel writes its core (core_pattern
    `core`: the crashing process's working folder, resolved inside its root). (its run, its cores)."""
    workdir = "%s/%s-%d" % (inside, scenario, os.getpid())
    shutil.rmtree(root / workdir.lstrip("/"), ignore_errors=True)
    (root / workdir.lstrip("/")).mkdir(parents=True)
    session.keep_file_pages_in_cores()
    script = "ulimit -c unlimited && cd %s && exec %s/torch_loop %s" % (workdir, inside, scenario)
    run = subprocess.run([roots, "run", suite, "sh", "-c", script], preexec_fn=no_core_here, stdin=subprocess.DEVNULL,
                         capture_output=True, text=True, timeout=300)
    return run, root / workdir.lstrip("/")


def kernel_cores_here():
    """Whether the kernel writes a crashing process's core in its working folder (core_pattern)."""
    pattern = pathlib.Path("/proc/sys/kernel/core_pattern").read_text().strip()
    if pattern.startswith("|") or pattern.startswith("/"):
        print("SKIP: kernel.core_pattern %r writes no core in the crashing process's folder" % pattern)
        return False
    return True


# The scenarios whose cores (one root's) the batch test reads, and where their tests leave them.
BATCH = ["self", "mutual", "mm"]


def kept_core(cache, suite, scenario):
    """Where a scenario's test leaves its core (and GDB's summary of it, .summary) for the batch."""
    return cache / ("cores-" + suite) / (scenario + ".core")


def check_root_core(a):
    """One core of a scenario run in a 2.x root, read once by each front end (the root as its
    sysroot): GDB (dispatch-trace, dispatch-summary), lldb-16 (the same), dscope core (the trace);
    the trace's lines and the signature from the source and the program's own output, and the same
    text in all three. The core of a BATCH scenario is then left, with GDB's summary, for the
    batch test (check_root_batch)."""
    if not kernel_cores_here():
        return 77
    kept = kept_core(a.cache, a.suite, a.scenario)
    for stale in (kept, kept.with_suffix(".summary")):
        stale.unlink(missing_ok=True)
    root, inside, program = root_program(a.roots, a.suite, a.cache)
    run, workdir = run_in_root(a.roots, a.suite, root, inside, a.scenario)
    cores = sorted(workdir.glob("core*"))
    try:
        if run.returncode != -signal.SIGSEGV or not cores:
            print("FAIL: torch_loop %s in the %s root exited with %s (expected SIGSEGV and a core in %s):\n%s%s"
                  % (a.scenario, a.suite, run.returncode, workdir, run.stdout, run.stderr))
            return 1
        core = cores[0]
        want = expected(a.scenario, program_tls(run.stdout), source=inside + "/torch_loop.cpp")
        want += ["\nsignature: %s\n" % signature(a.scenario)]
        commands = ["dispatch-trace", "dispatch-summary"]
        argvs = {debugger: torch_roots.debugger_argv(debugger, plugin, program, core=core, extra=commands, sysroot=root)
                 for debugger, plugin in [("gdb", a.gdb_script), ("lldb", a.lldb_plugin)]}
        problems, traces, summaries = [], {}, {}
        for debugger, argv in argvs.items():
            out = subprocess.run(argv, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
            text = out.stdout + out.stderr
            found = session.text_failures(text, expect=want, reject=oracle_test.REJECT)
            if found:
                problems.append("%s: %d of the expected lines missing, the first: %s\n%s" % (debugger, len(found), found[0], text[-3000:]))
            start, summary_at = out.stdout.find("dispatch chain rebuilt"), out.stdout.find("dispatch summary (")
            traces[debugger] = out.stdout[start:summary_at].replace("(lldb) dispatch-summary\n", "") if start >= 0 else ""
            summary = out.stdout[summary_at:] if summary_at >= 0 else ""
            summaries[debugger] = summary[:summary.find("\n", summary.find("\nsignature: ") + 1) + 1]
        cli = subprocess.run([a.dscope, "core", "--sysroot", str(root), str(core), str(program), "dispatch-trace"],
                             capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
        traces["dscope core"] = cli.stdout
        cli_json = subprocess.run([a.dscope, "core", "--sysroot", str(root), str(core), str(program), "dispatch-trace", "--json"],
                                  capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
        problems += json_problems(a.scenario, program_tls(run.stdout), cli_json.stdout + cli_json.stderr, cli.stdout)
        for name, texts in [("traces", traces), ("summaries", summaries)]:
            if not texts["gdb"].strip() or len(set(t.rstrip() for t in texts.values())) > 1:
                problems.append("GDB, lldb-16 and dscope core print different %s:\n%s" % (
                    name, "".join("--- %s\n%s" % (front, text) for front, text in texts.items())))
        if not problems and a.scenario in BATCH:
            kept.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(core, kept)
            kept.with_suffix(".summary").write_text(summaries["gdb"])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print("torch_loop %s in the %s root (%s): %d problems" % (a.scenario, a.suite, (root / ".dscope-root").read_text().strip(),
                                                               len(problems)))
    for problem in problems[:6]:
        print(problem)
    return 1 if problems else 0


def check_root_batch(a):
    """The cores the BATCH scenarios' tests left (one root's), in ONE `dscope core --sysroot ROOT
    CORE...` batch (two workers): a `core PATH:` record per core in the order given, each GDB's
    summary of that core, with the signature from the source. The cores are removed after."""
    if not kernel_cores_here():
        return 77
    root = torch_roots.root_dir(a.roots, a.suite)
    cores = [kept_core(a.cache, a.suite, scenario) for scenario in BATCH]
    problems = []
    try:
        if not all(core.is_file() for core in cores):
            print("FAIL: the cores of %s (left by torch_loop_%s_{%s}_trace, the fixture) are not all in %s" % (
                ", ".join(BATCH), a.suite, ",".join(BATCH), cores[0].parent))
            return 1
        batch = subprocess.run([a.dscope, "core", "--sysroot", str(root), "-j", "2"] + [str(c) for c in cores],
                               capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
        records = re.split(r"^(?=core /.*:$)", batch.stdout, flags=re.M)[1:]
        if batch.returncode != 0 or len(records) != len(cores):
            problems.append("dscope core batch: exit %d, %d records for %d cores:\n%s%s" % (
                batch.returncode, len(records), len(cores), batch.stdout[-3000:], batch.stderr[-2000:]))
        for scenario, core, record in zip(BATCH, cores, records):
            gdb = core.with_suffix(".summary").read_text()
            header = "core %s:\n" % core
            if not record.startswith(header) or record[len(header):].rstrip() != gdb.rstrip() or \
                    "\nsignature: %s\n" % signature(scenario) not in gdb:
                problems.append("dscope core batch, %s: not GDB's summary with 'signature: %s':\n--- batch\n%s--- gdb\n%s" % (
                    scenario, signature(scenario), record, gdb))
    finally:
        for core in cores:
            core.unlink(missing_ok=True)
            core.with_suffix(".summary").unlink(missing_ok=True)
    print("torch_loop cores of %s in the %s root, one dscope core batch: %d problems" % (", ".join(BATCH), a.suite,
                                                                                         len(problems)))
    for problem in problems[:3]:
        print(problem)
    return 1 if problems else 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--gdb-script", required=True)
    p.add_argument("--lldb-plugin")
    p.add_argument("--dscope", help="also dscope core (no debugger) on the same core: GDB's text exactly")
    p.add_argument("--program", help="the host-built torch_loop (Debian 12's PyTorch 1.13)")
    p.add_argument("--scenario", choices=["self", "mutual", "mm", "matmul", "alias", "shared", "boxed", "batch"], default="self",
                   help="batch (with --suite): the cores the self, mutual and mm tests left, in one dscope core batch")
    p.add_argument("--workdir", type=pathlib.Path)
    p.add_argument("--suite", help="a 2.x root instead (trixie, sid): torch_loop built and run inside it")
    p.add_argument("--roots", help="scripts/torch-roots.sh, which makes and runs the roots")
    p.add_argument("--cache", type=pathlib.Path, help="the build folder that keeps the program built in each root")
    a = p.parse_args()
    if a.suite:
        if not (a.roots and a.cache and a.lldb_plugin and a.dscope):
            p.error("--suite needs --roots, --cache, --lldb-plugin and --dscope")
        return check_root_batch(a) if a.scenario == "batch" else check_root_core(a)
    if not (a.program and a.workdir):
        p.error("--program and --workdir are needed")
    run, program, cores = libtorch_core_test.run_for_core(a.program, [a.scenario], a.workdir)
    if run.returncode != -signal.SIGSEGV or not cores:
        print("FAIL: %s exited with %s (expected SIGSEGV and a core):\n%s%s" % (program, run.returncode, run.stdout, run.stderr))
        return 1
    core = cores[0]
    tls = program_tls(run.stdout)
    problems, chains, summaries, every = [], {}, {}, {}
    try:
        debuggers = [("gdb", a.gdb_script)] + ([("lldb", a.lldb_plugin)] if a.lldb_plugin else [])
        for debugger, plugin in debuggers:
            argv = oracle_test.debugger_argv(debugger, plugin, program, core=core,
                                             extra=["dispatch-trace", "dispatch-summary", oracle_test.marker(debugger, "all"),
                                                    "dispatch-trace --all"])
            out = subprocess.run(argv, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
            text = out.stdout + out.stderr
            found = session.text_failures(text, expect=expected(a.scenario, tls) + ["\nsignature: %s\n" % signature(a.scenario)],
                                          reject=oracle_test.REJECT)
            problems += ["%s: %s" % (debugger, f) for f in found]
            start = text.find("dispatch chain rebuilt")
            summary_at = text.find("dispatch summary (")
            summaries[debugger] = text[summary_at:text.find("\n", text.find("\nsignature: ", summary_at) + 1) + 1]
            # Every thread's trace (this program has one thread): its own trace again.
            every[debugger] = oracle_test.sections(out.stdout).get("all")
            if not every[debugger] or chains_start(every[debugger]) < 0:
                problems.append("%s: dispatch-trace --all gave no trace:\n%s" % (debugger, every[debugger]))
            if debugger == "gdb" and a.dscope:
                cli = subprocess.run([a.dscope, "core", str(core), program, "dispatch-trace"], capture_output=True,
                                     text=True, timeout=300, stdin=subprocess.DEVNULL)
                summary_at = out.stdout.find("dispatch summary (")
                shown = out.stdout[out.stdout.find("dispatch chain rebuilt"):summary_at]  # GDB's warnings go to stderr
                if start < 0 or cli.stdout.rstrip() != shown.rstrip():
                    problems.append("dscope core and GDB print different traces:\n--- dscope\n%s%s--- gdb\n%s"
                                    % (cli.stdout, cli.stderr, shown))
                cli_json = subprocess.run([a.dscope, "core", str(core), program, "dispatch-trace", "--json"],
                                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
                problems += json_problems(a.scenario, tls, cli_json.stdout + cli_json.stderr, cli.stdout)
                # dscope core's default command: the summary, as GDB prints it.
                cli = subprocess.run([a.dscope, "core", str(core), program], capture_output=True, text=True, timeout=300,
                                     stdin=subprocess.DEVNULL)
                summary = out.stdout[summary_at:] if summary_at >= 0 else ""
                summary = summary[:summary.find("\n", summary.find("\nsignature: ") + 1) + 1]
                cli_all = subprocess.run([a.dscope, "core", str(core), program, "dispatch-trace", "--all"], capture_output=True,
                                         text=True, timeout=300, stdin=subprocess.DEVNULL)
                if idle_threads_cut(cli_all.stdout) != idle_threads_cut(every[debugger]):
                    problems.append("dscope core and GDB print different dispatch-trace --all:\n--- dscope\n%s%s--- gdb\n%s"
                                    % (cli_all.stdout, cli_all.stderr, every[debugger]))
                if idle_threads_cut(cli.stdout) != idle_threads_cut(summary):
                    problems.append("dscope core and GDB print different summaries:\n--- dscope\n%s%s--- gdb\n%s"
                                    % (cli.stdout, cli.stderr, summary))
            chains[debugger] = text[start:text.find("  fix:", start)] if start >= 0 else ""
            chains[debugger] = "\n".join(l for l in chains[debugger].splitlines() if not l.startswith("thread tid"))
            if found:
                problems.append(text[-3000:])
        # The same, live: the process stopped by its SIGSEGV under the debugger.
        for debugger, plugin in debuggers:
            if debugger == "gdb":
                argv = session.gdb_batch("-ex", "set debuginfod enabled off", "-x", plugin, "-ex", "run", "-ex",
                                         "dispatch-trace", "-ex", "kill", "--args", program, a.scenario)
            else:
                argv = ["lldb-16", "--no-lldbinit", "-b", "-O", "plugin load " + plugin, "-o", "process launch",
                        "-k", "dispatch-trace", "-k", "process kill", "--", program, a.scenario]
            out = subprocess.run(argv, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL, cwd=a.workdir)
            text = out.stdout + out.stderr
            found = session.text_failures(text, expect=expected(a.scenario, tls), reject=oracle_test.REJECT)
            problems += ["%s live: %s" % (debugger, f) for f in found]
            if found:
                problems.append(text[-3000:])
    finally:
        core.unlink()
    if len(set(map(idle_threads_cut, every.values()))) > 1:
        problems.append("GDB and LLDB print different dispatch-trace --all:\n--- gdb\n%s--- lldb\n%s" % (every["gdb"], every["lldb"]))
    if len(set(map(idle_threads_cut, summaries.values()))) > 1:
        problems.append("GDB and LLDB print different summaries:\n--- gdb\n%s--- lldb\n%s" % (summaries["gdb"], summaries["lldb"]))
    if len(set(chains.values())) > 1:
        problems.append("GDB and LLDB print different chains:\n--- gdb\n%s--- lldb\n%s" % (chains["gdb"], chains["lldb"]))
    print("%s %s: %d problems" % (os.path.basename(program), a.scenario, len(problems)))
    for problem in problems[:6]:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
