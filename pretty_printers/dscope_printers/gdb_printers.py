"""GDB pretty-printers for the runtime's types: thin adapters over libdscope_inspect's
`summary TYPE WORD [--json]`. A printer passes the value's bits (key, key set, dtype, device) or
the object's address (everything else) and prints the line inspect answers; children() gives the
--json children as typed gdb.Values where inspect names a type, so GDB/MI varobjs (IDEs) expand
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

import json
import re
import struct

import gdb
import gdb.printing

from . import value_types

_inspect = None  # set by install()

_CACHE_LIMIT = 4096
_by_value_cache = {}  # (TYPE, WORD, json) -> answer: a value type's summary depends on its bits only
_MASK64 = 0xFFFFFFFFFFFFFFFF


class _Failure(Exception):
    """A value that cannot be printed; its text follows "<error: "."""


_UNREADABLE = re.compile(r"^cannot read memory at (0x[0-9a-f]+)")


def _error_text(e):
    text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    if text.startswith("dscope: "):
        text = text[len("dscope: "):]
    unreadable = _UNREADABLE.match(text)
    if unreadable:
        text = "Cannot access memory at address %s%s" % (unreadable.group(1), text[unreadable.end():])
    return "<error: %s>" % text


def summary(type_name, word, with_children=False):
    """inspect's `summary TYPE WORD`: the line, or with_children the parsed --json answer."""
    if _inspect is None:
        raise _Failure("the DispatchScope inspect library is not loaded")
    key = (type_name, word, with_children)
    if key in _by_value_cache:
        return _by_value_cache[key]
    text, is_error = _inspect.run("summary %s 0x%x%s" % (type_name, word, " --json" if with_children else ""))
    if is_error:
        raise _Failure(text)
    answer = json.loads(text) if with_children else text.strip()
    if type_name in value_types.VALUE_TYPES:
        if len(_by_value_cache) >= _CACHE_LIMIT:
            _by_value_cache.clear()
        _by_value_cache[key] = answer
    return answer


# ---------------------------------------------------------------- children as gdb.Values

def _lookup_type(name):
    try:
        return gdb.lookup_type(name)
    except gdb.error:
        return None


def _child_value(child):
    """A typed gdb.Value for a summary child (printed by these printers), else its summary text."""
    kind = child.get("type")
    if kind in value_types.CHILD_VALUE_TYPES:
        cpp_type, size = value_types.CHILD_VALUE_TYPES[kind]
        value_type = _lookup_type(cpp_type)
        if value_type is not None and value_type.sizeof == size:
            return gdb.Value(value_types.word_of(child).to_bytes(size, "little"), value_type)
    elif kind == "bool":
        return gdb.Value(bool(value_types.word_of(child)))
    elif kind == value_types.INT64_ARRAY and child["elements"]:
        elements = child["elements"]
        element = _lookup_type("int64_t") or gdb.lookup_type("long")
        return gdb.Value(struct.pack("<%dq" % len(elements), *elements), element.array(len(elements) - 1))
    elif kind == value_types.NODE_POINTER:
        node_type = _lookup_type(value_types.NODE_TYPE)
        if node_type is not None:
            pointer = gdb.Value(value_types.word_of(child)).cast(node_type.pointer())
            if int(pointer) != 0:
                try:
                    return pointer.cast(pointer.dynamic_type)  # the node's class: MmBackward0*
                except gdb.error:
                    pass
            return pointer
    return child["summary"]


# ---------------------------------------------------------------- printers

class _Printer:
    """One value: its summary TYPE and WORD. to_string never raises into GDB."""

    def __init__(self, value, type_name, by_address):
        self.value = value
        self.type_name = type_name
        self.by_address = by_address

    def word(self):
        if self.by_address:
            address = self.value.address
            if address is None:
                raise _Failure("not in memory (no address to read the object at)")
            return int(address) & _MASK64
        return _value_bits(self.type_name, self.value)

    def to_string(self):
        try:
            return summary(self.type_name, self.word())
        except Exception as e:  # gdb.error, _Failure
            return _error_text(e)


class _PrinterWithChildren(_Printer):
    """A value an IDE expands: one `summary --json` gives the line and the children."""

    def __init__(self, value, type_name, by_address):
        super().__init__(value, type_name, by_address)
        self._answer = None

    def answer(self):
        if self._answer is None:
            self._answer = summary(self.type_name, self.word(), with_children=True)
        return self._answer

    def to_string(self):
        try:
            return self.answer()["summary"]
        except Exception as e:
            return _error_text(e)

    def children(self):
        try:
            return iter([(child["name"], _child_value(child)) for child in self.answer()["children"]])
        except Exception:  # to_string already says what went wrong
            return iter([])

    def display_hint(self):
        return "array" if self.type_name in value_types.ARRAY_LIKE else None


def _value_bits(type_name, value):
    """The bits of a value type, as summary's WORD (the value need not be in memory)."""
    if type_name == "DispatchKeySet":
        return int(value["repr_"]) & _MASK64
    if type_name == "Device":
        return (int(value["type"]) & 0xFF) | (int(value["index"]) & 0xFF) << 8
    size = value_types.CHILD_VALUE_TYPES[type_name][1]
    return int(value) & ((1 << (8 * size)) - 1)


# ---------------------------------------------------------------- registration

class DscopePrettyPrinter(gdb.printing.PrettyPrinter):
    """Matches type.strip_typedefs().tag exactly (TypedOperatorHandle<Sig> by prefix); `info
    pretty-printer` lists each subprinter, and `disable pretty-printer` works on them."""

    class _Sub(gdb.printing.SubPrettyPrinter):
        pass

    def __init__(self):
        names = list(value_types.BY_VALUE) + list(value_types.BY_ADDRESS) + list(value_types.BY_ADDRESS_PREFIXES)
        super().__init__("dscope", [self._Sub(name) for name in names])
        self._enabled = {sub.name: sub for sub in self.subprinters}

    def __call__(self, value):
        try:
            tag = value.type.strip_typedefs().tag
        except Exception:
            return None
        if not tag:
            return None
        type_name, by_address = value_types.summary_type(tag)
        if type_name is None:
            return None
        sub = tag if tag in self._enabled else next(p for p in value_types.BY_ADDRESS_PREFIXES if tag.startswith(p))
        if not self._enabled[sub].enabled:
            return None
        printer = _PrinterWithChildren if type_name in value_types.WITH_CHILDREN else _Printer
        return printer(value, type_name, by_address)


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
    global _inspect
    _inspect = inspect
    _register(gdb.current_progspace())
    gdb.events.new_objfile.connect(_on_new_objfile)
