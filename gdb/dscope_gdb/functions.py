"""GDB convenience functions over the dispatch in the selected frame.

  $dispatch_op_is("aten::mm")   1 when the operator being dispatched in the selected frame is
                                aten::mm (a full name "ns::name.overload", or a base name
                                "ns::name" for every overload), else 0. A breakpoint condition:
      break -qualified dscope::TypedOperatorHandle<dscope::Tensor (dscope::Tensor const&, dscope::Tensor const&)>::dispatch
      condition $bpnum $dispatch_op_is("aten::mm")
  $dispatch_key()               the DispatchKey being dispatched in the selected frame, as a
                                string ("AutogradCPU"): the highest-priority key of `ks`.

Frames they understand (DWARF required): TypedOperatorHandle<...>::dispatch / call / redispatch
and OperatorHandle members (`this->entry_`), dscope::dispatchBoxed and Dispatcher::callBoxed /
redispatchBoxed (the `op` argument), OperatorEntry members (`this`), and dscope_debug_break_hook
(`op`, `keyset`). Anywhere else they stop with one line (gdb.GdbError), never a traceback."""

import json

import gdb

_inspect = None  # set by install()

_FRAMES = ("break on dscope::TypedOperatorHandle<...>::dispatch or dscope::dispatchBoxed, "
           "or select such a frame")


def _fail(function, message):
    raise gdb.GdbError("dscope: $%s: %s" % (function, message))


def _frame_name(frame):
    try:
        return frame.name() or "??"
    except Exception:
        return "??"


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


def _read(frame, name, argument=False):
    """The variable `name` of frame (with argument=True: its parameter, not a local of that name),
    or None when the frame has no such variable."""
    symbol = next((s for s in _frame_symbols(frame) if s.name == name and (s.is_argument or not argument)), None)
    return None if symbol is None else frame.read_var(symbol)


def _deref(value):
    """The object a pointer or reference designates (the value itself otherwise)."""
    code = value.type.strip_typedefs().code
    if code in (gdb.TYPE_CODE_REF, gdb.TYPE_CODE_RVALUE_REF):
        return value.referenced_value()
    if code == gdb.TYPE_CODE_PTR:
        if int(value) == 0:
            raise ValueError("null pointer")
        return value.dereference()
    return value


def _tag(value):
    return value.type.strip_typedefs().tag or ""


def _is_handle(tag):
    return tag == "dscope::OperatorHandle" or tag.startswith("dscope::TypedOperatorHandle<")


def _entry_of(value):
    """An impl::OperatorEntry* from a handle, an entry, or the hook's untyped `op` (else None).
    Decided from the type alone, so an optimized-out variable of another type is skipped."""
    declared = value.type.strip_typedefs()
    target = declared
    if declared.code in (gdb.TYPE_CODE_PTR, gdb.TYPE_CODE_REF, gdb.TYPE_CODE_RVALUE_REF):
        target = declared.target().strip_typedefs()
    if declared.code == gdb.TYPE_CODE_PTR and target.code == gdb.TYPE_CODE_VOID:
        entry_type = gdb.lookup_type("dscope::impl::OperatorEntry")  # gdb.error without DWARF
        return value.cast(entry_type.pointer())
    tag = target.tag or ""
    if not _is_handle(tag) and tag != "dscope::impl::OperatorEntry":
        return None
    obj = _deref(value)
    return obj["entry_"] if _is_handle(tag) else obj.address


def _selected_frame(function):
    try:
        return gdb.selected_frame()
    except gdb.error:
        _fail(function, "no frame selected (the program is not running)")


def _frame_with_dwarf(function):
    """(selected frame, its name) when the frame has debug information; one line otherwise."""
    frame = _selected_frame(function)
    where = _frame_name(frame)
    try:
        frame.block()
    except RuntimeError:
        _fail(function, "no debug information for %s (DWARF needed); %s" % (where, _FRAMES))
    return frame, where


def _frame_entry(function):
    """The address of the impl::OperatorEntry dispatched in the selected frame."""
    frame, where = _frame_with_dwarf(function)
    problem = None
    for variable in ("this", "op"):
        try:
            value = _read(frame, variable)
            if value is None:
                continue
            entry = _entry_of(value)
            if entry is None:
                continue
            if int(entry) == 0:
                _fail(function, "the operator handle in %s is null" % where)
            return int(entry)
        except gdb.GdbError:
            raise
        except gdb.error as e:  # optimized out, unreadable: another variable may still do
            reason = str(e).splitlines()[0] if str(e) else "unreadable"
            problem = problem or ("cannot read `%s` in %s: %s (an optimized build? use -O0 -g code or "
                                  "another frame)" % (variable, where, reason))
        except Exception as e:  # gdb.MemoryError, a null pointer
            problem = problem or ("cannot read the operator in %s: %s"
                                  % (where, str(e).strip() or type(e).__name__))
    if problem:
        _fail(function, problem)
    _fail(function, "%s is not dispatching an operator (no operator handle `this` or `op` argument); %s"
          % (where, _FRAMES))


def _string_argument(function, value, usage):
    try:
        code = value.type.strip_typedefs().code
        if code in (gdb.TYPE_CODE_ARRAY, gdb.TYPE_CODE_PTR):
            return value.string(length=-1 if code == gdb.TYPE_CODE_ARRAY else 4096).rstrip("\0")
    except Exception:
        pass
    _fail(function, "expected a string argument; usage: %s" % usage)


class DispatchOpIs(gdb.Function):
    """$dispatch_op_is("ns::name[.overload]"): 1 when the selected frame dispatches that operator.

A base name ("aten::add") matches every overload (aten::add.Tensor, ...). Use it as a breakpoint
condition on dscope::TypedOperatorHandle<...>::dispatch or dscope::dispatchBoxed."""

    _USAGE = '$dispatch_op_is("aten::mm")'

    def __init__(self):
        super().__init__("dispatch_op_is")

    def invoke(self, *args):
        if len(args) != 1:
            _fail("dispatch_op_is", "takes one operator name; usage: %s" % self._USAGE)
        want = _string_argument("dispatch_op_is", args[0], self._USAGE)
        if _frame_name(_selected_frame("dispatch_op_is")).endswith("@plt"):
            return 0  # `break` on a dispatch function also resolves to its PLT stub: not a dispatch
        entry = _frame_entry("dispatch_op_is")
        # The library checks the name and matches it as dispatch-break does (full or base name).
        quoted = '"%s"' % want.replace("\\", "\\\\").replace('"', '\\"')
        try:
            return int(_ask("op-name 0x%x --is %s" % (entry, quoted)))
        except RuntimeError as e:
            _fail("dispatch_op_is", str(e))


class DispatchKeyFunction(gdb.Function):
    """$dispatch_key(): the DispatchKey being dispatched in the selected frame, as a string.

The highest-priority key of the frame's `ks` argument (the key the dispatch table is read at)."""

    def __init__(self):
        super().__init__("dispatch_key")

    def invoke(self, *args):
        if args:
            _fail("dispatch_key", "takes no arguments")
        frame, where = _frame_with_dwarf("dispatch_key")
        raw = None
        for variable in ("ks", "keyset"):
            try:
                value = _read(frame, variable, argument=True)
                if value is None:
                    continue
                value = _deref(value)
                if _tag(value) == "dscope::DispatchKeySet":
                    value = value["repr_"]
                raw = int(value)
                break
            except Exception as e:  # gdb.error (optimized out, unreadable), a null pointer
                reason = str(e).splitlines()[0] if str(e) else type(e).__name__
                _fail("dispatch_key", "cannot read `%s` in %s: %s" % (variable, where, reason))
        if raw is None:
            _fail("dispatch_key", "%s has no dispatch key set argument `ks`; %s" % (where, _FRAMES))
        try:
            return gdb.Value(json.loads(_ask("keyset 0x%x --json" % (raw & 0xFFFFFFFFFFFFFFFF)))["highest_key"])
        except Exception as e:  # the inspect library's one line
            _fail("dispatch_key", str(e).strip().replace("dscope: ", "", 1) or type(e).__name__)


def _ask(command_line):
    """The inspect library's answer; its one error line becomes the exception's text."""
    text, is_error = _inspect.run(command_line)
    if is_error:
        raise RuntimeError(text.strip().replace("dscope: ", "", 1))
    return text


def install(inspect):
    global _inspect
    _inspect = inspect
    DispatchOpIs()
    DispatchKeyFunction()
