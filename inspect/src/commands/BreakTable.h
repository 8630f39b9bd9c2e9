// The dispatch breakpoints of one debugger session (dispatch-break): their numbers, operators and
// keys, pending or armed, and the text a stop prints. Written once over the dispatcher model: how
// the runtime the process runs stops at a breakpoint is its BreakSupport's (model/BreakSupport.h).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands/Commands.h"
#include "dscope/inspect.h"
#include "model/BreakSupport.h"

namespace dscope::inspect {

std::string explanationText(const DispatchExplanation& e);
std::string explanationJson(const DispatchExplanation& e);

class BreakTable {
 public:
  // The user's `dispatch-break ARGS`: list, delete N, --why [--json], or a new breakpoint (armed at
  // once when a runtime is there, else pending). The text to print; InspectError for a refused line.
  std::string command(Session& s, const std::vector<std::string>& words);
  // Arms the table when the runtime is there and this table has not armed this process yet: what a
  // front end calls when the runtime loads or a thread is about to dispatch for the first time.
  void armIfNew(Session& s);
  // The code addresses the breakpoints need (none where the runtime has a break filter: the front
  // end's breakpoint on its hook is all it needs).
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
  // Keeps a new breakpoint: what the last locations() placed no longer settles stops.
  void keep(const DispatchBreakpoint& b);

  std::vector<DispatchBreakpoint> breaks_;
  int next_ = 1;
  // The process whose runtime holds the whole table, as BreakSupport::arm set it (0: none).
  uint64_t armed_instance_ = 0;
  std::optional<DispatchExplanation> last_;  // the last stop's, for --why
  // The breakpoints as the last locations() placed them (nullptr: at no address): they settle most
  // stops from the registers alone until locations() runs again; a change of the table takes back
  // what was found for the old breakpoints (PlacedBreaks::breaksChanged).
  std::unique_ptr<PlacedBreaks> placed_;
};

}  // namespace dscope::inspect
