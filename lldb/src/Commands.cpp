// The user commands of the inspect library's table (dscope_command_at), with its help: each passes
// "<name> <arguments>" to the library and prints what it returns, unchanged (as
// gdb/dscope_gdb/commands.py); dispatch-break's is DispatchBreak.cpp's.
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

}  // namespace

void registerCommands(lldb::SBDebugger debugger) {
  lldb::SBCommandInterpreter interpreter = debugger.GetCommandInterpreter();
  for (uint64_t i = 0; const dscope_command_help* c = dscope_command_at(kFrontEnd, i); ++i) {
    // The syntax is the library's usage line (its usage errors print the same).
    const std::string syntax = usageLine(c->name);
    lldb::SBCommandPluginInterface* run =
        c->flags & DSCOPE_COMMAND_BREAKS ? newDispatchBreakCommand(debugger) : new InspectCommand(c->name);
    lldb::SBCommand command = interpreter.AddCommand(c->name, run, c->summary, syntax.c_str());
    if (command.IsValid()) command.SetHelpLong(c->details);
  }
}

}  // namespace dscope::lldb_plugin
