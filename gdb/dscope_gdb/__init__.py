"""DispatchScope for GDB: commands, printers and functions over libdscope_inspect
(see docs/DEBUG-INTERFACE.md)."""

from . import commands, functions, inspect, printers

_loaded_from = None  # the inspect library of the first load(); later loads are no-ops


def loaded():
    """True once load() ran in this GDB: every loader (build tree, installed, auto-load,
    .debug_gdb_scripts) checks it so commands and printers are registered once."""
    return _loaded_from is not None


def load(library_path):
    global _loaded_from
    if _loaded_from is not None:
        return False
    lib = inspect.Inspect(library_path)
    commands.install(lib)
    printers.install(lib)
    functions.install(lib)
    _loaded_from = library_path
    return True
