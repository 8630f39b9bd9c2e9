// dispatch-break in LLDB: the inspect library keeps the table of breakpoints, writes the runtime's
// in-process break filter and says everything (dscope_breaks_*); this keeps LLDB's breakpoints
// where the library says (dscope_break_point_at: its hook, and where to arm the filter and place
// real PyTorch's kernels; dscope_breaks_locations: the kernels) and does at each stop what the
// library's row says. The runtime checks the operator name (and key) itself and calls the hook
// only on a match, so the program runs at full speed between stops. The breakpoints are C++
// callbacks (SBBreakpoint::SetCallback), placed pending in LLDB's dummy target too, so that they
// cover `dispatch-break` before `process launch`, re-runs, and a runtime loaded later with dlopen.
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "LldbTarget.h"
#include "Plugin.h"

namespace dscope::lldb_plugin {
namespace {

// Our breakpoints carry this name, which `breakpoint list` hides and `breakpoint delete` keeps,
// like GDB's internal breakpoints.
constexpr const char* kBreakpointName = "dscope_dispatch_break";

struct BreakState;

// One of the library's places (dscope_break_point_at), the baton of its breakpoints.
struct Point {
  BreakState* state;
  const dscope_break_point* row;
};

// One per debugger (the baton of its breakpoints; never freed, as the debugger may outlive us).
struct BreakState {
  explicit BreakState(lldb::SBDebugger d) : debugger(d) {}
  lldb::SBDebugger debugger;
  dscope_breaks* breaks = dscope_breaks_new();
  uint32_t protected_process = 0;  // SBProcess::GetUniqueID() of the last process whose copies were protected
  // Real PyTorch: the breakpoint on each kernel entry the library names, by address, and the
  // process they were placed in.
  std::map<uint64_t, lldb::break_id_t> kernels;
  uint32_t kernels_process = 0;
  std::vector<Point> points;  // one per row, made once: batons stay where they are
};

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

void syncKernelBreakpoints(BreakState& state, LldbTarget& target);

bool onReturnSync(void* baton, lldb::SBProcess& process, lldb::SBThread&, lldb::SBBreakpointLocation&) {
  auto* state = static_cast<BreakState*>(baton);
  try {
    LldbTarget target(process.GetTarget());
    syncKernelBreakpoints(*state, target);
  } catch (const std::exception& e) {
    writeToDebugger(state->debugger, std::string("dscope: dispatch-break: ") + e.what());
  }
  return false;
}

// A registration of a kernel for a breakpoint's operator is under way: the kernels are placed
// again where it returns (a one-time breakpoint on the return address, the word at sp).
void syncOnReturn(BreakState& state, lldb::SBProcess& process, uint64_t sp) {
  lldb::SBError error;
  const uint64_t address = process.ReadPointerFromMemory(sp, error);
  if (error.Fail()) throw std::runtime_error("cannot read the return address of a registration");
  lldb::SBBreakpoint b = process.GetTarget().BreakpointCreateByAddress(address);
  if (!b.IsValid()) return;
  b.SetOneShot(true);
  b.AddName(kBreakpointName);
  b.SetCallback(&onReturnSync, &state);
}

// A stop at a dispatch-break location (the hook, or a kernel entry of real PyTorch): the library
// decides from the registers at the function's first instruction whether a breakpoint asks for
// this dispatch, and says why it went there; a trampoline several kernels share runs on silently.
bool onDispatchStop(void* baton, lldb::SBProcess& process, lldb::SBThread& thread, lldb::SBBreakpointLocation&) {
  auto* state = static_cast<BreakState*>(baton);
  try {
    lldb::SBFrame frame = thread.GetFrameAtIndex(0);
    std::vector<uint64_t> registers;  // the ones the library names, in its order
    for (uint64_t i = 0; const char* name = dscope_stop_register_at(i); ++i) {
      lldb::SBError error;
      registers.push_back(frame.FindRegister(name).GetValueAsUnsigned(error, 0));
      if (error.Fail()) throw std::runtime_error(std::string("cannot read register ") + name);
    }
    int action = DSCOPE_HIT_CONTINUE;
    LldbTarget target(process.GetTarget(), frame);
    const InspectResult r = target.answer([&](const dscope_target* t, int* is_error) {
      return dscope_breaks_hit_registers(state->breaks, t, static_cast<int64_t>(thread.GetThreadID()),
                                         registers.data(), registers.size(), &action, is_error);
    });
    if (!r.text.empty()) writeToDebugger(state->debugger, r.text);
    if (action == DSCOPE_HIT_SYNC_ON_RETURN) {
      syncOnReturn(*state, process, frame.GetSP());
      return false;
    }
    if (action == DSCOPE_HIT_CONTINUE && !r.is_error) return false;
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

// Keeps one breakpoint on each kernel entry of real PyTorch the library names now (none in a
// process without it), in `target`'s process.
void syncKernelBreakpoints(BreakState& state, LldbTarget& target) {
  lldb::SBTarget& t = target.target();
  lldb::SBProcess process = t.GetProcess();
  if (!process.IsValid() || target.isCore()) return;
  if (state.kernels_process != process.GetUniqueID()) {  // a new process: the old ones are gone
    for (const auto& [address, id] : state.kernels) t.BreakpointDelete(id);
    state.kernels.clear();
    state.kernels_process = process.GetUniqueID();
  }
  const InspectResult r = target.answer(
      [&](const dscope_target* d, int* is_error) { return dscope_breaks_locations(state.breaks, d, is_error); });
  if (r.is_error) {
    writeToDebugger(state.debugger, r.text);
    return;
  }
  std::set<uint64_t> wanted;  // one breakpoint each, every hit answered by the library
  for (size_t at = 0; at < r.text.size();) {
    const size_t end = r.text.find('\n', at);
    wanted.insert(std::stoull(r.text.substr(at, end - at), nullptr, 16));
    at = end == std::string::npos ? r.text.size() : end + 1;
  }
  for (auto it = state.kernels.begin(); it != state.kernels.end();) {
    if (wanted.count(it->first)) {
      ++it;
      continue;
    }
    t.BreakpointDelete(it->second);
    it = state.kernels.erase(it);
  }
  for (uint64_t address : wanted) {
    if (state.kernels.count(address)) continue;
    lldb::SBBreakpoint b = t.BreakpointCreateByAddress(address);
    if (!b.IsValid()) continue;
    b.AddName(kBreakpointName);
    b.SetCallback(&onDispatchStop, &state);
    state.kernels[address] = b.GetID();
  }
}

// A stop at one of the library's places other than its hook: arms the filter and places the
// kernels again as its row says, and continues.
bool onPoint(void* baton, lldb::SBProcess& process, lldb::SBThread&, lldb::SBBreakpointLocation&) {
  const auto* point = static_cast<const Point*>(baton);
  BreakState* state = point->state;
  try {
    if (dscope_breaks_count(state->breaks) == 0) return false;
    if (state->protected_process != process.GetUniqueID()) {
      // The copies from the dummy target, before any `breakpoint delete`; once per process: protected
      // again at the next such stop, LLDB 16 listed them again (lldb_dispatch_break_live).
      protectBreakpoints(process.GetTarget());
      state->protected_process = process.GetUniqueID();
    }
    LldbTarget target(process.GetTarget());
    if (point->row->does & DSCOPE_POINT_ARMS) {  // once per process: the library remembers which it armed
      const InspectResult armed = target.answer(
          [&](const dscope_target* t, int* is_error) { return dscope_breaks_arm(state->breaks, t, is_error); });
      if (!armed.text.empty()) writeToDebugger(state->debugger, armed.text);
    }
    if (point->row->does & DSCOPE_POINT_LOCATES) syncKernelBreakpoints(*state, target);
  } catch (const std::exception& e) {
    writeToDebugger(state->debugger, std::string("dscope: dispatch-break: ") + e.what());
  }
  return false;  // continue: this stop only armed the filter or placed the kernels
}

// A breakpoint on the first instruction of `function`, where the library's function points are
// (dscope_point_where); SBTarget::BreakpointCreateByName would skip the prologue.
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

// The library's function points in `target`, created once per target (pending until a module
// defines them). Its module-load points are for a debugger that stops when a module is loaded,
// before its static initializers run; LLDB 16 on Linux does not (it resolves breakpoints in the
// program's libraries only at its entry point), and the library names none for it.
void ensureBreakpoints(BreakState& state, lldb::SBTarget target, bool dummy) {
  if (protectBreakpoints(target)) return;
  for (Point& point : state.points) {
    if (point.row->where != DSCOPE_POINT_FUNCTION) continue;
    lldb::SBBreakpoint b = createAtEntry(state.debugger, target, dummy, point.row->name);
    if (!b.IsValid()) continue;
    if (point.row->does & DSCOPE_POINT_HITS)
      b.SetCallback(&onDispatchStop, &state);
    else
      b.SetCallback(&onPoint, &point);
  }
}

// The breakpoints in the selected target (not a core: nothing runs there) and in LLDB's dummy
// target, which every target created later copies, as GDB's breakpoints apply to every program.
// Also run by every dispatch-break command, which so re-creates breakpoints that a `breakpoint
// delete` removed from a copy not yet protected.
void ensureAllBreakpoints(BreakState& state, LldbTarget& target) {
  if (dscope_breaks_count(state.breaks) == 0) return;
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
  std::string execute(lldb::SBDebugger& debugger, const std::string& arguments) {
    LldbTarget target = LldbTarget::forSelected(debugger);
    const InspectResult r = target.answer([&](const dscope_target* t, int* is_error) {
      return dscope_breaks_command(state_->breaks, t, arguments.c_str(), is_error);
    });
    ensureAllBreakpoints(*state_, target);
    syncKernelBreakpoints(*state_, target);
    return r.text;
  }

  BreakState* state_;
};

}  // namespace

lldb::SBCommandPluginInterface* newDispatchBreakCommand(lldb::SBDebugger debugger) {
  auto* state = new BreakState(debugger);
  for (uint64_t i = 0; const dscope_break_point* row = dscope_break_point_at(kFrontEnd, i); ++i)
    state->points.push_back({state, row});
  return new DispatchBreakCommand(state);
}

}  // namespace dscope::lldb_plugin
