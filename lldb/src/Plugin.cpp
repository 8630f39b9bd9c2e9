// libdscope_lldb.so: DispatchScope for LLDB 16, loaded with `plugin load`. LLDB looks up the
// C++ symbol lldb::PluginInitialize(lldb::SBDebugger) and calls it once per load.
#include <string>

#include "Plugin.h"
#include "dscope/inspect.h"

namespace lldb {
__attribute__((visibility("default"))) bool PluginInitialize(lldb::SBDebugger debugger);
}

bool lldb::PluginInitialize(lldb::SBDebugger debugger) {
  using namespace dscope::lldb_plugin;
  // A second load (~/.lldbinit and a build-tree path, or the same file twice) must not register
  // again: two copies would each keep their own dispatch breakpoints.
  const dscope_command_help* first = dscope_command_at(kFrontEnd, 0);
  if (!first) return false;  // another build's inspect library, without this front end
  lldb::SBCommandReturnObject loaded;
  debugger.GetCommandInterpreter().HandleCommand(("help " + std::string(first->name)).c_str(), loaded, false);
  if (loaded.Succeeded()) return true;
  registerCommands(debugger);
  registerSummaries(debugger);
  importSyntheticChildren(debugger);
  return true;
}
