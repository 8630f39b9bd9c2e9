"""LLDB synthetic-children providers for the runtime's types an IDE expands (the rows of the
inspect library's value type table with DSCOPE_VALUE_EXPANDS: a key set's keys, an operator's
registered kernels, a tensor's sizes, strides, dtype, device, key_set, requires_grad, grad_fn,
the TLS sets), and NoChildren for the others, as GDB's printers have no children() for them.

No decoding here: a provider hands its SBValue to the LLDB plugin's dscope_lldb_value_summary
(through ctypes: the plugin describes the value to libdscope_inspect's dscope_value_summary) and
turns the children the library answers into SBValues of the C++ type each names (so they print
with the plugin's summaries), a bool, an int64_t array, a pointer, or the child's text.

`plugin load` of the LLDB plugin imports this file (lldb/src/SyntheticChildren.cpp:
<datadir>/dscope/pretty_printers/dscope_printers/lldb_synthetic.py when installed, the source
tree's for the build tree's plugin) and adds one provider per row of the table to the `dscope`
category. A provider never raises into LLDB: when the value cannot be decoded it has no children
(the summary says why)."""

import collections
import ctypes
import struct

import lldb

try:
    from . import value_types
except ImportError:  # imported as a file (command script import .../lldb_synthetic.py)
    import value_types

# Set by the plugin when it imports this module (lldb/src/Summaries.cpp registerSyntheticChildren):
# the value types of the library's table and their sizes, {C++ type: bytes}, and the plugin's file.
WORD_SIZES = {}
PLUGIN = ""

_plugin = []  # the plugin's ctypes handle, opened on first use


def children_of(valobj):
    """The library's children of a value ([value_types.Child]; none when it cannot be decoded)."""
    if not _plugin:
        library = ctypes.CDLL(PLUGIN)  # already loaded by `plugin load`: the same handle
        library.dscope_lldb_value_summary.restype = ctypes.POINTER(value_types.Summary)
        library.dscope_lldb_value_summary.argtypes = [ctypes.c_void_p]
        library.dscope_lldb_summary_free.argtypes = [ctypes.POINTER(value_types.Summary)]
        _plugin.append(library)
    library = _plugin[0]
    # An SBValue proxy's `this` is the address of its lldb::SBValue.
    answer = value_types.take_summary(library.dscope_lldb_value_summary(int(valobj.this)),
                                      library.dscope_lldb_summary_free)
    return answer[2] if answer and not answer[1] else []


class Children:
    """The children of one value, as the library lists them."""

    def __init__(self, valobj, _internal_dict):
        self.valobj = valobj
        self.children = []

    def update(self):
        try:
            self.children = children_of(self.valobj)
        except Exception:  # no process, no plugin: no children
            self.children = []
        return False  # re-read on every stop: the object may change

    def has_children(self):
        return True

    def num_children(self, _max_count=None):
        return len(self.children)

    def get_child_index(self, name):
        for i, child in enumerate(self.children):
            if child.name == name:
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
    name, kind = child.name, child.type
    if kind == value_types.BOOL:
        return parent.CreateValueFromData(name, _data(target, bytes([child.word & 1])),
                                          target.GetBasicType(lldb.eBasicTypeBool))
    if kind == value_types.INT64_ARRAY:
        elements = child.elements
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
            return parent.CreateValueFromData(name, _data(target, child.word.to_bytes(pointer.GetByteSize(), "little")),
                                              pointer)
    elif kind in WORD_SIZES:
        value_type, size = target.FindFirstType(kind), WORD_SIZES[kind]
        if value_type.IsValid() and value_type.GetByteSize() == size:
            return parent.CreateValueFromData(name, _data(target, child.word.to_bytes(size, "little")), value_type)
    # Text: a char array holding the child's summary (LLDB shows it as a string).
    text = child.summary.encode() + b"\0"
    return parent.CreateValueFromData(name, _data(target, text),
                                      target.GetBasicType(lldb.eBasicTypeChar).GetArrayType(len(text)))


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
