// dispatch-break's part of the dispatcher model: what a source does for a table of dispatch
// breakpoints. The command (commands/BreakCommands.cpp) keeps the table, its numbers and every
// line it prints; the source it reads (Session::breaks()) checks a breakpoint's key, arms the
// table, names the code addresses a front end breaks at, and explains a stop.
//
// Two runtimes, two ways to stop. DispatchScope's runtime checks a break filter in its own memory
// (docs/DEBUG-INTERFACE.md §6): the table is written into it, and a front end keeps one native
// breakpoint on dscope_debug_break_hook (source/dscope/DscopeBreaks). Real PyTorch has no filter:
// the breakpoints are native ones at the kernels' entries, and a stop there is a breakpoint's only
// when the registers say the kernel ran for its operator and key (source/c10/C10Breaks).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dscope/inspect.h"
#include "model/Dispatcher.h"
#include "model/KeyTable.h"

namespace dscope::inspect {

class Remote;

struct DispatchBreakpoint {
  int number;
  std::string op;   // a full name or a base name (every overload), checked
  std::string key;  // the runtime key a dispatch must go to, by name; "" for every key
};

// Why a dispatch went to the kernel it went to: what a dispatch-break stop prints, in the same
// terms for both runtimes (key sets as the runtime itself prints them).
struct DispatchExplanation {
  struct Argument {
    std::string name, keys;  // keys: the tensor's key set, or why it is not shown
  };
  std::string op, key;
  int slot = -1;
  std::string dispatched;               // the key set the kernel was looked up with (and given)
  std::vector<Argument> arguments;      // the dispatch-relevant arguments, in schema order
  std::string arguments_note;           // why some are not shown ("" when all are)
  std::optional<std::string> included, excluded;  // the thread's TLS sets (nullopt: not read)
  std::optional<PythonDispatchState> python;      // what put keys in them (PyTorch 2.x; nullopt: not read)
  std::vector<TlsCause> causes;                   // the causes in effect (tlsCauses)
  std::vector<std::string> fallthrough; // keys the operator's fallthrough mask took out
  std::string computed;                 // (arguments | included) - excluded, masked ("" when unknown)
  std::string kind;                     // call, redispatch, ... ("" when the runtime does not say)
  std::string kernel, why, registered;  // the kernel chosen: its name, the table rule, its debug string
  // In a process that runs Python: the thread's innermost Python frame, traceback's "File ...,
  // line N, in f" ("" when none or unreadable).
  std::string python_caller;
  // Where the thread stopped: --why explains only the stop the thread is still at.
  int64_t tid = 0;
  uint64_t pc = 0, sp = 0;
};

// The last dispatch-break stop of any breakpoint table in this process (the library's):
// dispatch-trace names the frame a thread is still stopped at with it (stack/TorchTrace.cpp), since
// a kernel function several kernels share does not say which one it runs, and the stop read that
// from the registers.
std::optional<DispatchExplanation>& lastBreakStop();

// The runtime key --key K names in a source's key table; InspectError for a key no dispatch can
// select (unknown, an alias, no table slot).
int checkedBreakKey(const KeyTable& keys, const std::string& name);

// Breakpoints placed at code addresses of a process, as BreakSupport::place found them. The table
// keeps them between calls (a Session lives for one call): a front end stops at them thousands of
// times, and most stops are settled from the registers alone, before anything of the process is
// looked up.
class PlacedBreaks {
 public:
  virtual ~PlacedBreaks() = default;
  // The addresses the front end keeps one native breakpoint on.
  virtual std::vector<uint64_t> locations() const = 0;
  // What a stop calls for when the registers (and `mem` at them) settle it; nullopt: the source's
  // explain() answers it.
  virtual std::optional<dscope_hit_action> settled(const Remote& mem, const std::vector<DispatchBreakpoint>& breaks,
                                                   const dscope_stop_registers& r) const = 0;
  // The table's breakpoints changed: what was found for the old ones settles nothing until the
  // breakpoints are placed again.
  virtual void breaksChanged() = 0;
};

class BreakSupport {
 public:
  virtual ~BreakSupport() = default;
  // InspectError when no breakpoint can be set in this target (a core PyTorch runs no more, a
  // PyTorch build no profile describes); a source that finds out when arming says it there.
  virtual void checkTarget() const {}
  // The key table a breakpoint's --key is checked against: the source's own, or, while the
  // breakpoints wait, the one the runtime they wait for will have; nullptr when that is not known
  // yet (the key is checked when they are placed).
  virtual const KeyTable* keys() const = 0;
  // Whether the breakpoints wait for the runtime (not loaded yet, its dispatcher not constructed).
  virtual bool pending() const { return false; }
  // The operators a breakpoint's name is looked for in; nullptr when they cannot be read.
  virtual std::shared_ptr<const std::vector<Operator>> operators() const = 0;
  // Writes the whole table where the runtime looks for it (also clearing what an earlier process
  // or session left) and sets `armed` to the process that holds it (0: one to write again);
  // InspectError when the runtime cannot take it. A source without a filter writes nothing.
  virtual void arm(const std::vector<DispatchBreakpoint>&, uint64_t& /*armed*/) const {}
  // arm() when the runtime is there and `armed` is not its process: what a front end asks for
  // where the runtime loads or a thread first dispatches.
  virtual void armIfNew(const std::vector<DispatchBreakpoint>&, uint64_t& /*armed*/) const {}
  // The code addresses the breakpoints need (nullptr: none; the runtime's hook is the front end's).
  virtual std::unique_ptr<PlacedBreaks> place(const std::vector<DispatchBreakpoint>&) const { return nullptr; }
  // The dispatch a stop is, when a breakpoint asks for it; nullopt: not a breakpoint's, go on.
  virtual std::optional<DispatchExplanation> explain(const std::vector<DispatchBreakpoint>& breaks,
                                                     const dscope_stop_registers& r) const = 0;
};

}  // namespace dscope::inspect
