"""DispatchScope's type printers for both debuggers, all delegating to libdscope_inspect's
dscope_value_summary (docs/DEBUG-INTERFACE.md, value printers):

  gdb_printers     GDB gdb.printing printers (imported by the dscope_gdb package)
  lldb_synthetic   LLDB synthetic-children providers (the LLDB plugin's `plugin load` imports
                   it, and registers the one-line summaries)
  value_types      the library's type table and its answer for one value, read with ctypes

This package imports neither gdb nor lldb: each module imports its own debugger."""
