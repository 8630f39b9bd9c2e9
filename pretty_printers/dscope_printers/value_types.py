"""The runtime types the printers handle and what inspect's `summary` calls them; how a summary
child's "type" maps to a debugger type. No debugger imports: both front ends use it."""

# C++ type (as the debugger names it, typedefs stripped) -> summary TYPE, and whether WORD is
# the object's address (else the value's own bits).
BY_VALUE = {
    "dscope::DispatchKey": "DispatchKey",
    "dscope::BackendComponent": "BackendComponent",
    "dscope::DispatchKeySet": "DispatchKeySet",
    "dscope::ScalarType": "ScalarType",
    "dscope::Device": "Device",
}
VALUE_TYPES = frozenset(BY_VALUE.values())
BY_ADDRESS = {
    "dscope::OperatorName": "OperatorName",
    "dscope::OperatorHandle": "OperatorHandle",
    "dscope::impl::OperatorEntry": "OperatorEntry",
    "dscope::KernelFunction": "KernelFunction",
    "dscope::Tensor": "Tensor",
    "dscope::TensorImpl": "TensorImpl",
    "dscope::impl::PODLocalDispatchKeySet": "PODLocalDispatchKeySet",
    "dscope_dispatch_record": "dscope_dispatch_record",
}
# Template instances that print as their base: TypedOperatorHandle<Sig> is an OperatorHandle.
BY_ADDRESS_PREFIXES = {"dscope::TypedOperatorHandle<": "OperatorHandle"}

# The types whose value an IDE expands (summary --json gives children), and how it lists them.
WITH_CHILDREN = {"DispatchKeySet", "OperatorEntry", "Tensor", "TensorImpl", "PODLocalDispatchKeySet"}
ARRAY_LIKE = {"DispatchKeySet", "OperatorEntry"}  # children named [0], [1], ...

# A child's "type" -> (C++ type, bytes of its WORD) for the value types a front end builds from
# the word; "bool" is the language's bool; "autograd::Node*" is a pointer to NODE_TYPE whose WORD
# is the address; "int64[]" has "elements" instead of a word; no "type": the summary text.
CHILD_VALUE_TYPES = {
    "DispatchKey": ("dscope::DispatchKey", 2),
    "BackendComponent": ("dscope::BackendComponent", 1),
    "DispatchKeySet": ("dscope::DispatchKeySet", 8),
    "ScalarType": ("dscope::ScalarType", 1),
    "Device": ("dscope::Device", 2),
}
NODE_POINTER = "autograd::Node*"
NODE_TYPE = "dscope::autograd::Node"
INT64_ARRAY = "int64[]"


def summary_type(cpp_type):
    """(summary TYPE, by_address) for a C++ type name, or (None, False)."""
    if cpp_type in BY_VALUE:
        return BY_VALUE[cpp_type], False
    if cpp_type in BY_ADDRESS:
        return BY_ADDRESS[cpp_type], True
    for prefix, name in BY_ADDRESS_PREFIXES.items():
        if cpp_type.startswith(prefix):
            return name, True
    return None, False


def word_of(child):
    """A child's WORD as an int (the JSON gives it as a hex string)."""
    return int(child["word"], 16)
