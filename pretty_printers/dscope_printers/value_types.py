"""The value printers' vocabulary, debugger-neutral: the type table the inspect library serves
(inspect.h dscope_value_type: which C++ types it prints, by address or by their bits, which expand
into children), and how a `summary --json` child names the C++ type a front end makes it of."""

# dscope_value_type.flags
EXPANDS = 1   # summary --json lists children an IDE expands
ELEMENTS = 2  # the children are elements [0], [1], ... (an array, not members)

# A child's "type": a C++ type of the table (word: its bits), "bool" (word 0 or 1), a pointer type
# "T*" (word: the address), "int64[]" ("elements" instead of a word), none (the summary text).
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


def word_of(child):
    """A child's WORD as an int (the JSON gives it as a hex string)."""
    return int(child["word"], 16)
