"""The DispatchScope commands in GDB. Thin on purpose: the commands, their help and where
dispatch-break needs breakpoints come from the inspect library's tables; parse nothing, print what
it returns; GDB-specific work is only keeping GDB's breakpoints where the library says."""

import textwrap

import gdb

from . import target

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
    """A user command of the library's table (dscope_command_at): runs "<name> <arguments>" through
    the library; one line on any failure."""

    def __init__(self, name, summary, details, _flags):
        # `help NAME`: the summary, the usage line the library's usage errors print (one source for
        # both debuggers' help and the errors), then the details, wrapped (GDB prints help as it is).
        usage = "\nUsage: " + _inspect.usage(name).replace(" | ", "\n       ")
        wrapped = "\n\n".join(textwrap.fill(paragraph, _HELP_WIDTH) for paragraph in details.split("\n\n"))
        self.__doc__ = "%s%s\n\n%s" % (summary, usage, wrapped)
        super().__init__(name, gdb.COMMAND_DATA)
        self._name = name

    def invoke(self, argument, from_tty):
        try:
            # Non-stop or background execution: its memory is moving. (Only here: breakpoint
            # conditions and stop handlers run while GDB still counts the thread as running.)
            thread = gdb.selected_thread()
            if thread is not None and thread.is_running():
                gdb.write(_inspect.running_line)
                return
            self.run(argument.strip())
        except KeyboardInterrupt:  # Ctrl-C outside the library's run (Inspect.run answers it inside)
            _write_line(_inspect.interrupted_line)
        except Exception as e:  # never a traceback in the user's session
            gdb.write("dscope: %s\n" % (str(e).splitlines()[0] if str(e) else type(e).__name__))

    def run(self, argument):
        _run("%s %s" % (self._name, argument))

    def complete(self, text, word):
        """What the library says completes the word being typed (dscope_inspect_complete). GDB
        breaks words at ':' and '.' too, so its `word` is only the tail of that word (`m` in
        `aten::m`): each name the library gives is what to add to it."""
        try:
            additions = _inspect.complete(self._name, text)
        except Exception:  # completion offers nothing rather than a traceback
            return gdb.COMPLETE_NONE
        if additions is None:
            return gdb.COMPLETE_EXPRESSION
        return [(word or "") + addition for addition in additions]


# The width GDB's help paragraphs are wrapped to.
_HELP_WIDTH = 100


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
        values = [int(gdb.parse_and_eval("$" + name)) for name in _inspect.stop_registers]
        text, action, is_error = _inspect.break_hit(gdb.selected_thread().ptid[1], values)
        if text:
            _write_line(text)
        if action == target.HIT_SYNC_ON_RETURN:
            sp = int(gdb.parse_and_eval("$sp")) & 0xFFFFFFFFFFFFFFFF
            memory = gdb.selected_inferior().read_memory(sp, 8).tobytes()
            _command.returns.append(_Point("*0x%x" % int.from_bytes(memory, "little"), target.POINT_LOCATES, once=True))
        return action == target.HIT_STOP or is_error
    except Exception as e:
        gdb.write("dscope: dispatch-break: %s\n" % e)
        return True


class _Point(gdb.Breakpoint):
    """One internal breakpoint of dispatch-break: at a function the library names
    (dscope_break_point_at), on an address of dscope_breaks_locations (a kernel's or a registration
    function's entry: its stops are the library's), or where a registration returns (once). stop()
    does what `does` says (inspect.h DSCOPE_POINT_*)."""

    def __init__(self, spec, does, once=False):
        super().__init__(spec, internal=True)
        self.silent = True
        self.does, self.once, self.spent = does, once, False

    def stop(self):
        if self.does & target.POINT_HITS:
            return _dispatch_stop()
        if not self.spent:
            self.spent = self.once
            target.next_memory_generation()
            if self.does & target.POINT_ARMS:
                _command.arm()
            if self.does & target.POINT_LOCATES:
                _command.sync(keep=self)
        return False


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
    """dispatch-break: the library keeps the breakpoints, arms them and says everything
    (docs/DEBUG-INTERFACE.md); this keeps GDB's breakpoints where the library says: its points
    (dscope_break_point_at) and the addresses of dscope_breaks_locations."""

    def __init__(self, *row):
        super().__init__(*row)
        self._functions = {}  # name -> the _Point at that function
        self._kernels = {}  # address -> its _Point
        self.returns = []  # the _Points where registrations return
        target.break_hook["place"] = lambda: self._place_functions(hits=True)
        gdb.events.new_objfile.connect(self._on_new_objfile)
        gdb.events.stop.connect(sync_kernel_breaks)

    def run(self, argument):
        text, _ = _inspect.break_command(argument)
        if text:
            _write_line(text)
        self.sync()

    def arm(self):
        try:
            text, _ = _inspect.break_arm()
            if text:
                _write_line(text)
        except Exception as e:
            gdb.write("dscope: dispatch-break: %s\n" % e)

    def _place_functions(self, hits):
        """The library's function points: the one whose stops it answers (its hook) when it asks for
        it (place_break_hook: its runtime is loaded), the others as soon as a module defines them
        (a pending breakpoint would say "not defined")."""
        for where, name, does in _inspect.break_points:
            if where != target.POINT_FUNCTION or bool(does & target.POINT_HITS) != hits or name in self._functions:
                continue
            if hits or _defined(name):
                self._functions[name] = _Point(name, does)

    def sync(self, keep=None):
        """Keeps one breakpoint on each kernel entry and registration function the library names
        (none without real PyTorch); `keep`: the breakpoint whose stop() this runs in."""
        self._place_functions(hits=False)
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
                self._kernels[address] = _Point("*0x%x" % address, target.POINT_HITS)

    def _on_new_objfile(self, event):
        # The library's load points. (Real PyTorch's kernels are placed at its function points and
        # registrations' returns: a library's initializers register its kernels after this event.)
        if not _inspect.break_count():
            return
        filename = event.new_objfile.filename or ""
        for where, name, does in _inspect.break_points:
            if where == target.POINT_LOAD and name in filename:
                if does & target.POINT_ARMS:
                    self.arm()
                if does & target.POINT_LOCATES:
                    self.sync()
        self._place_functions(hits=False)


_command = None


def install(inspect):
    """One GDB command per row of the library's command table."""
    global _inspect, _command
    _inspect = inspect
    for name, summary, details, flags in inspect.commands:
        if flags & target.COMMAND_BREAKS:
            _command = DispatchBreakCommand(name, summary, details, flags)
        else:
            _DscopeCommand(name, summary, details, flags)
