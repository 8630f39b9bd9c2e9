// The pieces of libdscope_lldb that lldb::PluginInitialize (Plugin.cpp) wires into a debugger.
#pragma once

#include <string>

#include "lldb/API/LLDB.h"

namespace dscope::lldb_plugin {

// The name the inspect library knows this front end by: its break points and help differ per
// debugger (dscope_break_point_at, dscope_command_at).
inline constexpr const char* kFrontEnd = "lldb";

// The inspect library's user commands (Commands.cpp); dispatch-break's implementation, which
// keeps LLDB's breakpoints where the library says (DispatchBreak.cpp).
void registerCommands(lldb::SBDebugger debugger);
lldb::SBCommandPluginInterface* newDispatchBreakCommand(lldb::SBDebugger debugger);

// The `dscope` type category: one C++ summary per row of the inspect library's value type table,
// and one synthetic-children provider of the Python module `module` per row, which reaches the
// library through the plugin file `plugin` (Summaries.cpp).
void registerSummaries(lldb::SBDebugger debugger);
void registerSyntheticChildren(lldb::SBDebugger debugger, const std::string& module, const std::string& plugin);

// Imports pretty_printers' lldb_synthetic.py (the synthetic children), found from the plugin's
// own location; one "dscope: " line when it is missing (SyntheticChildren.cpp).
void importSyntheticChildren(lldb::SBDebugger debugger);

// One line from LLDB's already split argument vector, each word quoted where it needs it, so that
// the inspect library's splitWords gets the same words back.
std::string joinArguments(char** arguments);

// A user command's usage line from the inspect library (dscope_inspect_usage), for its help's
// syntax: the same line its usage errors print.
std::string usageLine(const std::string& command);

// Prints inspect's text unchanged. Failures are printed as output too and the command still
// succeeds: `lldb -b` gives up on the remaining -o commands after a failed one, and GDB's
// batch mode goes on after a dscope error, so a script of several commands behaves the same.
void printResult(lldb::SBCommandReturnObject& result, const std::string& text);

}  // namespace dscope::lldb_plugin
