"""GDB convenience functions over the dispatch in the selected frame.

  $dispatch_op_is("aten::mm")   1 when the operator being dispatched in the selected frame is
                                aten::mm (a full name "ns::name.overload", or a base name
                                "ns::name" for every overload), else 0. A breakpoint condition:
      break -qualified dscope::TypedOperatorHandle<dscope::Tensor (dscope::Tensor const&, dscope::Tensor const&)>::dispatch
      condition $bpnum $dispatch_op_is("aten::mm")
  $dispatch_key()               the DispatchKey being dispatched in the selected frame, as a
                                string ("AutogradCPU"): the highest-priority key of `ks`.

Frames they understand (DWARF required): TypedOperatorHandle<...>::dispatch / call / redispatch
and OperatorHandle members (`this`), dscope::dispatchBoxed and Dispatcher::callBoxed /
redispatchBoxed (the `op` argument), OperatorEntry members (`this`), and dscope_debug_break_hook
(`op`, `keyset`). The library decodes the frame's variables (dscope_frame_op_is, dscope_frame_key;
target.py reads them); anywhere else they stop with one line (gdb.GdbError), never a traceback."""

import gdb

_inspect = None  # set by install()


def _fail(function, message):
    raise gdb.GdbError("dscope: $%s: %s" % (function, message))


def _frame_name(function):
    """The selected frame's name, for the library's messages."""
    try:
        return gdb.selected_frame().name() or "??"
    except gdb.error:
        _fail(function, "no frame selected (the program is not running)")


def _failed(function, line):
    """The library's one error line, as this function's."""
    _fail(function, line.strip().replace("dscope: ", "", 1))


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
        frame = _frame_name("dispatch_op_is")
        if frame.endswith("@plt"):
            return 0  # `break` on a dispatch function also resolves to its PLT stub: not a dispatch
        answer, error = _inspect.frame_op_is(frame, want)
        if error:
            _failed("dispatch_op_is", error)
        return answer


class DispatchKeyFunction(gdb.Function):
    """$dispatch_key(): the DispatchKey being dispatched in the selected frame, as a string.

The highest-priority key of the frame's `ks` argument (the key the dispatch table is read at)."""

    def __init__(self):
        super().__init__("dispatch_key")

    def invoke(self, *args):
        if args:
            _fail("dispatch_key", "takes no arguments")
        text, is_error = _inspect.frame_key(_frame_name("dispatch_key"))
        if is_error:
            _failed("dispatch_key", text)
        return gdb.Value(text.strip())


def install(inspect):
    global _inspect
    _inspect = inspect
    DispatchOpIs()
    DispatchKeyFunction()
