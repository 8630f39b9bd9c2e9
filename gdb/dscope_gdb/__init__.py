"""DispatchScope for GDB: commands, printers and functions over libdscope_inspect
(see docs/DEBUG-INTERFACE.md)."""

import os
import sys

import gdb

# The type printers are shared with LLDB: pretty_printers/dscope_printers, two levels up from this
# package in the source tree (gdb/dscope_gdb -> pretty_printers) and installed
# (share/dscope/gdb/dscope_gdb -> share/dscope/pretty_printers; gdb/CMakeLists.txt installs both).
PRINTERS_DIR = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir,
                                             "pretty_printers"))
if PRINTERS_DIR not in sys.path:
    sys.path.insert(0, PRINTERS_DIR)

from dscope_printers import gdb_printers  # noqa: E402

from . import commands, functions, target  # noqa: E402

_loaded_from = None  # the inspect library of the first load(); later loads are no-ops


def loaded():
    """True once load() ran in this GDB: every loader (build tree, installed, auto-load,
    .debug_gdb_scripts) checks it so commands and printers are registered once."""
    return _loaded_from is not None


def load(library_path):
    global _loaded_from
    if _loaded_from is not None:
        return False
    # Another build's inspect library, e.g. the one that matches a core's runtime.
    library_path = os.environ.get("DSCOPE_INSPECT_LIBRARY") or library_path
    try:
        lib = target.Inspect(library_path)
    except (OSError, AttributeError) as e:  # not there, not a library, not libdscope_inspect
        gdb.write("dscope: GDB support not loaded: %s is no libdscope_inspect (%s)\n"
                  % (library_path, str(e).splitlines()[0] if str(e) else type(e).__name__))
        return False
    commands.install(lib)
    gdb_printers.install(lib)
    functions.install(lib)
    _loaded_from = library_path
    return True
