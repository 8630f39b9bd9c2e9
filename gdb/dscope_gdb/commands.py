"""The DispatchScope commands in GDB. Thin on purpose: parse nothing, print what the inspect
library returns; GDB-specific work is only the dispatch-break breakpoint."""

import gdb

from . import target
from .target import INTERRUPTED

_inspect = None  # set by install()


def _write_line(text):
    """A library result as one or more lines (its last one ends in a newline). Ctrl-C while GDB
    writes it (GDB checks for one after writing) ends nothing more: the text is out."""
    try:
        gdb.write(text if text.endswith("\n") else text + "\n")
    except KeyboardInterrupt:
        pass


def _run(command_line):
    _write_line(_inspect.run(command_line)[0])


class _DscopeCommand(gdb.Command):
    """Base: runs "<name> <arguments>" through the inspect library; one line on any failure."""

    def __init__(self, name, complete_ops=False):
        # `help NAME`: the class's first line, the usage line the library's usage errors print
        # (one source for both debuggers' help and the errors), then the rest of the class's text.
        title, _, details = type(self).__doc__.partition("\n\n")
        usage = "\nUsage: " + _inspect.usage(name).replace(" | ", "\n       ")
        self.__doc__ = "%s%s\n\n%s" % (title, usage, details)
        super().__init__(name, gdb.COMMAND_DATA)
        self._name = name
        self._complete_ops = complete_ops

    def invoke(self, argument, from_tty):
        try:
            # Non-stop or background execution: its memory is moving. (Only here: breakpoint
            # conditions and stop handlers run while GDB still counts the thread as running.)
            thread = gdb.selected_thread()
            if thread is not None and thread.is_running():
                gdb.write("dscope: the process is running: stop it first (GDB: interrupt, LLDB: process interrupt)\n")
                return
            self.run(argument.strip())
        except KeyboardInterrupt:  # Ctrl-C outside the library's run (Inspect.run answers it inside)
            _write_line(INTERRUPTED)
        except Exception as e:  # never a traceback in the user's session
            gdb.write("dscope: %s\n" % (str(e).splitlines()[0] if str(e) else type(e).__name__))

    def run(self, argument):
        _run("%s %s" % (self._name, argument))

    # Options whose value is a dispatch key; the values of these are no operator names either.
    _KEY_OPTIONS = ("--key", "--missing")
    _OPTIONS_WITH_VALUES = _KEY_OPTIONS + ("--delete", "--thread", "--max-frames", "--explain")

    def complete(self, text, word):
        """Operator names where the operator goes, dispatch key names after --key and --missing.
        GDB breaks words at ':' and '.' too, so `word` is only the tail of a name (`m` in
        `aten::m`): complete the whole name, hand back its tail."""
        words = text.split() + ([""] if not text or text[-1].isspace() else [])
        typing, word = words[-1], word or ""
        if not self._complete_ops or not typing.endswith(word):
            return gdb.COMPLETE_NONE
        # The operator is the one word that is no option and no option's value.
        operators = [i for i, w in enumerate(words)
                     if not w.startswith("-") and (i == 0 or words[i - 1] not in self._OPTIONS_WITH_VALUES)]
        try:
            if len(words) > 1 and words[-2] in self._KEY_OPTIONS:
                names = _inspect.complete_keys(typing)
            elif operators == [len(words) - 1]:
                names = _inspect.complete_ops(typing)
            else:
                return gdb.COMPLETE_NONE
            return [name[len(typing) - len(word):] for name in names]
        except Exception:
            return gdb.COMPLETE_NONE


class KeysetCommand(_DscopeCommand):
    """Decode a DispatchKeySet.

EXPR is any expression of type DispatchKeySet, or a tensor (Tensor or TensorImpl, or a pointer
or reference to one) for its key set, or a raw 64-bit value (e.g. a number copied from
PyTorch's ks.raw_repr()). Prints the keys in c10's DispatchKeySet(...) order, the highest-priority
key and its dispatch-table slot. --tls shows the thread's include/exclude sets (from the
runtime's thread records, so it also works in core files)."""

    def __init__(self):
        super().__init__("keyset")

    def complete(self, text, word):
        """An expression completes as in `print` (variables, members, functions); an option not."""
        typing = "" if not text or text[-1].isspace() else text.split()[-1]
        return gdb.COMPLETE_NONE if typing.startswith("-") else gdb.COMPLETE_EXPRESSION


class OpTableCommand(_DscopeCommand):
    """Show an operator's kernels.

Prints PyTorch's _dispatch_dump (registered kernels) and _dispatch_dump_table (the computed
dispatch table) with each kernel's symbol and source line. Also: op-table --list [PATTERN],
op-table --missing KEY (operators with no kernel for KEY)."""

    def __init__(self):
        super().__init__("op-table", complete_ops=True)


class DispatchTraceCommand(_DscopeCommand):
    """Show the dispatch chain of a thread.

Read from the runtime's per-thread dispatch records, not from the native stack, so it answers in
well under a second even for a 100 000-frame stack overflow: the entry call, the repeating
cycle folded, and a diagnosis of infinite redispatch with the fix.

dispatch-trace --frames rebuilds the chain from GDB's stack instead (for
DSCOPE_DISPATCH_RECORDS=OFF builds): it walks at most 20 000 stack frames (inlined calls not
counted) from the innermost, needs the runtime's DWARF, and prints the same record lines."""

    def __init__(self):
        super().__init__("dispatch-trace")


class DispatchSummaryCommand(_DscopeCommand):
    """Summarize every thread's dispatch state, with a crash signature.

Every thread's dispatch state in one screen and a one-line crash signature for grouping crashes
of the same cause (infinite-redispatch OP KEY kernel=NAME, missing-kernel OP KEY, in-kernel OP
KEY, tls-not-restored CHANGE, no-dispatch). On DispatchScope's runtime from the per-thread
dispatch records; on PyTorch from each thread's innermost 400 stack frames. --json: the same
in the versioned schema of docs/JSON-SCHEMA.md."""

    def __init__(self):
        super().__init__("dispatch-summary")


def _dispatch_stop():
    """stop() of a dispatch-break location: the library decides from the registers at the function's
    first instruction what this stop is and the front end does as it says: stop (a dispatch a
    breakpoint asks for, with why it went there), go on (another kernel's), or go on and place the
    kernels again where this registration returns. (A stop() may make breakpoints in GDB 13, never
    delete its own: spent ones go at the next placing.)"""
    # A hit that continues (stop() returning False) sends GDB no event: the memory the library
    # kept from the last hit is not this one's.
    target.next_memory_generation()
    try:
        # $reg rather than a gdb.Frame: making a Frame object makes GDB unwind the caller
        # too, reading the debug info of its whole compilation unit (~0.3 s on a first stop).
        pc, sp, *args = (int(gdb.parse_and_eval("$" + r)) for r in ("pc", "sp", "rdi", "rsi", "rdx", "rcx", "r8", "r9"))
        text, action, is_error = _inspect.break_hit(gdb.selected_thread().ptid[1], pc, sp, args)
        if text:
            _write_line(text)
        if action == target.HIT_SYNC_ON_RETURN:
            memory = gdb.selected_inferior().read_memory(sp, 8).tobytes()
            _command.returns.append(_SyncPoint("*0x%x" % int.from_bytes(memory, "little"), once=True))
        return action == target.HIT_STOP or is_error
    except Exception as e:
        gdb.write("dscope: dispatch-break: %s\n" % e)
        return True


class _BreakHook(gdb.Breakpoint):
    """The one breakpoint on dscope_debug_break_hook: the runtime calls it only for dispatches
    that match the armed filter, so GDB never stops on other operators."""

    def __init__(self):
        super().__init__("dscope_debug_break_hook", internal=True)
        self.silent = True

    def stop(self):
        return _dispatch_stop()


class _LocationBreak(gdb.Breakpoint):
    """A breakpoint on one code address the library names in real PyTorch: a kernel's entry (a
    trampoline several kernels share goes on unless the kernel it runs is one asked for) or a
    registration function's."""

    def __init__(self, address):
        super().__init__("*0x%x" % address, internal=True)
        self.silent = True

    def stop(self):
        return _dispatch_stop()


class _SyncPoint(gdb.Breakpoint):
    """Where the kernels of real PyTorch are placed again, then on: once its static initializers
    have registered them (a C++ program's main, torch._C's module init in Python), and where a
    registration returns (once)."""

    def __init__(self, spec, once=False):
        super().__init__(spec, internal=True)
        self.silent = True
        self.once, self.spent = once, False

    def stop(self):
        if not self.spent:
            self.spent = self.once
            target.next_memory_generation()
            _command.sync(keep=self)
        return False


_SYNC_POINTS = ("main", "PyInit__C")


def _defined(name):
    try:
        gdb.parse_and_eval("&'%s'" % name)
        return True
    except gdb.error:
        return False


def sync_kernel_breaks(_event=None):
    if _command is not None:
        _command.sync()


class DispatchBreakCommand(_DscopeCommand):
    """Stop when an operator is dispatched.

The runtime checks the operator name (and key) itself and calls a hook only on a match, so the
program runs at full speed between stops. OP is a full name (aten::add.Tensor) or a base name
(aten::add, every overload). Set before `run` (or before the runtime is loaded), it stays pending
and arms when the runtime loads. At most 16: the runtime's filter holds 16 entries.

In a process with real PyTorch (libtorch, no DispatchScope runtime) the breakpoints go on the
operator's kernels themselves, placed once libtorch has registered them (at main, or when
Python initializes torch._C), again where a registration for the operator returns, and at every stop. Each stop
prints why the dispatch went to that kernel; `dispatch-break --why [--json]` prints it again."""

    def __init__(self):
        super().__init__("dispatch-break", complete_ops=True)
        self._hook = None
        self._kernels = {}  # address -> its _LocationBreak
        self._sync_points = {}  # name -> _SyncPoint
        self.returns = []  # the _SyncPoints where registrations return
        target.break_hook["place"] = self._place_hook
        gdb.events.new_objfile.connect(self._on_new_objfile)
        gdb.events.stop.connect(sync_kernel_breaks)

    def run(self, argument):
        # The library keeps the breakpoints, arms them and says everything (docs/DEBUG-INTERFACE.md).
        text, _ = _inspect.break_command(argument)
        if text:
            _write_line(text)
        self.sync()

    def _place_hook(self):
        if self._hook is None:
            self._hook = _BreakHook()

    def _place_sync_points(self):
        for name in _SYNC_POINTS:
            # Once the program or a library defines it (a pending breakpoint would say "not defined").
            if name not in self._sync_points and _defined(name):
                self._sync_points[name] = _SyncPoint(name)

    def sync(self, keep=None):
        """Keeps one breakpoint on each kernel entry and registration function the library names
        (none without real PyTorch); `keep`: the breakpoint whose stop() this runs in."""
        self._place_sync_points()
        spent = [r for r in self.returns if r.spent and r is not keep]
        for point in spent:
            self.returns.remove(point)
            point.delete()
        if gdb.selected_inferior().pid == 0:
            return
        wanted, error = _inspect.break_locations()
        if error:
            _write_line(error)
        for address in [a for a in self._kernels if a not in wanted]:
            self._kernels.pop(address).delete()
        for address in wanted:
            if address not in self._kernels:
                self._kernels[address] = _LocationBreak(address)

    def _on_new_objfile(self, event):
        # Real PyTorch's kernels are not placed here: a library's initializers register its
        # kernels after this event (they are placed at the sync points and registrations' returns).
        if _inspect.break_count() and "dscope_runtime" in (event.new_objfile.filename or ""):
            try:
                text, _ = _inspect.break_arm()
                if text:
                    _write_line(text)
            except Exception as e:
                gdb.write("dscope: dispatch-break: %s\n" % e)
        if _inspect.break_count():
            self._place_sync_points()


_command = None


def install(inspect):
    global _inspect
    _inspect = inspect
    KeysetCommand()
    OpTableCommand()
    DispatchTraceCommand()
    DispatchSummaryCommand()
    global _command
    _command = DispatchBreakCommand()
