"""LLDB synthetic-children providers for the runtime's types an IDE expands: DispatchKeySet (its
keys), OperatorEntry (its registered kernels), Tensor and TensorImpl (sizes, strides, dtype,
device, key_set, requires_grad, grad_fn), PODLocalDispatchKeySet (included, excluded).

No decoding here: a provider passes the value's bits (a key set) or the object's address to the
LLDB plugin's `dscope-summary TYPE WORD --json` (libdscope_inspect's `summary`) and turns the
children it answers into SBValues of the runtime's types (so they print with the plugin's
summaries), a bool, an int64_t array, an autograd::Node*, or the child's text.

The other runtime types have a provider with no children, as GDB's printers have no
children() for them: a KernelFunction, an OperatorHandle, a Device show their summary alone, not
their raw members.

`plugin load` of the LLDB plugin imports this file itself (lldb/src/SyntheticChildren.cpp:
<datadir>/dscope/pretty_printers/dscope_printers/lldb_synthetic.py when installed, the source
tree's for the build tree's plugin), after registering the summaries (the `dscope` category) and
the dscope-summary command. Importing it again by hand is harmless:
    command script import <prefix>/share/dscope/pretty_printers/dscope_printers/lldb_synthetic.py
__lldb_init_module adds the providers to the `dscope` category. A provider never raises into
LLDB: when the value cannot be decoded it has no children (the summary says why)."""

import collections
import json
import struct

import lldb

try:
    from . import value_types
except ImportError:  # imported as a file (command script import .../lldb_synthetic.py)
    import value_types

CATEGORY = "dscope"


class _Failure(Exception):
    """A value whose children cannot be listed."""


def summary_json(debugger, type_name, word):
    """The plugin's `dscope-summary TYPE WORD --json`, parsed: {"summary", "children"}."""
    result = lldb.SBCommandReturnObject()
    debugger.GetCommandInterpreter().HandleCommand("dscope-summary %s 0x%x --json" % (type_name, word), result)
    if not result.Succeeded():
        raise _Failure((result.GetError() or "dscope-summary failed").strip())
    return json.loads(result.GetOutput())


def _word(valobj, type_name, by_address):
    """summary's WORD for a value: its address, or its own bits (a key set need not be in memory).
    A reference is followed through its own value, the referent's address, wherever its DWARF
    puts it: where clang emits the referent's type as a declaration only (its definition is in
    another module), Dereference() gives a value with no address and no data."""
    value = valobj.GetNonSyntheticValue()
    size = None if by_address else value_types.CHILD_VALUE_TYPES[type_name][1]
    if value.GetType().GetCanonicalType().IsReferenceType():
        error = lldb.SBError()
        address = value.GetValueAsUnsigned(error, 0)
        if error.Fail() or address == 0:
            raise _Failure("null reference")
        if by_address:
            return address
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
    data = value.GetData().ReadRawData(error, 0, size)
    if error.Fail() or data is None:
        raise _Failure(error.GetCString() or "unreadable value")
    return int.from_bytes(data, "little")


class SummaryChildren:
    """The children of one value, as inspect's summary --json lists them."""

    TYPE = None  # summary TYPE, set by the subclasses below
    BY_ADDRESS = True

    def __init__(self, valobj, _internal_dict):
        self.valobj = valobj
        self.children = []

    def update(self):
        self.children = []
        try:
            target = self.valobj.GetTarget()
            answer = summary_json(target.GetDebugger(), self.TYPE, _word(self.valobj, self.TYPE, self.BY_ADDRESS))
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
    """An SBValue for a summary child: typed where the child names a type, else its text."""
    target = parent.GetTarget()
    name, kind = child["name"], child.get("type")
    if kind in value_types.CHILD_VALUE_TYPES:
        cpp_type, size = value_types.CHILD_VALUE_TYPES[kind]
        value_type = target.FindFirstType(cpp_type)
        if value_type.IsValid() and value_type.GetByteSize() == size:
            word = value_types.word_of(child)
            return parent.CreateValueFromData(name, _data(target, word.to_bytes(size, "little")), value_type)
    elif kind == "bool":
        return parent.CreateValueFromData(name, _data(target, bytes([value_types.word_of(child) & 1])),
                                          target.GetBasicType(lldb.eBasicTypeBool))
    elif kind == value_types.INT64_ARRAY and child["elements"]:
        elements = child["elements"]
        element = target.FindFirstType("int64_t")
        if not element.IsValid():
            element = target.GetBasicType(lldb.eBasicTypeLong)
        return parent.CreateValueFromData(name, _data(target, struct.pack("<%dq" % len(elements), *elements)),
                                          element.GetArrayType(len(elements)))
    elif kind == value_types.NODE_POINTER:
        node_type = target.FindFirstType(value_types.NODE_TYPE)
        if node_type.IsValid():
            pointer = node_type.GetPointerType()
            word = value_types.word_of(child)
            return parent.CreateValueFromData(name, _data(target, word.to_bytes(pointer.GetByteSize(), "little")),
                                              pointer)
    # Text: a char array holding the child's summary (LLDB shows it as a string).
    text = child["summary"].encode() + b"\0"
    return parent.CreateValueFromData(name, _data(target, text),
                                      target.GetBasicType(lldb.eBasicTypeChar).GetArrayType(len(text)))


class DispatchKeySetChildren(SummaryChildren):
    TYPE = "DispatchKeySet"
    BY_ADDRESS = False


class OperatorEntryChildren(SummaryChildren):
    TYPE = "OperatorEntry"


class TensorChildren(SummaryChildren):
    TYPE = "Tensor"


class TensorImplChildren(SummaryChildren):
    TYPE = "TensorImpl"


class LocalDispatchKeySetChildren(SummaryChildren):
    TYPE = "PODLocalDispatchKeySet"


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


# C++ type -> provider class (exact names; -p: not for pointers to them).
PROVIDERS = {
    "dscope::DispatchKeySet": DispatchKeySetChildren,
    "dscope::impl::OperatorEntry": OperatorEntryChildren,
    "dscope::Tensor": TensorChildren,
    "dscope::TensorImpl": TensorImplChildren,
    "dscope::impl::PODLocalDispatchKeySet": LocalDispatchKeySetChildren,
}
# Every other type the printers cover, as GDB prints it: no children.
for _cpp_type, _summary_type in {**value_types.BY_VALUE, **value_types.BY_ADDRESS}.items():
    if _summary_type not in value_types.WITH_CHILDREN:
        PROVIDERS.setdefault(_cpp_type, NoChildren)
# Template instances, by regex (TypedOperatorHandle<Sig>).
REGEX_PROVIDERS = {"^%s.+>$" % prefix: NoChildren for prefix in value_types.BY_ADDRESS_PREFIXES}


def __lldb_init_module(debugger, _internal_dict):
    for cpp_type, provider in PROVIDERS.items():
        debugger.HandleCommand('type synthetic add -w %s -p -l %s.%s "%s"' % (CATEGORY, __name__, provider.__name__,
                                                                              cpp_type))
    for regex, provider in REGEX_PROVIDERS.items():
        debugger.HandleCommand("type synthetic add -w %s -p -l %s.%s -x '%s'" % (CATEGORY, __name__,
                                                                                provider.__name__, regex))
    debugger.HandleCommand("type category enable %s" % CATEGORY)
