"""DispatchScope for GDB: commands, printers and functions over libdscope_inspect
(see docs/DEBUG-INTERFACE.md)."""

from . import commands, functions, inspect, printers


def load(library_path):
    lib = inspect.Inspect(library_path)
    commands.install(lib)
    printers.install(lib)
    functions.install(lib)
