"""GDB pretty-printers for the runtime's types: thin adapters over libdscope_inspect's
dscope_value_summary. A printer describes its value to the library (the GDB front end's
target.describe: type, address or bits) and prints the line it answers; children() gives the
library's children as typed gdb.Values where it names a type, so GDB/MI varobjs (IDEs) expand
a key set into its keys, a tensor into sizes/strides/dtype/device/key_set/requires_grad/grad_fn.

  dscope::DispatchKey              AutogradCPU
  dscope::BackendComponent         CPUBit
  dscope::DispatchKeySet           DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)
                                   children: one DispatchKey per key
  dscope::OperatorName             aten::add.Tensor
  dscope::OperatorHandle,
  dscope::TypedOperatorHandle<Sig> OperatorHandle(aten::mm, schema: aten::mm(Tensor self, Tensor mat2) -> Tensor)
  dscope::impl::OperatorEntry      OperatorEntry(aten::mm, schema: ..., 3 registered kernels)
                                   children: "CPU: registered at FILE:LINE", newest first
  dscope::KernelFunction           the kernel's symbol, "fallthrough", "missing", "boxed <symbol>"
  dscope::Tensor, dscope::TensorImpl
                                   Tensor[2, 3] float32 cpu requires_grad keys=DispatchKeySet(...)
                                   (and grad_fn=<MmBackward0> when autograd recorded one)
                                   children: sizes, strides, dtype, device, key_set, requires_grad, grad_fn
  dscope::impl::PODLocalDispatchKeySet
                                   included=DispatchKeySet(...), excluded=DispatchKeySet(...)
  dscope_dispatch_record           [call] op=[aten::mm], key=[AutogradCPU]
  dscope::ScalarType, dscope::Device
                                   float32, cpu / cuda:1

A printer never raises into GDB: a failure prints "<error: ...>" (inspect's one line; unreadable
memory in GDB's own words, as GDB shows any unreadable value)."""

import re
import struct

import gdb
import gdb.printing

from . import value_types

_inspect = None  # set by install()
_types = None  # value_types.TypeTable, from the library, set by install()


_UNREADABLE = re.compile(r"^cannot read memory at (0x[0-9a-f]+)")


def _error_text(e):
    text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    if text.startswith("dscope: "):
        text = text[len("dscope: "):]
    unreadable = _UNREADABLE.match(text)
    if unreadable:
        text = "Cannot access memory at address %s%s" % (unreadable.group(1), text[unreadable.end():])
    return "<error: %s>" % text


# ---------------------------------------------------------------- children as gdb.Values

def _lookup_type(name):
    try:
        return gdb.lookup_type(name)
    except gdb.error:
        return None


def _child_value(child):
    """A typed gdb.Value for a summary child (printed by these printers), else its summary text."""
    kind = child.type
    if kind == value_types.BOOL:
        return gdb.Value(bool(child.word))
    if kind == value_types.INT64_ARRAY:
        elements = child.elements
        if elements:
            element = _lookup_type("int64_t") or gdb.lookup_type("long")
            return gdb.Value(struct.pack("<%dq" % len(elements), *elements), element.array(len(elements) - 1))
    elif kind and kind.endswith("*"):
        pointed = _lookup_type(kind[:-1])
        if pointed is not None:
            pointer = gdb.Value(child.word).cast(pointed.pointer())
            if int(pointer) != 0:
                try:
                    return pointer.cast(pointer.dynamic_type)  # the node's class: MmBackward0*
                except gdb.error:
                    pass
            return pointer
    elif kind and (row := _types.lookup(kind)) and row[2]:  # a value type of the table: its bits
        value_type, size = _lookup_type(kind), row[2]
        if value_type is not None and value_type.sizeof == size:
            return gdb.Value(child.word.to_bytes(size, "little"), value_type)
    return child.summary


# ---------------------------------------------------------------- printers

class _Printer:
    """One value and its row of the library's type table. to_string never raises into GDB."""

    def __init__(self, value, row):
        self.value = value
        self.flags = row[3]
        self._answer = None

    def answer(self):
        """(text, is_error, children): one library call gives the line and the children."""
        if self._answer is None:
            self._answer = _inspect.summary(self.value)
        return self._answer

    def to_string(self):
        try:
            text, is_error, _children = self.answer()
            return _error_text(text) if is_error else text
        except Exception as e:  # gdb.error (describing the value)
            return _error_text(e)


class _PrinterWithChildren(_Printer):
    """A value an IDE expands."""

    def children(self):
        try:
            return iter([(child.name, _child_value(child)) for child in self.answer()[2]])
        except Exception:  # to_string already says what went wrong
            return iter([])

    def display_hint(self):
        return "array" if self.flags & value_types.ELEMENTS else None


# ---------------------------------------------------------------- registration

class DscopePrettyPrinter(gdb.printing.PrettyPrinter):
    """Matches type.strip_typedefs().tag exactly (TypedOperatorHandle<Sig> by prefix); `info
    pretty-printer` lists each subprinter, and `disable pretty-printer` works on them."""

    class _Sub(gdb.printing.SubPrettyPrinter):
        pass

    def __init__(self):
        super().__init__("dscope", [self._Sub(row[0]) for row in _types.rows])
        self._enabled = {sub.name: sub for sub in self.subprinters}

    def __call__(self, value):
        try:
            tag = value.type.strip_typedefs().tag
        except Exception:
            return None
        row = _types.lookup(tag) if tag else None
        if row is None or not self._enabled[row[0]].enabled:
            return None
        printer = _PrinterWithChildren if row[3] & value_types.EXPANDS else _Printer
        return printer(value, row)


def _register(progspace):
    if progspace is None:
        return
    if any(getattr(p, "name", None) == "dscope" for p in progspace.pretty_printers):
        return
    gdb.printing.register_pretty_printer(progspace, DscopePrettyPrinter(), replace=True)


def _on_new_objfile(event):
    try:
        _register(event.new_objfile.progspace)
    except Exception:
        pass


def install(inspect):
    global _inspect, _types
    _inspect = inspect
    _types = value_types.TypeTable(inspect.value_types())
    _register(gdb.current_progspace())
    gdb.events.new_objfile.connect(_on_new_objfile)
