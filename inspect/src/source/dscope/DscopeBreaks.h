// dispatch-break on our runtime: its break filter (docs/DEBUG-INTERFACE.md §6). The table is
// written into the descriptor; the runtime calls dscope_debug_break_hook for a dispatch it
// matches, where the front end's one native breakpoint stops, with the dispatch in its arguments.
#pragma once

#include "model/BreakSupport.h"

namespace dscope::inspect {

class Session;

class DscopeBreaks final : public BreakSupport {
 public:
  explicit DscopeBreaks(Session& session) : session_(session) {}

  const KeyTable* keys() const override;
  // Until the runtime loads; never in a core, which loads nothing.
  bool pending() const override;
  // None while the runtime cannot be read (arm says why); none registered while its dispatcher
  // does not exist.
  std::shared_ptr<const std::vector<Operator>> operators() const override;
  void arm(const std::vector<DispatchBreakpoint>& breaks, uint64_t& armed) const override;
  void armIfNew(const std::vector<DispatchBreakpoint>& breaks, uint64_t& armed) const override;
  // A stop at the hook: the filter matched it, so it is a breakpoint's.
  std::optional<DispatchExplanation> explain(const std::vector<DispatchBreakpoint>& breaks,
                                             const dscope_stop_registers& r) const override;

 private:
  Session& session_;
};

}  // namespace dscope::inspect
