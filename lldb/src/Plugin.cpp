// libdscope_lldb.so: DispatchScope for LLDB 16, loaded with `plugin load`. LLDB looks up the
// C++ symbol lldb::PluginInitialize(lldb::SBDebugger) and calls it once per load.
#include "Plugin.h"

namespace lldb {
__attribute__((visibility("default"))) bool PluginInitialize(lldb::SBDebugger debugger);
}

bool lldb::PluginInitialize(lldb::SBDebugger debugger) {
  using namespace dscope::lldb_plugin;
  // A second load (~/.lldbinit and a build-tree path, or the same file twice) must not register
  // again: two copies would each keep their own dispatch breakpoints.
  lldb::SBCommandReturnObject loaded;
  debugger.GetCommandInterpreter().HandleCommand("help dispatch-trace", loaded, false);
  if (loaded.Succeeded()) return true;
  registerCommands(debugger);
  registerDispatchBreak(debugger);
  registerSummaries(debugger);
  importSyntheticChildren(debugger);
  return true;
}
