// The dispatch breakpoints of one debugger session (dispatch-break): their numbers, operators and
// keys, pending or armed, and why a dispatch it stopped at went to its kernel.
//
// Two runtimes, two ways to stop. DispatchScope's runtime checks a break filter in its own memory
// (docs/DEBUG-INTERFACE.md §6): the library writes the table into it and a front end keeps one
// native breakpoint on dscope_debug_break_hook, arming when the runtime loads (dscope_breaks_arm).
// Real PyTorch has no filter: the library names the kernels' entry addresses (locations) and the
// front end keeps a native breakpoint on each; at a hit the library decides from the registers
// whether the kernel ran for a breakpoint's operator and key (a trampoline several kernels share
// stops for one only). Either way the stop's text is the library's (hit).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "commands/Commands.h"
#include "source/c10/TorchProfile.h"
#include "dscope/inspect.h"

namespace dscope::inspect {

class TorchView;

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
  std::vector<std::string> fallthrough; // keys the operator's fallthrough mask took out
  std::string computed;                 // (arguments | included) - excluded, masked ("" when unknown)
  std::string kind;                     // call, redispatch, ... ("" when the runtime does not say)
  std::string kernel, why, registered;  // the kernel chosen: its name, the table rule, its debug string
  // Where the thread stopped: --why explains only the stop the thread is still at.
  int64_t tid = 0;
  uint64_t pc = 0, sp = 0;
};
std::string explanationText(const DispatchExplanation& e);
// The last dispatch-break stop of any table in this process (the library's): dispatch-trace names
// the frame a thread is still stopped at with it (TorchTrace.cpp), since a kernel function several
// kernels share does not say which one it runs, and the stop read that from the registers.
std::optional<DispatchExplanation>& lastBreakStop();
std::string explanationJson(const DispatchExplanation& e);

// Where real PyTorch registers kernels (dispatch-break places its breakpoints again after them).
struct TorchRegistrations {
  uint64_t impl = 0, fallback = 0;  // Dispatcher::registerImpl, registerFallback (0: not found)
  uint64_t name = 0, overload = 0;  // where an OperatorName keeps its two strings
};

// The kernel entries the breakpoints are on, each with what its call looks like in the registers
// at its first instruction, and the build's key table: enough to let most stops there run on
// without reading the process (a shared trampoline running another kernel, the kernel called for
// another of its keys). Every other stop is torchBreakHit's.
struct TorchKernelSites {
  struct Site {
    uint64_t location, functor;
    int slot;
    bool called_unboxed;
  };
  std::vector<Site> sites;
  KeyTable keys;
  std::vector<uint64_t> locations() const;
};

class BreakTable {
 public:
  // The user's `dispatch-break ARGS`: list, delete N, --why [--json], or a new breakpoint (armed at
  // once when a runtime is there, else pending). The text to print; InspectError for a refused line.
  std::string command(Session& s, const std::vector<std::string>& words);
  // Writes every breakpoint into our runtime's filter (the whole filter: it also clears what an
  // earlier process or session left). InspectError when the runtime cannot take it.
  void arm(Session& s);
  // The same when the runtime is there and this table has not armed this process yet: what a
  // front end calls when the runtime loads or a thread is about to dispatch for the first time.
  void armIfNew(Session& s);
  // The code addresses the breakpoints need in a real PyTorch process (none elsewhere): the
  // kernels' entries and c10's registration functions.
  std::vector<uint64_t> locations(Session& s);
  // A stop at the hook or at one of the locations: what the front end does, and the text it
  // prints when it stops.
  dscope_hit_action hit(Session& s, const dscope_stop_registers& r, std::string* text);
  size_t size() const { return breaks_.size(); }

 private:
  std::string add(Session& s, const std::string& op, const std::string& key);
  std::string remove(Session& s, int64_t number);
  std::string list() const;
  std::string why(Session& s, bool json) const;
  std::string stopped(DispatchExplanation e);

  std::vector<DispatchBreakpoint> breaks_;
  int next_ = 1;
  // The descriptor's `instance` of the process whose filter arm() wrote last (0: none, or a
  // runtime whose constructors have not run yet: that one is written again).
  uint64_t armed_instance_ = 0;
  std::optional<DispatchExplanation> last_;  // the last stop's, for --why
  TorchRegistrations registrations_;          // as the last locations() found them
  // The kernel breakpoints' sites as the last locations() found them: they change only where a
  // registration for a breakpoint's operator returns, and locations() runs again there.
  TorchKernelSites kernel_sites_;
};

// The runtime key --key K names in a runtime's key table (ours, or a PyTorch build's); InspectError
// for a key no dispatch can select (unknown, an alias, no table slot).
int checkedBreakKey(const KeyTable& keys, const std::string& name);
// Real PyTorch (TorchBreak.cpp): the kernel entries the breakpoints need, and the dispatch a stop
// at one of them is when a breakpoint asks for it.
TorchKernelSites torchKernelSites(const TorchView& tv, const std::vector<DispatchBreakpoint>& breaks);
// A stop at one of `at`'s locations whose registers show no site's call (what torchBreakHit would
// answer without a stop, from the same rules); false elsewhere, or when memory must tell.
bool torchCallRuledOut(const TorchKernelSites& at, const dscope_stop_registers& r);
// Where c10 registers kernels (Dispatcher::registerImpl, registerFallback), and whether a stop at
// one of them registers a kernel for a breakpoint's operator (their kernels then change).
TorchRegistrations torchRegistrations(const TorchView& tv);
// Answered from the registers and the registered name alone (no walk of the dispatcher): c10
// registers hundreds of kernels after a breakpoint is placed (Python's meta kernels at import).
bool torchRegistrationConcerns(const Remote& mem, const TorchRegistrations& at, const std::vector<DispatchBreakpoint>& breaks,
                               const dscope_stop_registers& r);
std::optional<DispatchExplanation> torchBreakHit(const TorchView& tv, const std::vector<DispatchBreakpoint>& breaks,
                                                 const dscope_stop_registers& r);

}  // namespace dscope::inspect
