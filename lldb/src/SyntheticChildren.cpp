// The synthetic children (a key set's keys, a tensor's sizes, an operator's kernels) are Python:
// pretty_printers/dscope_printers/lldb_synthetic.py. `plugin load` imports it, so a user (or an
// IDE's initCommands) loads one thing. The file is found from the plugin's own location:
//   installed   <libdir>/dscope/libdscope_lldb.so  ->  DSCOPE_LLDB_SYNTHETIC_INSTALLED, relative
//               (<datadir>/dscope/pretty_printers/..., installed with the GDB package's printers)
//   build tree  <build>/lldb/libdscope_lldb.so     ->  the source tree's file
// (lldb/CMakeLists.txt defines the three DSCOPE_LLDB_* paths.)
#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <sys/stat.h>

#include "LldbTarget.h"
#include "Plugin.h"

namespace dscope::lldb_plugin {
namespace {

bool isFile(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string realPath(const std::string& path) {
  char* real = realpath(path.c_str(), nullptr);
  if (!real) return {};
  std::string resolved = real;
  std::free(real);
  return resolved;
}

// The file this plugin was loaded from, resolved (symlinks, ".."), or "".
std::string pluginFile() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&pluginFile), &info) || !info.dli_fname) return {};
  return realPath(info.dli_fname);
}

// The directory this plugin was loaded from.
std::string pluginDirectory() {
  const std::string file = pluginFile();
  return file.empty() ? file : file.substr(0, file.rfind('/'));
}

// lldb_synthetic.py for this plugin, or "" with where it looked.
std::string findSyntheticScript(std::string* looked_at) {
  const std::string dir = pluginDirectory();
  if (dir.empty()) {
    *looked_at = "(the plugin's own location is unknown)";
    return {};
  }
  const std::string installed = dir + "/" + DSCOPE_LLDB_SYNTHETIC_INSTALLED;
  if (isFile(installed)) return installed;
  *looked_at = installed;
  // Only the build tree's plugin uses the source tree: a copy elsewhere must not pick up a
  // checkout that happens to still exist.
  if (dir == realPath(DSCOPE_LLDB_BUILD_DIR) && isFile(DSCOPE_LLDB_SYNTHETIC_SOURCE))
    return DSCOPE_LLDB_SYNTHETIC_SOURCE;
  return {};
}

// path as one double-quoted LLDB command argument.
std::string quoted(const std::string& path) {
  std::string out = "\"";
  for (char c : path) {
    if (c == '"' || c == '\\' || c == '`' || c == '$') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string firstLine(const char* text) {
  std::string line = text ? text : "";
  if (auto nl = line.find('\n'); nl != std::string::npos) line.resize(nl);
  if (line.rfind("error: ", 0) == 0) line.erase(0, 7);
  return line.empty() ? "unknown error" : line;
}

}  // namespace

void importSyntheticChildren(lldb::SBDebugger debugger) {
  std::string looked_at;
  const std::string script = findSyntheticScript(&looked_at);
  if (script.empty()) {
    writeToDebugger(debugger, "dscope: no lldb_synthetic.py at " + looked_at +
                                  ": values show their summaries but do not expand into children");
    return;
  }
  lldb::SBCommandReturnObject result;
  debugger.GetCommandInterpreter().HandleCommand(("command script import " + quoted(script)).c_str(), result,
                                                 false);
  if (!result.Succeeded()) {
    writeToDebugger(debugger, "dscope: cannot import " + script + ": " + firstLine(result.GetError()));
    return;
  }
  registerSyntheticChildren(debugger, "lldb_synthetic", pluginFile());  // the module `command script import` named after the file
}

}  // namespace dscope::lldb_plugin
