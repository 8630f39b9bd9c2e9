// The dispatch breakpoints of one debugger session (dispatch-break): their numbers, operators and
// keys, pending or armed. The library keeps the table and writes it into the runtime's break
// filter (docs/DEBUG-INTERFACE.md §6); a front end keeps only its native breakpoint on
// dscope_debug_break_hook and tells the library when the runtime loads (dscope_breaks_arm).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "Commands.h"

namespace dscope::inspect {

struct DispatchBreakpoint {
  int number;
  std::string op;   // a full name or a base name (every overload), checked
  uint16_t key;     // the DispatchKey a dispatch must go to, or DSCOPE_BREAK_ANY_KEY
};

class BreakTable {
 public:
  // The user's `dispatch-break ARGS`: list, delete N, or a new breakpoint (armed at once when the
  // runtime is there, else pending). The text to print; InspectError for a refused line.
  std::string command(Session& s, const std::vector<std::string>& words);
  // Writes every breakpoint into the runtime's filter (the whole filter: it also clears what an
  // earlier process or session left). InspectError when the runtime cannot take it.
  void arm(Session& s);
  // The same when the runtime is there and this table has not armed this process yet: what a
  // front end calls when the runtime loads or a thread is about to dispatch for the first time.
  void armIfNew(Session& s);
  size_t size() const { return breaks_.size(); }

 private:
  std::string add(Session& s, const std::string& op, uint16_t key);
  std::string remove(Session& s, int64_t number);
  std::string list() const;

  std::vector<DispatchBreakpoint> breaks_;
  int next_ = 1;
  // The descriptor's `instance` of the process whose filter arm() wrote last (0: none, or a
  // runtime whose constructors have not run yet: that one is written again).
  uint64_t armed_instance_ = 0;
};

// The line a stop at dscope_debug_break_hook(op, keyset, key) prints.
std::string describeBreakStop(Session& s, uint64_t op, uint64_t keyset, uint64_t key);

}  // namespace dscope::inspect
