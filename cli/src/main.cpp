// dscope: DispatchScope without a debugger.
//   dscope core CORE [EXE] [COMMAND ...]
// opens a core file with elfutils and runs one of the inspect library's commands on it
// (dispatch-trace, op-table, keyset; default: dispatch-trace --all), printing the same text as
// GDB and LLDB print for that core and command.
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "CoreTarget.h"
#include "dscope/inspect.h"

namespace {

const char* const kUsage = "usage: dscope core CORE [EXE] [COMMAND ...]";

int usage(const std::string& problem) {
  std::fprintf(stderr, "dscope: %s; %s\n", problem.c_str(), kUsage);
  return 2;
}

bool isFile(const char* path) {
  struct stat st{};
  return ::stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage("no command");
  if (std::string(argv[1]) != "core") return usage(std::string("unknown command '") + argv[1] + "'");
  if (argc < 3) return usage("no core file");
  int next = 3;
  std::string executable;
  if (argc > next && isFile(argv[next])) executable = argv[next++];
  std::string command;
  for (; next < argc; ++next) command += (command.empty() ? "" : " ") + std::string(argv[next]);
  if (command.empty()) command = "dispatch-trace --all";
  try {
    dscope::cli::CoreTarget core(argv[2], executable);
    int is_error = 0;
    char* text = dscope_inspect_run(core.target(), command.c_str(), &is_error);
    if (!text) {
      std::fputs("dscope: out of memory\n", stderr);
      return 1;
    }
    std::fputs(text, is_error ? stderr : stdout);
    dscope_inspect_free(text);
    return is_error ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dscope: %s\n", e.what());
    return 1;
  }
}
