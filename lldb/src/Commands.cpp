// keyset, op-table and dispatch-trace: each passes "<name> <arguments>" to the
// inspect library and prints what it returns, unchanged (as gdb/dscope_gdb/commands.py).
#include <cstdlib>
#include <exception>
#include <string>

#include "LldbTarget.h"
#include "Plugin.h"

namespace dscope::lldb_plugin {

// LLDB has already split the line into words and removed their quotes; each word is quoted
// again so that the inspect library's splitWords (LLDB's rules) gets the very same words back,
// including an empty one ('') and one with spaces ('a b').
std::string joinArguments(char** arguments) {
  std::string line;
  for (char** a = arguments; a && *a; ++a) {
    const std::string word = *a;
    if (a != arguments) line += ' ';
    if (!word.empty() && word.find_first_of(" \t\\'\"`") == std::string::npos) {
      line += word;
      continue;
    }
    line += '\'';
    for (char c : word) line += c == '\'' ? std::string("'\\''") : std::string(1, c);  // ' as '\''
    line += '\'';
  }
  return line;
}

std::string usageLine(const std::string& command) {
  char* usage = dscope_inspect_usage(command.c_str(), nullptr);
  std::string line = usage ? usage : "";
  dscope_inspect_free(usage);
  if (!line.empty() && line.back() == '\n') line.pop_back();
  return line;
}

void printResult(lldb::SBCommandReturnObject& result, const std::string& text) {
  result.SetStatus(lldb::eReturnStatusSuccessFinishResult);
  if (text.empty()) return;  // a command with nothing to say (dispatch-break --delete) prints nothing
  std::string line = text;
  if (line.back() != '\n') line += '\n';
  result.PutCString(line.c_str(), static_cast<int>(line.size()));
}

namespace {

class InspectCommand : public lldb::SBCommandPluginInterface {
 public:
  explicit InspectCommand(std::string name) : name_(std::move(name)) {}

  bool DoExecute(lldb::SBDebugger debugger, char** arguments, lldb::SBCommandReturnObject& result) override {
    try {
      const std::string args = joinArguments(arguments);
      LldbTarget target = LldbTarget::forSelected(debugger);
      const InspectResult r = target.run(name_ + (args.empty() ? "" : " " + args));
      if (r.interrupted) {
        writeToDebugger(debugger, r.text);
        result.SetStatus(lldb::eReturnStatusSuccessFinishNoResult);
        return true;
      }
      printResult(result, r.text);
    } catch (const std::exception& e) {  // never an exception into LLDB
      printResult(result, std::string("dscope: ") + e.what());
    } catch (...) {
      printResult(result, "dscope: internal error in the LLDB plugin");
    }
    return true;
  }

 private:
  std::string name_;
};

struct CommandText {
  const char* name;
  const char* help;
  const char* help_long;  // the syntax is the inspect library's usage line (its usage errors print the same)
};

// The same help as the GDB commands (gdb/dscope_gdb/commands.py), with LLDB's words.
const CommandText kCommands[] = {
    {"keyset", "Decode a DispatchKeySet.",
     "EXPR is any expression of type DispatchKeySet, or a tensor (Tensor or TensorImpl, or a pointer "
     "or reference to one) for its key set, or a raw 64-bit value (e.g. a number copied from "
     "PyTorch's ks.raw_repr()). Prints the keys in c10's DispatchKeySet(...) order, the highest-priority "
     "key and its dispatch-table slot. --tls shows the thread's include/exclude sets (from the "
     "runtime's thread records, so it also works in core files); --thread N is LLDB's thread index "
     "(thread #N of `thread list`)."},
    {"op-table", "Show an operator's kernels.",
     "Prints PyTorch's _dispatch_dump (registered kernels) and _dispatch_dump_table (the computed "
     "dispatch table) with each kernel's symbol and source line. Also: op-table --list [PATTERN], "
     "op-table --missing KEY (operators with no kernel for KEY)."},
    {"dispatch-trace", "Show the dispatch chain of a thread.",
     "Read from the runtime's per-thread dispatch records, not from the native stack, so it answers in "
     "well under a second even for a 100 000-frame stack overflow: the entry call, the repeating "
     "cycle folded, and a diagnosis of infinite redispatch with the fix.\n\n"
     "dispatch-trace --frames rebuilds the chain from LLDB's stack instead (for "
     "DSCOPE_DISPATCH_RECORDS=OFF builds): it walks at most 20 000 stack frames (inlined calls not "
     "counted) from the innermost, one at a time, needs the runtime's DWARF, and prints the same "
     "record lines. LLDB unwinds at most target.process.thread.max-backtrace-depth frames (600000 "
     "by default); --frames says so when the walk reaches that cap."},
    {"dispatch-summary", "Summarize every thread's dispatch state, with a crash signature.",
     "Every thread's dispatch state in one screen and a one-line crash signature for grouping crashes of the same cause (infinite-redispatch OP KEY kernel=NAME, missing-kernel OP KEY, in-kernel OP KEY, tls-not-restored CHANGE, no-dispatch). On DispatchScope's runtime from the per-thread dispatch records; on PyTorch from each thread's innermost 400 stack frames. --json: the same in the versioned schema of docs/JSON-SCHEMA.md."},
};

}  // namespace

void registerCommands(lldb::SBDebugger debugger) {
  lldb::SBCommandInterpreter interpreter = debugger.GetCommandInterpreter();
  for (const CommandText& c : kCommands) {
    const std::string syntax = usageLine(c.name);
    lldb::SBCommand command = interpreter.AddCommand(c.name, new InspectCommand(c.name), c.help, syntax.c_str());
    if (command.IsValid()) command.SetHelpLong(c.help_long);
  }
}

}  // namespace dscope::lldb_plugin
