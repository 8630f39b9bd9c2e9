"""DispatchScope's type printers for both debuggers, all delegating to libdscope_inspect's
`summary TYPE WORD [--json]` (docs/DEBUG-INTERFACE.md, value printers):

  gdb_printers     GDB gdb.printing printers (imported by the dscope_gdb package)
  lldb_synthetic   LLDB synthetic-children providers (the LLDB plugin's `plugin load` imports
                   it, and registers the one-line summaries and the dscope-summary command)
  value_types      which runtime type is which summary TYPE, and how a child is typed

This package imports neither gdb nor lldb: each module imports its own debugger."""
