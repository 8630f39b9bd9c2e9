// dispatch-break: the runtime's in-process break filter plus one breakpoint on its hook (as
// gdb/dscope_gdb/commands.py DispatchBreakCommand). The runtime checks the operator name (and
// key) itself and calls dscope_debug_break_hook only on a match, so the program runs at full
// speed between stops. The breakpoints are C++ callbacks (SBBreakpoint::SetCallback).
//
// Arming: the filter lives in the runtime's memory, so it is written once the runtime is loaded
// and relocated and before it dispatches anything. Breakpoints on
// dscope::debug::registerCurrentThread (which every thread calls before its first dispatch
// checks the filter) and on `main` arm a pending filter once per process and continue: that
// covers `dispatch-break` before `process launch`, re-runs, and a runtime loaded later with
// dlopen. (LLDB 16 on Linux resolves breakpoints in the program's libraries only at its entry
// point, after their static constructors ran: a dispatch made there cannot be caught.)
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "LldbTarget.h"
#include "Plugin.h"

namespace dscope::lldb_plugin {
namespace {

constexpr const char* kHookSymbol = "dscope_debug_break_hook";
constexpr const char* kFirstDispatchSymbol = "dscope::debug::registerCurrentThread";
// Our breakpoints carry this name, which `breakpoint list` hides and `breakpoint delete` keeps,
// like GDB's internal breakpoints.
constexpr const char* kBreakpointName = "dscope_dispatch_break";

struct DispatchBreakpoint {
  int number;
  std::string op;
  std::string key;  // "" for any key
};

// One per debugger (the baton of its breakpoints; never freed, as the debugger may outlive us).
struct BreakState {
  lldb::SBDebugger debugger;
  std::vector<DispatchBreakpoint> breaks;
  int next = 1;
  uint32_t armed_process = 0;  // SBProcess::GetUniqueID() of the process whose filter we wrote
};

std::string describe(const DispatchBreakpoint& b) { return b.op + (b.key.empty() ? "" : " at " + b.key); }

// Writes the whole filter into the runtime. Returns "" on success, else the error line.
std::string arm(BreakState& state, LldbTarget& target) {
  InspectResult r = target.run("dispatch-break-arm --clear");
  if (r.is_error) return r.text;
  for (const DispatchBreakpoint& b : state.breaks) {
    r = target.run("dispatch-break-arm " + b.op + (b.key.empty() ? "" : " --key " + b.key));
    if (r.is_error) return r.text;
  }
  return "";
}

// Hides `target`'s breakpoints of our name from `breakpoint list` and keeps them from `breakpoint
// delete`, like GDB's internal breakpoints. A name's permissions apply to a breakpoint when the
// name is added to it, and LLDB copies the dummy target's breakpoints into each new target without
// them: so the name is added again. Returns whether `target` has our breakpoints.
bool protectBreakpoints(lldb::SBTarget target) {
  lldb::SBBreakpointName name(target, kBreakpointName);
  name.SetAllowList(false);
  name.SetAllowDelete(false);
  lldb::SBBreakpointList ours(target);
  target.FindBreakpointsByName(kBreakpointName, ours);
  for (size_t i = 0; i < ours.GetSize(); ++i) {
    lldb::SBBreakpoint b = ours.GetBreakpointAtIndex(i);
    b.RemoveName(kBreakpointName);
    b.AddName(kBreakpointName);
  }
  return ours.GetSize() > 0;
}

bool onHook(void* baton, lldb::SBProcess& process, lldb::SBThread& thread, lldb::SBBreakpointLocation&) {
  auto* state = static_cast<BreakState*>(baton);
  try {
    // dscope_debug_break_hook(const void* op, uint64_t keyset, uint16_t key): SysV x86-64
    // arguments, read at the hook's first instruction.
    lldb::SBFrame frame = thread.GetFrameAtIndex(0);
    uint64_t args[3] = {};
    const char* registers[3] = {"rdi", "rsi", "rdx"};
    for (int i = 0; i < 3; ++i) {
      lldb::SBError error;
      args[i] = frame.FindRegister(registers[i]).GetValueAsUnsigned(error, 0);
      if (error.Fail()) throw std::runtime_error(std::string("cannot read register ") + registers[i]);
    }
    char line[128];
    std::snprintf(line, sizeof line, "dispatch-break-describe 0x%" PRIx64 " 0x%" PRIx64 " %" PRIu64, args[0], args[1],
                  args[2] & 0xFFFF);
    LldbTarget target(process.GetTarget(), frame);
    writeToDebugger(state->debugger, target.run(line).text);
    // LLDB stops in the code inlined at the hook's first instruction; GDB shows the hook itself,
    // where its arguments (op, keyset, key) are variables. Select that frame, as GDB does.
    for (uint32_t i = 0; i < 8; ++i) {
      lldb::SBFrame f = thread.GetFrameAtIndex(i);
      if (!f.IsValid()) break;
      if (!f.IsInlined()) {
        thread.SetSelectedFrame(i);
        break;
      }
    }
  } catch (const std::exception& e) {
    writeToDebugger(state->debugger, std::string("dscope: dispatch-break: ") + e.what());
  }
  return true;  // stop
}

bool onFirstDispatch(void* baton, lldb::SBProcess& process, lldb::SBThread&, lldb::SBBreakpointLocation&) {
  auto* state = static_cast<BreakState*>(baton);
  try {
    if (state->breaks.empty() || state->armed_process == process.GetUniqueID()) return false;
    protectBreakpoints(process.GetTarget());  // copies from the dummy target, before any `breakpoint delete`
    LldbTarget target(process.GetTarget());
    if (!target.hasRuntime()) return false;  // `main` of a program that loads the runtime later
    std::string error = arm(*state, target);
    if (!error.empty()) writeToDebugger(state->debugger, error);  // a bad name: said once
    state->armed_process = process.GetUniqueID();
  } catch (const std::exception& e) {
    writeToDebugger(state->debugger, std::string("dscope: dispatch-break: ") + e.what());
  }
  return false;  // continue: this stop only armed the filter
}

// A breakpoint on the first instruction of `function` (SBTarget::BreakpointCreateByName would
// skip the prologue, and registerCurrentThread's first statement after it only runs when the
// registry is not empty; the hook's arguments are in rdi/rsi/rdx only at its entry).
lldb::SBBreakpoint createAtEntry(lldb::SBDebugger& debugger, lldb::SBTarget& target, bool dummy,
                                 const char* function) {
  lldb::SBBreakpointList before(target);
  target.FindBreakpointsByName(kBreakpointName, before);
  std::string command = std::string("breakpoint set --skip-prologue false --name ") + function +
                        " --breakpoint-name " + kBreakpointName + (dummy ? " --dummy-breakpoints" : "");
  lldb::SBCommandReturnObject result;
  debugger.GetCommandInterpreter().HandleCommand(command.c_str(), result);
  lldb::SBBreakpointList after(target);
  target.FindBreakpointsByName(kBreakpointName, after);
  for (size_t i = 0; i < after.GetSize(); ++i) {
    lldb::SBBreakpoint b = after.GetBreakpointAtIndex(i);
    if (!before.FindBreakpointByID(b.GetID()).IsValid()) return b;
  }
  return lldb::SBBreakpoint();
}

// The hook and arming breakpoints in `target`, created once per target (pending until the
// runtime loads).
void ensureBreakpoints(BreakState& state, lldb::SBTarget target, bool dummy) {
  if (protectBreakpoints(target)) return;
  lldb::SBBreakpoint hook = createAtEntry(state.debugger, target, dummy, kHookSymbol);
  if (hook.IsValid()) hook.SetCallback(&onHook, &state);
  // Arms a pending filter before the first dispatch of each thread; `main` arms it for a
  // thread that already dispatched in a static constructor (LLDB 16 on Linux loads the
  // libraries' symbols only at the program's entry point, after their constructors ran).
  for (const char* function : {kFirstDispatchSymbol, "main"}) {
    lldb::SBBreakpoint arm_point = createAtEntry(state.debugger, target, dummy, function);
    if (arm_point.IsValid()) arm_point.SetCallback(&onFirstDispatch, &state);
  }
}

// The breakpoints in the selected target (not a core: nothing runs there) and in LLDB's dummy
// target, which every target created later copies, as GDB's breakpoints apply to every program.
// Also run by every dispatch-break command, which so re-creates breakpoints that a `breakpoint
// delete` removed from a copy not yet protected.
void ensureAllBreakpoints(BreakState& state, LldbTarget& target) {
  if (state.breaks.empty()) return;
  if (target.target().IsValid() && !target.isCore()) ensureBreakpoints(state, target.target(), false);
  ensureBreakpoints(state, state.debugger.GetDummyTarget(), true);
}

class DispatchBreakCommand : public lldb::SBCommandPluginInterface {
 public:
  explicit DispatchBreakCommand(BreakState* state) : state_(state) {}

  bool DoExecute(lldb::SBDebugger debugger, char** arguments, lldb::SBCommandReturnObject& result) override {
    try {
      printResult(result, execute(debugger, joinArguments(arguments)));
    } catch (const std::exception& e) {
      printResult(result, std::string("dscope: ") + e.what());
    } catch (...) {
      printResult(result, "dscope: internal error in the LLDB plugin");
    }
    return true;
  }

 private:
  // The same texts as the GDB command; the library reads the command line (as for every command)
  // and answers "list", "delete N", "add OP [KEY]" or "pend OP [KEY]" (no runtime loaded yet;
  // name and key checked before one is kept, pending or not: a bad entry would keep the others
  // from arming later, and so would one more than the runtime's filter holds), then, for add, a
  // note on an operator not registered (yet).
  std::string execute(lldb::SBDebugger& debugger, const std::string& arguments) {
    LldbTarget target = LldbTarget::forSelected(debugger);
    std::string out = apply(target, arguments);
    ensureAllBreakpoints(*state_, target);
    return out;
  }

  std::string apply(LldbTarget& target, const std::string& arguments) {
    BreakState& s = *state_;
    const InspectResult parsed = target.run("dispatch-break-parse --kept " + std::to_string(s.breaks.size()) + " " + arguments);
    if (parsed.is_error) return parsed.text;
    const size_t end = parsed.text.find('\n');
    std::istringstream action(parsed.text.substr(0, end));
    const std::string note = parsed.text.substr(end + 1);
    std::string verb;
    action >> verb;
    if (verb == "list") {
      if (s.breaks.empty()) return "No dispatch breakpoints.\n";
      std::string out;
      for (const auto& b : s.breaks) out += std::to_string(b.number) + "  " + describe(b) + "\n";
      return out;
    }
    if (verb == "delete") {
      int number = 0;
      action >> number;
      auto it = std::find_if(s.breaks.begin(), s.breaks.end(), [&](const auto& b) { return b.number == number; });
      if (it == s.breaks.end()) return "dscope: no dispatch breakpoint " + std::to_string(number) + "\n";
      s.breaks.erase(it);
      if (target.hasLiveProcess()) arm(s, target);  // as GDB: re-armed without a report
      return "";
    }
    DispatchBreakpoint added{s.next, "", ""};
    action >> added.op >> added.key;
    s.breaks.push_back(added);
    if (verb == "pend" && !target.isCore()) {
      // Not started yet, or stopped before the runtime loads: armed when the runtime dispatches for
      // the first time.
      return "Dispatch breakpoint " + std::to_string(s.next++) + " (" + added.op +
             ") pending: it arms when the runtime is loaded.\n" + note;
    }
    std::string error = arm(s, target);
    if (!error.empty()) {
      s.breaks.pop_back();  // a core file: nothing was armed
      return error;
    }
    s.armed_process = target.target().GetProcess().GetUniqueID();
    return "Dispatch breakpoint " + std::to_string(s.next++) + ": " + describe(s.breaks.back()) + "\n" + note;
  }

  BreakState* state_;
};

}  // namespace

void registerDispatchBreak(lldb::SBDebugger debugger) {
  auto* state = new BreakState{debugger, {}, 1, 0};
  lldb::SBCommand command = debugger.GetCommandInterpreter().AddCommand(
      "dispatch-break", new DispatchBreakCommand(state), "Stop when an operator is dispatched.",
      usageLine(debugger, "dispatch-break").c_str());
  if (command.IsValid())
    command.SetHelpLong(
        "The runtime checks the operator name (and key) itself and calls a hook only on a match, so the "
        "program runs at full speed between stops. OP is a full name (aten::add.Tensor) or a base name "
        "(aten::add, every overload). Set before `process launch` (or before the runtime is loaded), it "
        "stays pending and arms when the runtime is loaded (before its first dispatch). At most 16: the "
        "runtime's filter holds 16 entries.");
}

}  // namespace dscope::lldb_plugin
