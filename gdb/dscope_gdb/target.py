"""ctypes binding of libdscope_inspect (inspect/include/dscope/inspect.h) and the GDB side of its
dscope_target: memory, symbols, expressions and threads come from GDB's Python API. Every
decode, every format and every argument parse lives in the C++ library; this module only
adapts GDB to it, so GDB and LLDB print the same text."""

import contextlib
import ctypes
import sys

import gdb
from dscope_printers import value_types

_READ = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_void_p, ctypes.c_uint64)
_WRITE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_void_p, ctypes.c_uint64)
_FIND = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_uint64))
_MODULE_AT = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_uint64, ctypes.POINTER(ctypes.c_uint64),
                             ctypes.c_void_p, ctypes.c_uint64)


class _Value(ctypes.Structure):  # inspect.h dscope_value
    _fields_ = [("kind", ctypes.c_uint32), ("bits", ctypes.c_uint64), ("address", ctypes.c_uint64),
                ("size", ctypes.c_uint64), ("type", ctypes.c_char * 512), ("shown", ctypes.c_char * 512)]


_EVALUATE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(_Value),
                             ctypes.c_void_p, ctypes.c_uint64)
_FRAME_VARIABLE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int,
                                   ctypes.POINTER(_Value), ctypes.c_void_p, ctypes.c_uint64)
_THREAD_TID = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int64, ctypes.POINTER(ctypes.c_int64))
_STACK_FRAME = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int64, ctypes.c_uint64,
                                ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_uint64))
_FRAME_WALK_END = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int64, ctypes.c_uint64)
_THREAD_EXISTS = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int64)
_EXECUTABLE_BUILD_ID = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64)
_PLACE_BREAK_HOOK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)
_THREAD_POINTER = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int64, ctypes.POINTER(ctypes.c_uint64))
_MAPPING_STARTS = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint64), ctypes.c_uint64,
                                   ctypes.POINTER(ctypes.c_uint64))


class _BreakPoint(ctypes.Structure):  # inspect.h dscope_break_point
    _fields_ = [("where", ctypes.c_uint32), ("name", ctypes.c_char_p), ("does", ctypes.c_uint32)]


class _CommandHelp(ctypes.Structure):  # inspect.h dscope_command_help
    _fields_ = [("name", ctypes.c_char_p), ("summary", ctypes.c_char_p), ("details", ctypes.c_char_p),
                ("flags", ctypes.c_uint32)]


# The name the library knows this front end by (its break points and help differ per debugger).
_FRONT_END = b"gdb"


class _ValueType(ctypes.Structure):
    _fields_ = [("type_name", ctypes.c_char_p), ("summary_type", ctypes.c_char_p), ("word_size", ctypes.c_uint32),
                ("flags", ctypes.c_uint32)]


class _Target(ctypes.Structure):
    _fields_ = [
        ("ctx", ctypes.c_void_p),
        ("read_memory", _READ),
        ("write_memory", _WRITE),
        ("find_symbol", _FIND),
        ("module_at", _MODULE_AT),
        ("evaluate", _EVALUATE),
        ("frame_variable", _FRAME_VARIABLE),
        ("thread_tid", _THREAD_TID),
        ("selected_tid", ctypes.c_int64),
        ("stack_frame", _STACK_FRAME),
        ("frame_cap", ctypes.c_uint64),
        ("frame_walk_end", _FRAME_WALK_END),
        ("thread_exists", _THREAD_EXISTS),
        ("mapping_starts", _MAPPING_STARTS),
        ("executable_build_id", _EXECUTABLE_BUILD_ID),
        ("is_core", ctypes.c_int),
        ("place_break_hook", _PLACE_BREAK_HOOK),
        ("memory_generation", ctypes.c_uint64),
        ("thread_pointer", _THREAD_POINTER),
        ("sysroot", ctypes.c_char_p),
        ("pid", ctypes.c_int64),
        ("sysroot_setting", ctypes.c_char_p),
    ]

# How a GDB user gives the library the root a process ran in (inspect.h sysroot_setting): GDB reads
# the libraries' files through it only when it is set before the process or core is opened.
_SYSROOT_SETTING = b'set sysroot DIR (before the attach or core: gdb -iex "set sysroot DIR" ...)'


def _sysroot():
    """GDB's sysroot as a directory of this machine, or "" (its default "target:" reads the target's
    own files, which for a native process are this machine's paths)."""
    try:
        root = gdb.parameter("sysroot") or ""
    except gdb.error:
        return ""
    if root.startswith("target:"):
        root = root[len("target:"):]
    return root if root.startswith("/") and root != "/" else ""

_INTERRUPTED = object()  # Inspect._call's answer after a Ctrl-C

# dscope_value_kind (inspect.h)
_KIND_INTEGER, _KIND_OBJECT, _KIND_POINTER, _KIND_OTHER = range(4)
_MASK64 = 0xFFFFFFFFFFFFFFFF

# dscope_frames_end (inspect.h)
_FRAMES_OUTERMOST, _FRAMES_UNREADABLE, _FRAMES_CORRUPT, _FRAMES_GONE, _FRAMES_CAP = range(5)


def _copy_out(text, out, size):
    data = text.encode()[: max(size - 1, 0)] + b"\0"
    ctypes.memmove(out, data, len(data))


# Each callback answers a C caller: it must never raise, so every failure is a nonzero status.
# Ctrl-C arrives as a KeyboardInterrupt in whichever Python code runs: it fails that call and every
# later one of the command (the walk ends), and Inspect.run answers `dscope: interrupted` instead of
# the command's text. It can also land where no `try` catches it (before a callback's `try`, or
# while ctypes converts its result): ctypes then hands it to sys.unraisablehook, which Inspect.run
# points at _unraisable for the command, and C gets an unspecified value back.
_interrupt = {"seen": False}


def _failed(error, status=1):
    if isinstance(error, KeyboardInterrupt):
        _interrupt["seen"] = True
    return status


def _callback(prototype, failed=1):
    """Makes fn a dscope_target callback of the C prototype: any failure (gdb.error, unreadable
    memory, no process, Ctrl-C) is status `failed`, and after a Ctrl-C every later call of the
    command fails at once, so a walk ends."""
    def wrap(fn):
        @prototype
        def callback(*args):
            try:
                return failed if _interrupt["seen"] else fn(*args)
            except BaseException as e:
                return _failed(e, failed)
        return callback
    return wrap


@contextlib.contextmanager
def _interrupts_recorded():
    """While the block runs, an exception that no `try` catches in a ctypes callback is no
    traceback on the user's screen: a KeyboardInterrupt is recorded, anything else is reported by
    the hook that was in place (our callbacks catch everything else themselves)."""
    previous = sys.unraisablehook

    def hook(unraisable):
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            _interrupt["seen"] = True
        else:
            previous(unraisable)

    sys.unraisablehook = hook
    try:
        yield
    finally:
        sys.unraisablehook = previous


@_callback(_READ)
def _read_memory(_ctx, addr, out, size):
    ctypes.memmove(out, bytes(gdb.selected_inferior().read_memory(addr, size)), size)
    return 0


@_callback(_WRITE)
def _write_memory(_ctx, addr, data, size):
    gdb.selected_inferior().write_memory(addr, ctypes.string_at(data, size))
    return 0


@_callback(_FIND)
def _find_symbol(_ctx, name, out):
    # No process and no core (not started yet, or exited): GDB would read the runtime's file
    # as if it were memory (a dispatcher that "does not exist yet"); LLDB finds nothing there.
    if gdb.selected_inferior().pid == 0:
        return 1
    address = symbol_address(name.decode())
    if address is None:
        return 1
    out[0] = address
    return 0


def symbol_address(name):
    """A global's address, from .dynsym alone (no DWARF needed), or None when no objfile has it.
    Cached, misses too: in a process with hundreds of libraries (Python with torch) a lookup that
    finds nothing searches them all, milliseconds for every command that asks."""
    if name not in _symbol_addresses:
        try:
            with cxx_language():
                _symbol_addresses[name] = int(gdb.parse_and_eval("(unsigned long)&'%s'" % name))
        except gdb.error:
            _symbol_addresses[name] = None
    return _symbol_addresses[name]


@contextlib.contextmanager
def _setting(name, value, already, restore):
    """`set NAME VALUE` while the block runs, then `set NAME RESTORE`; nothing when `already`."""
    if already:
        yield
        return
    gdb.execute("set %s %s" % (name, value), to_string=True)
    try:
        yield
    finally:
        gdb.execute("set %s %s" % (name, restore), to_string=True)


def demangled_names():
    """C++ names as the library reads them (frames, kernel symbols), even under `set print demangle off`."""
    return _setting("print demangle", "on", gdb.parameter("print demangle"), "off")


def cxx_language():
    """Our own expressions are C++ whatever the language in effect (`set language rust` parses
    `&name` as Rust and finds nothing; with `set language d`, GDB 13 aborts on it)."""
    setting = gdb.parameter("language")  # "auto" follows the frame's language
    current = gdb.current_language() if hasattr(gdb, "current_language") else setting  # GDB >= 12
    return _setting("language", "c++", current in ("c", "c++"), setting)


def _type_name(t):
    return t.tag or t.name or str(t)


def _object_bits(value):
    """The bytes of a small struct that is not in memory, little endian, from its members (GDB 13
    has no Value.bytes)."""
    bits = 0
    for field in value.type.strip_typedefs().fields():
        if not hasattr(field, "bitpos") or not field.name:  # a static member
            continue
        member = value[field]
        part = _object_bits(member) if member.type.strip_typedefs().code == gdb.TYPE_CODE_STRUCT else int(member)
        width = field.bitsize or 8 * field.type.sizeof
        bits |= (part & ((1 << width) - 1)) << field.bitpos
    return bits


def describe(value, out):
    """Fills the dscope_value out (inspect.h) for a gdb.Value: a reference as its referent."""
    t = value.type.strip_typedefs()
    if t.code in (gdb.TYPE_CODE_REF, gdb.TYPE_CODE_RVALUE_REF):
        value = value.referenced_value()
        t = value.type.strip_typedefs()
    t = t.unqualified()
    out.shown = str(value.type).encode()[:511]
    out.type = _type_name(t).encode()[:511]
    out.size = t.sizeof
    if t.code == gdb.TYPE_CODE_STRUCT:
        out.kind = _KIND_OBJECT
        if value.address is not None:
            out.address = int(value.address) & _MASK64
        elif t.sizeof <= 8:
            out.bits = _object_bits(value)
        return
    if t.code == gdb.TYPE_CODE_PTR:
        pointee = t.target().strip_typedefs().unqualified()
        if pointee.code == gdb.TYPE_CODE_FUNC:
            out.kind = _KIND_OTHER  # a function's address is no number, as the function itself is not
            return
        out.bits = int(value) & _MASK64
        out.kind = _KIND_POINTER if pointee.code == gdb.TYPE_CODE_STRUCT else _KIND_INTEGER
        if out.kind == _KIND_POINTER:
            out.type, out.size = _type_name(pointee).encode()[:511], pointee.sizeof
        return
    if t.code in (gdb.TYPE_CODE_INT, gdb.TYPE_CODE_ENUM, gdb.TYPE_CODE_BOOL, gdb.TYPE_CODE_CHAR):
        out.kind, out.bits = _KIND_INTEGER, int(value) & _MASK64
        return
    out.kind = _KIND_OTHER


@_callback(_EVALUATE)
def _evaluate(_ctx, expr, out, err, err_size):
    try:
        describe(gdb.parse_and_eval(expr.decode()), out.contents)
        return 0
    except Exception as e:  # gdb.error: malformed expression, no symbol, ...
        _copy_out(str(e).splitlines()[0] if str(e) else "cannot evaluate", err, err_size)
        return 1


def _frame_symbols(frame):
    """The frame's own variables and parameters, innermost block first: never a global
    (frame.read_var(name) goes on through every objfile's globals for a name the frame lacks).
    RuntimeError for a frame without debug information."""
    block = frame.block()
    while block is not None:
        yield from block
        if block.function is not None:  # the function's outermost block: its parameters
            return
        block = block.superblock


@_callback(_FRAME_VARIABLE, failed=2)
def _frame_variable(_ctx, name, parameter, out, err, err_size):
    try:
        frame = gdb.selected_frame()
        symbols = list(_frame_symbols(frame))
    except (gdb.error, RuntimeError):  # no frame, or no debug information for it
        return 3
    symbol = next((s for s in symbols if s.name == name.decode() and (s.is_argument or not parameter)), None)
    if symbol is None:
        return 1
    try:
        describe(frame.read_var(symbol), out.contents)
        return 0
    except Exception as e:  # optimized out, unreadable
        _copy_out(str(e).splitlines()[0] if str(e) else type(e).__name__, err, err_size)
        return 2


@_callback(_THREAD_TID)
def _thread_tid(_ctx, number, out):
    for thread in gdb.selected_inferior().threads():
        if thread.num == number:
            out[0] = thread.ptid[1]
            return 0
    return 1


@_callback(_THREAD_EXISTS, failed=-1)  # -1: cannot tell
def _thread_exists(_ctx, tid):
    return int(any(thread.ptid[1] == tid for thread in gdb.selected_inferior().threads()))


@_callback(_THREAD_POINTER)
def _thread_pointer(_ctx, tid, out):
    """The thread pointer register (the library names it) of the thread whose LWP is tid, read in
    its innermost frame; the selected thread and frame are left as they were."""
    thread = next((t for t in gdb.selected_inferior().threads() if t.ptid[1] == tid), None)
    if thread is None:
        return 1
    selected = gdb.selected_thread()
    frame = gdb.selected_frame() if selected is not None else None
    try:
        thread.switch()
        out[0] = int(gdb.newest_frame().read_register(_registers["thread_pointer"])) & _MASK64
    finally:
        if selected is not None and selected != thread:
            selected.switch()
            frame.select()
    return 0


def _file_mappings():
    """(start, path) of each mapping of `info proc mappings` that begins at offset 0 of its file (a
    live process's /proc maps, or a core's NT_FILE note): Start Addr, End Addr, Size, Offset,
    [Perms,] objfile. Kept until the objfiles change, like symbol addresses: a process with
    hundreds of libraries (a Python process with torch) takes milliseconds to list."""
    if _mappings is None:
        found = []
        for line in gdb.execute("info proc mappings", to_string=True).splitlines():
            words = line.split()
            if len(words) >= 4 and words[0].startswith("0x") and words[3] == "0x0":
                found.append((int(words[0], 16), words[-1] if len(words) >= 5 and words[-1].startswith("/") else ""))
        globals()["_mappings"] = found
    return _mappings


_mappings = None  # _file_mappings' answer, forgotten with the symbol addresses


@_callback(_MAPPING_STARTS)
def _mapping_starts(_ctx, starts, limit, count):
    n = 0
    for start, _path in _file_mappings():
        if n < limit:
            starts[n] = start
            n += 1
    count[0] = n
    return 0


@_callback(_MODULE_AT)
def _module_at(_ctx, index, start, path, size):
    if index == 0:
        seen = set()
        _modules[:] = [(a, p) for a, p in _file_mappings() if p and not (p in seen or seen.add(p))]
    if index >= len(_modules):
        return 1
    start[0] = _modules[index][0]
    _copy_out(_modules[index][1], path, size)
    return 0


_modules = []  # _module_at's list, read at index 0


@_callback(_EXECUTABLE_BUILD_ID)
def _executable_build_id(_ctx, out, size):
    """The build-id of the program file GDB opened."""
    progspace = gdb.current_progspace()
    for objfile in progspace.objfiles() if progspace is not None and progspace.filename else ():
        if objfile.filename == progspace.filename and objfile.build_id:
            _copy_out(objfile.build_id, out, size)
            return 0
    return 1


# ---- the native stack, for dispatch-trace --frames: the library asks for stack frame after stack
# frame of one thread, outwards; the frames walked are kept for the command (one walk per command).

# Frames of GDB's that are no stack frame of their own: a call inlined into the next outer frame,
# and a tail call GDB rebuilds from DWARF call sites (its stack frame was reused by its callee).
_NOT_STACK_FRAMES = (gdb.INLINE_FRAME, gdb.TAILCALL_FRAME)


class _StackWalk:
    def __init__(self):
        self.reset()

    def reset(self):
        self.tid = None
        self.frames = []  # the stack frames walked, innermost first
        self.last = None  # the outermost frame GDB listed (any type)
        self.complete = False
        self.previous = None  # (thread, frame) selected before the walk switched thread

    def frame(self, tid, level):
        """GDB's stack frame `level` (inlined and tail calls skipped) of the thread whose LWP is
        tid, or None past the outermost."""
        if tid != self.tid:
            self._start(tid)
        while len(self.frames) <= level and not self.complete:
            try:
                older = self.last.older() if self.last else gdb.newest_frame()
            except gdb.error:  # the unwinder gave up (corrupt stack): what we have is the stack
                older = None
            if older is None:
                self.complete = True
                break
            self.last = older
            if older.type() not in _NOT_STACK_FRAMES:
                self.frames.append(older)
        return self.frames[level] if level < len(self.frames) else None

    def end(self, tid):
        """Why GDB lists no frame past the ones walked of thread tid (dscope_frames_end)."""
        if _process_gone():
            return _FRAMES_GONE
        if tid != self.tid or self.last is None:
            return _FRAMES_OUTERMOST
        limit = gdb.parameter("backtrace limit")
        if limit and self.last.level() + 1 >= limit:
            return _FRAMES_CAP
        reason = self.last.unwind_stop_reason()
        # Below UNAVAILABLE (GDB's UNWIND_FIRST_ERROR) no error: `backtrace` says nothing either.
        if reason in (gdb.FRAME_UNWIND_NO_REASON, gdb.FRAME_UNWIND_NULL_ID, gdb.FRAME_UNWIND_OUTERMOST):
            return _FRAMES_OUTERMOST
        if reason in (gdb.FRAME_UNWIND_UNAVAILABLE, gdb.FRAME_UNWIND_MEMORY_ERROR):
            return _FRAMES_UNREADABLE
        return _FRAMES_CORRUPT

    def _start(self, tid):
        thread = next((t for t in gdb.selected_inferior().threads() if t.ptid[1] == tid), None)
        if thread is None:
            raise gdb.error("no thread with LWP %d" % tid)
        if self.previous is None and gdb.selected_thread() is not None:
            self.previous = (gdb.selected_thread(), gdb.selected_frame())
        thread.switch()
        self.tid, self.frames, self.last, self.complete = tid, [], None, False

    def restore(self):
        if self.previous is not None:
            try:
                self.previous[0].switch()
                self.previous[1].select()
            except gdb.error:
                pass
        self.reset()


_walk = _StackWalk()


def _process_gone():
    """Whether the selected inferior is a local process that has exited or been killed since GDB
    last stopped it (GDB notices only when it next waits for it; its memory reads fail until then).
    A core file, or a process GDB cannot see from here (remote), is never gone."""
    inferior = gdb.selected_inferior()
    connection = getattr(inferior, "connection", None)  # GDB >= 11
    if inferior.pid == 0 or connection is None or connection.type != "native":
        return False
    try:
        with open("/proc/%d/stat" % inferior.pid) as f:
            state = f.read().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return True
    return state in ("Z", "X", "x")  # a zombie: dead, not yet reaped by GDB


@_callback(_STACK_FRAME)
def _stack_frame(_ctx, tid, level, pc, sp):
    frame = _walk.frame(tid, level)
    if frame is None:
        return 1
    pc[0] = frame.pc()
    sp[0] = int(frame.read_register("sp")) & 0xFFFFFFFFFFFFFFFF
    return 0


@_callback(_FRAME_WALK_END, failed=_FRAMES_OUTERMOST)
def _frame_walk_end(_ctx, tid, _level):
    return _walk.end(tid)


# The target's memory generation (inspect.h memory_generation): a new one after anything that may
# change what the library reads (the program ran, libraries or a core were loaded, memory was
# written, a function was called), so that it keeps pages between commands only while none did.
_generation = {"count": 1}


def next_memory_generation(_event=None):
    """The target's memory may have changed: after the events below, and after a breakpoint's
    stop() that let the program go on (GDB sends no event for that)."""
    _generation["count"] += 1


def _memory_generation():
    inferior = gdb.selected_inferior()
    if inferior is None or inferior.pid == 0:
        return 0
    return (_generation["count"] << 16) | (inferior.num & 0xFFFF)


for _event in ("cont", "stop", "exited", "new_objfile", "clear_objfiles", "memory_changed", "register_changed",
               "inferior_call", "new_inferior", "inferior_deleted", "new_thread"):
    getattr(gdb.events, _event).connect(next_memory_generation)


# Symbol addresses stay valid while the loaded objfiles stay the same.
_symbol_addresses = {}


def _forget_addresses(_event=None):
    global _mappings
    _symbol_addresses.clear()
    _mappings = None


gdb.events.new_objfile.connect(_forget_addresses)
gdb.events.clear_objfiles.connect(_forget_addresses)
gdb.events.exited.connect(_forget_addresses)  # a re-run relocates the program anew


# What places GDB's breakpoint on the runtime's hook (commands.py), asked by the library
# before it writes dispatch breakpoints into the runtime.
break_hook = {"place": None}


@_callback(_PLACE_BREAK_HOOK)
def _place_break_hook(_ctx):
    break_hook["place"]()
    return 0


def _is_core():
    connection = gdb.selected_inferior().connection
    return connection is not None and connection.type == "core"


# inspect.h dscope_hit_action
HIT_CONTINUE, HIT_STOP, HIT_SYNC_ON_RETURN = 0, 1, 2
# inspect.h dscope_point_where, DSCOPE_POINT_* and DSCOPE_COMMAND_*
POINT_FUNCTION, POINT_LOAD = 0, 1
POINT_HITS, POINT_ARMS, POINT_LOCATES = 1, 2, 4
COMMAND_BREAKS, COMMAND_COMPLETES_OPERATOR, COMMAND_COMPLETES_EXPRESSION = 1, 2, 4
# inspect.h dscope_completes and dscope_message
_COMPLETES_NAMES, _COMPLETES_EXPRESSION = 0, 1
_MESSAGE_PROCESS_RUNNING, _MESSAGE_INTERRUPTED = 0, 1

# The registers the library names (dscope_thread_pointer_register), for the callbacks; set by Inspect.
_registers = {"thread_pointer": None}


class Inspect:
    """The loaded library, one target wired to GDB, and the session's dispatch breakpoints."""

    def __init__(self, library_path):
        self._lib = ctypes.CDLL(library_path)
        target, is_error, table = ctypes.POINTER(_Target), ctypes.POINTER(ctypes.c_int), ctypes.c_void_p
        strings = {  # the functions that return a string to free
            "dscope_inspect_run": [target, ctypes.c_char_p, is_error],
            "dscope_inspect_usage": [ctypes.c_char_p, is_error],
            "dscope_inspect_complete": [target, ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)],
            "dscope_frame_key": [target, ctypes.c_char_p, is_error],
            "dscope_breaks_command": [table, target, ctypes.c_char_p, is_error],
            "dscope_breaks_arm": [table, target, is_error],
            "dscope_breaks_hit_registers": [table, target, ctypes.c_int64, ctypes.POINTER(ctypes.c_uint64),
                                            ctypes.c_uint64, ctypes.POINTER(ctypes.c_int), is_error],
            "dscope_breaks_locations": [table, target, is_error],
        }
        for name, argtypes in strings.items():
            getattr(self._lib, name).restype = ctypes.c_void_p
            getattr(self._lib, name).argtypes = argtypes
        self._lib.dscope_inspect_free.argtypes = [ctypes.c_void_p]
        self._lib.dscope_value_type_at.restype = ctypes.POINTER(_ValueType)
        self._lib.dscope_value_type_at.argtypes = [ctypes.c_uint64]
        self._lib.dscope_frame_op_is.argtypes = [target, ctypes.c_char_p, ctypes.c_char_p,
                                                 ctypes.POINTER(ctypes.c_void_p)]
        self._lib.dscope_value_summary.restype = ctypes.POINTER(value_types.Summary)
        self._lib.dscope_value_summary.argtypes = [target, ctypes.POINTER(_Value)]
        self._lib.dscope_summary_free.argtypes = [ctypes.POINTER(value_types.Summary)]
        self._lib.dscope_breaks_new.restype = ctypes.c_void_p
        self._lib.dscope_breaks_count.argtypes = [ctypes.c_void_p]
        self._breaks = self._lib.dscope_breaks_new()
        # The library's static tables (inspect.h, front ends): read once.
        self._lib.dscope_break_point_at.restype = ctypes.POINTER(_BreakPoint)
        self._lib.dscope_break_point_at.argtypes = [ctypes.c_char_p, ctypes.c_uint64]
        self._lib.dscope_command_at.restype = ctypes.POINTER(_CommandHelp)
        self._lib.dscope_command_at.argtypes = [ctypes.c_char_p, ctypes.c_uint64]
        self._lib.dscope_stop_register_at.restype = ctypes.c_char_p
        self._lib.dscope_stop_register_at.argtypes = [ctypes.c_uint64]
        self._lib.dscope_thread_pointer_register.restype = ctypes.c_char_p
        self._lib.dscope_inspect_message.restype = ctypes.c_char_p
        self._lib.dscope_inspect_message.argtypes = [ctypes.c_int]
        self.break_points = [(row.where, row.name.decode(), row.does)
                             for row in _rows(lambda i: self._lib.dscope_break_point_at(_FRONT_END, i))]
        self.commands = [(row.name.decode(), row.summary.decode(), row.details.decode(), row.flags)
                         for row in _rows(lambda i: self._lib.dscope_command_at(_FRONT_END, i))]
        self.stop_registers = [name.decode() for name in _rows(self._lib.dscope_stop_register_at)]
        _registers["thread_pointer"] = self._lib.dscope_thread_pointer_register().decode()
        # The lines GDB prints itself, each with its newline: a command while the process runs,
        # one that Ctrl-C ended.
        self.running_line, self.interrupted_line = (self._lib.dscope_inspect_message(which).decode() + "\n"
                                                    for which in (_MESSAGE_PROCESS_RUNNING, _MESSAGE_INTERRUPTED))
        self._target = _Target(None, _read_memory, _write_memory, _find_symbol, _module_at, _evaluate,
                               _frame_variable, _thread_tid, 0, _stack_frame, 0, _frame_walk_end, _thread_exists, _mapping_starts,
                               _executable_build_id, 0, _place_break_hook, 0, _thread_pointer)

    def _take(self, pointer):
        try:
            return ctypes.string_at(pointer).decode(errors="replace")
        finally:
            self._lib.dscope_inspect_free(pointer)

    def _call(self, call):
        """call(target) in a command's context (the selected thread, Ctrl-C recorded, demangled
        names, the stack walk's frame restored): what it returns, or _INTERRUPTED."""
        self._target.selected_tid = _selected_tid()
        self._target.is_core = _is_core()
        self._target.memory_generation = _memory_generation()
        self._target.sysroot = _sysroot().encode()
        self._target.pid = 0 if self._target.is_core else (gdb.selected_inferior().pid or 0)
        self._target.sysroot_setting = _SYSROOT_SETTING
        _interrupt["seen"] = False
        result = None
        try:
            with _interrupts_recorded(), demangled_names():
                result = call(ctypes.byref(self._target))
        except KeyboardInterrupt:  # between the callbacks, in this module's own code
            _interrupt["seen"] = True
        finally:
            try:
                _walk.restore()
            except KeyboardInterrupt:
                _interrupt["seen"] = True
        if _interrupt["seen"]:
            _interrupt["seen"] = False
            return _INTERRUPTED
        return result

    def _answer(self, call):
        """(text, is_error) of one library call: `call(target, is_error)` returns its string."""
        is_error = ctypes.c_int(0)
        text = self._call(lambda target: self._take(call(target, ctypes.byref(is_error))))
        if text is _INTERRUPTED:
            return self.interrupted_line, True
        return text, bool(is_error.value)

    def run(self, command_line):
        """(text, is_error) for one command line."""
        # Only dispatch-trace --frames asks for it (as in LLDB: no other command reads a setting).
        if command_line.startswith("dispatch-trace"):
            self._target.frame_cap = gdb.parameter("backtrace limit") or 0  # None: unlimited
        return self._answer(lambda target, is_error: self._lib.dscope_inspect_run(target, command_line.encode(), is_error))

    def break_command(self, arguments):
        """(text, is_error) for the user's `dispatch-break ARGUMENTS`."""
        return self._answer(lambda target, is_error: self._lib.dscope_breaks_command(self._breaks, target,
                                                                                     arguments.encode(), is_error))

    def break_arm(self):
        """(text, is_error): the dispatch breakpoints written into a runtime just loaded."""
        return self._answer(lambda target, is_error: self._lib.dscope_breaks_arm(self._breaks, target, is_error))

    def break_count(self):
        return self._lib.dscope_breaks_count(self._breaks)

    def break_hit(self, tid, values):
        """(text, action, is_error) of a stop at a dispatch-break location (the hook, a kernel's or a
        registration's entry): values are the registers named by stop_registers, at its first
        instruction; action one of inspect.h's dscope_hit_action (HIT_*)."""
        registers = (ctypes.c_uint64 * len(values))(*(v & _MASK64 for v in values))
        action = ctypes.c_int(0)
        text, is_error = self._answer(lambda target, is_error: self._lib.dscope_breaks_hit_registers(
            self._breaks, target, tid, registers, len(values), ctypes.byref(action), is_error))
        return text, action.value, is_error

    def break_locations(self):
        """([address], error line or None): where real PyTorch needs GDB breakpoints."""
        text, is_error = self._answer(lambda target, is_error: self._lib.dscope_breaks_locations(self._breaks, target,
                                                                                                 is_error))
        if is_error:
            return [], text
        return [int(line, 16) for line in text.split()], None

    def value_types(self):
        """The value printers' type table: [(type_name, summary_type, word_size, flags)]."""
        rows = []
        while True:
            row = self._lib.dscope_value_type_at(len(rows))
            if not row:
                return rows
            rows.append((row.contents.type_name.decode(), row.contents.summary_type.decode(),
                         row.contents.word_size, row.contents.flags))

    def usage(self, command):
        """The usage line of a user command."""
        return self._take(self._lib.dscope_inspect_usage(command.encode(), None)).strip()

    def complete(self, command, arguments):
        """What completes the word being typed in `arguments`, the text after `command` up to the
        cursor (dscope_inspect_complete): what each name adds to that word, or None where GDB's own
        expression completion does."""
        completes = ctypes.c_int(_COMPLETES_NAMES)
        text = self._take(self._lib.dscope_inspect_complete(ctypes.byref(self._target), command.encode(),
                                                            arguments.encode(), ctypes.byref(completes)))
        if completes.value == _COMPLETES_EXPRESSION:
            return None
        return text.split("\n")[:-1]  # each name ends in a newline; an empty one is the word itself

    def frame_op_is(self, frame, name):
        """(1 or 0, None), or (None, the error line): whether the selected frame dispatches `name`."""
        error = ctypes.c_void_p()
        answer = self._call(lambda target: self._lib.dscope_frame_op_is(target, frame.encode(), name.encode(),
                                                                        ctypes.byref(error)))
        if answer is _INTERRUPTED:
            return None, self.interrupted_line
        return (None, self._take(error.value)) if answer < 0 else (answer, None)

    def frame_key(self, frame):
        """(text, is_error): the key the selected frame dispatches at."""
        return self._answer(lambda target, is_error: self._lib.dscope_frame_key(target, frame.encode(), is_error))

    def summary(self, value):
        """(text, is_error, [value_types.Child]) for a gdb.Value of a type of the table."""
        description = _Value()
        describe(value, description)
        answer = self._call(lambda target: value_types.take_summary(
            self._lib.dscope_value_summary(target, ctypes.byref(description)), self._lib.dscope_summary_free))
        if answer is _INTERRUPTED:
            return self.interrupted_line, True, []
        return answer or ("dscope: out of memory", True, [])


def _rows(row_at):
    """The rows of one of the library's static tables, row_at(0), row_at(1), ... up to the first NULL."""
    rows = []
    while True:
        row = row_at(len(rows))
        if not row:
            return rows
        rows.append(row.contents if isinstance(row, ctypes._Pointer) else row)


def _selected_tid():
    thread = gdb.selected_thread()
    return thread.ptid[1] if thread is not None else 0
