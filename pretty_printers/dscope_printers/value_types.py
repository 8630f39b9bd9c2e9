"""The value printers' vocabulary, debugger-neutral: the type table the inspect library serves
(inspect.h dscope_value_type: which C++ types it prints, which expand into children), and its
answer for one value (dscope_summary: the line, and each child with the C++ type a front end
makes it of)."""

import collections
import ctypes

# dscope_value_type.flags
EXPANDS = 1   # it has children an IDE expands
ELEMENTS = 2  # the children are elements [0], [1], ... (an array, not members)

# A child's type: a C++ type of the table (word: its bits), "bool" (word 0 or 1), a pointer type
# "T*" (word: the address), "int64[]" (elements instead of a word), None (the summary text).
BOOL = "bool"
INT64_ARRAY = "int64[]"


class TypeTable:
    """The library's rows [(type_name, summary_type, word_size, flags)]; a type_name ending in
    '<' stands for every instance of that template."""

    def __init__(self, rows):
        self.rows = rows
        self._exact = {row[0]: row for row in rows if not row[0].endswith("<")}
        self._templates = [row for row in rows if row[0].endswith("<")]

    def lookup(self, cpp_type):
        """The row printing cpp_type (typedefs stripped), or None."""
        row = self._exact.get(cpp_type)
        if row is None:
            row = next((r for r in self._templates if cpp_type.startswith(r[0]) and cpp_type.endswith(">")), None)
        return row


class ValueChild(ctypes.Structure):  # inspect.h dscope_value_child
    _fields_ = [("name", ctypes.c_char_p), ("summary", ctypes.c_char_p), ("type", ctypes.c_char_p),
                ("word", ctypes.c_uint64), ("elements", ctypes.POINTER(ctypes.c_int64)),
                ("element_count", ctypes.c_uint64)]


class Summary(ctypes.Structure):  # inspect.h dscope_summary
    _fields_ = [("text", ctypes.c_char_p), ("is_error", ctypes.c_int), ("child_count", ctypes.c_uint64),
                ("children", ctypes.POINTER(ValueChild))]


Child = collections.namedtuple("Child", "name summary type word elements")


def take_summary(pointer, free):
    """(text, is_error, [Child]) of a dscope_summary* (a ctypes POINTER(Summary)), which free then
    releases; None for a null pointer."""
    if not pointer:
        return None
    try:
        answer = pointer.contents
        children = []
        for i in range(answer.child_count):
            c = answer.children[i]
            children.append(Child(c.name.decode(errors="replace"), c.summary.decode(errors="replace"),
                                  c.type.decode() if c.type else None, c.word,
                                  [c.elements[j] for j in range(c.element_count)]))
        return answer.text.decode(errors="replace"), bool(answer.is_error), children
    finally:
        free(pointer)
