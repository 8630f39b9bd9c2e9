"""LLDB synthetic-children providers for the runtime's types an IDE expands (the rows of the
inspect library's value type table with DSCOPE_VALUE_EXPANDS: a key set's keys, an operator's
registered kernels, a tensor's sizes, strides, dtype, device, key_set, requires_grad, grad_fn,
the TLS sets), and NoChildren for the others, as GDB's printers have no children() for them.

No decoding here: a provider passes the object's address (ObjectChildren) or the value's bits
(ValueChildren) with its C++ type name to the LLDB plugin's `dscope-summary TYPE WORD --json`
(libdscope_inspect's `summary`) and turns the children it answers into SBValues of the C++ type
each names (so they print with the plugin's summaries), a bool, an int64_t array, a pointer, or
the child's text.

`plugin load` of the LLDB plugin imports this file (lldb/src/SyntheticChildren.cpp:
<datadir>/dscope/pretty_printers/dscope_printers/lldb_synthetic.py when installed, the source
tree's for the build tree's plugin) and adds one provider per row of the table to the `dscope`
category. A provider never raises into LLDB: when the value cannot be decoded it has no children
(the summary says why)."""

import collections
import json
import struct

import lldb

try:
    from . import value_types
except ImportError:  # imported as a file (command script import .../lldb_synthetic.py)
    import value_types

# The value types of the library's table and their sizes, {C++ type: bytes}: set by the plugin
# when it imports this module (lldb/src/Summaries.cpp registerSyntheticChildren).
WORD_SIZES = {}


class _Failure(Exception):
    """A value whose children cannot be listed."""


def summary_json(debugger, type_name, word):
    """The plugin's `dscope-summary TYPE WORD --json`, parsed: {"summary", "children"}."""
    result = lldb.SBCommandReturnObject()
    debugger.GetCommandInterpreter().HandleCommand("dscope-summary %s 0x%x --json" % (type_name, word), result)
    if not result.Succeeded():
        raise _Failure((result.GetError() or "dscope-summary failed").strip())
    return json.loads(result.GetOutput())


def _type_name(valobj):
    """The C++ type the value is (a reference's referent), as the library's table names it."""
    value_type = valobj.GetNonSyntheticValue().GetType().GetCanonicalType()
    if value_type.IsReferenceType():
        value_type = value_type.GetDereferencedType()
    return value_type.GetUnqualifiedType().GetName()


def _word(valobj, by_address):
    """summary's WORD for a value: its address, or its own bits (a key set need not be in memory).
    A reference is followed through its own value, the referent's address, wherever its DWARF
    puts it: where clang emits the referent's type as a declaration only (its definition is in
    another module), Dereference() gives a value with no address and no data."""
    value = valobj.GetNonSyntheticValue()
    value_type = value.GetType().GetCanonicalType()
    if value_type.IsReferenceType():
        error = lldb.SBError()
        address = value.GetValueAsUnsigned(error, 0)
        if error.Fail() or address == 0:
            raise _Failure("null reference")
        if by_address:
            return address
        size = value_type.GetDereferencedType().GetByteSize()
        data = valobj.GetProcess().ReadMemory(address, size, error)
        if error.Fail() or data is None:
            raise _Failure(error.GetCString() or "unreadable value")
        return int.from_bytes(data, "little")
    if by_address:
        address = value.GetLoadAddress()
        if address == lldb.LLDB_INVALID_ADDRESS:
            raise _Failure("not in memory")
        return address
    error = lldb.SBError()
    data = value.GetData().ReadRawData(error, 0, value_type.GetByteSize())
    if error.Fail() or data is None:
        raise _Failure(error.GetCString() or "unreadable value")
    return int.from_bytes(data, "little")


class ObjectChildren:
    """The children of one object, as inspect's summary --json lists them for its address."""

    BY_ADDRESS = True

    def __init__(self, valobj, _internal_dict):
        self.valobj = valobj
        self.children = []

    def update(self):
        self.children = []
        try:
            target = self.valobj.GetTarget()
            answer = summary_json(target.GetDebugger(), _type_name(self.valobj), _word(self.valobj, self.BY_ADDRESS))
            self.children = answer.get("children", [])
        except Exception:  # _Failure, bad JSON, no process: no children
            self.children = []
        return False  # re-read on every stop: the object may change

    def has_children(self):
        return True

    def num_children(self, _max_count=None):
        return len(self.children)

    def get_child_index(self, name):
        for i, child in enumerate(self.children):
            if child["name"] == name:
                return i
        try:  # "[2]" for array-like children
            return int(name.strip("[]"))
        except ValueError:
            return -1

    def get_child_at_index(self, index):
        if index < 0 or index >= len(self.children):
            return None
        try:
            return _child_value(self.valobj, self.children[index])
        except Exception:
            return None


# SBData.SetData does not copy the Python bytes it is given, and the values made from it keep
# reading them: the buffers stay referenced here. Each is a few bytes; the oldest go only after
# 100 000 newer ones, long after LLDB has dropped the values that used them.
_buffers = collections.deque(maxlen=100000)


def _data(target, raw):
    _buffers.append(raw)
    data = lldb.SBData()
    error = lldb.SBError()
    data.SetData(error, raw, target.GetByteOrder(), target.GetAddressByteSize())
    return data


def _child_value(parent, child):
    """An SBValue for a summary child: of the C++ type it names, else its text."""
    target = parent.GetTarget()
    name, kind = child["name"], child.get("type")
    if kind == value_types.BOOL:
        return parent.CreateValueFromData(name, _data(target, bytes([value_types.word_of(child) & 1])),
                                          target.GetBasicType(lldb.eBasicTypeBool))
    if kind == value_types.INT64_ARRAY:
        elements = child["elements"]
        if elements:
            element = target.FindFirstType("int64_t")
            if not element.IsValid():
                element = target.GetBasicType(lldb.eBasicTypeLong)
            return parent.CreateValueFromData(name, _data(target, struct.pack("<%dq" % len(elements), *elements)),
                                              element.GetArrayType(len(elements)))
    elif kind and kind.endswith("*"):
        pointed = target.FindFirstType(kind[:-1])
        if pointed.IsValid():
            pointer = pointed.GetPointerType()
            word = value_types.word_of(child)
            return parent.CreateValueFromData(name, _data(target, word.to_bytes(pointer.GetByteSize(), "little")),
                                              pointer)
    elif kind in WORD_SIZES:
        value_type, size = target.FindFirstType(kind), WORD_SIZES[kind]
        if value_type.IsValid() and value_type.GetByteSize() == size:
            word = value_types.word_of(child)
            return parent.CreateValueFromData(name, _data(target, word.to_bytes(size, "little")), value_type)
    # Text: a char array holding the child's summary (LLDB shows it as a string).
    text = child["summary"].encode() + b"\0"
    return parent.CreateValueFromData(name, _data(target, text),
                                      target.GetBasicType(lldb.eBasicTypeChar).GetArrayType(len(text)))


class ValueChildren(ObjectChildren):
    """The children of a value type (a key set), from its bits."""

    BY_ADDRESS = False


class NoChildren:
    """A type GDB's printer shows without children (its printer has no children()): the summary
    is the whole value, as in GDB. Without this LLDB would list the raw members (a
    KernelFunction's functor_, boxed_fn_, ...) under the summary, and an IDE would expand them."""

    def __init__(self, _valobj, _internal_dict):
        pass

    def update(self):
        return True  # nothing to re-read

    def has_children(self):
        return False

    def num_children(self, _max_count=None):
        return 0

    def get_child_index(self, _name):
        return -1

    def get_child_at_index(self, _index):
        return None
