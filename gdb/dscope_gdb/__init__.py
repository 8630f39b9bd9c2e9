"""DispatchScope for GDB: commands over libdscope_inspect (see docs/DEBUG-INTERFACE.md)."""

from . import commands, inspect


def load(library_path):
    commands.install(inspect.Inspect(library_path))
