// dispatch-break on real PyTorch: no break filter, so the breakpoints are native ones at the
// kernels' entries, and c10's registration functions, after which they are placed again
// (C10Breaks.cpp says how a stop at a kernel is told to be a breakpoint's).
#pragma once

#include <exception>

#include "model/BreakSupport.h"

namespace dscope::inspect {

class TorchView;
struct C10Profile;

class C10Breaks final : public BreakSupport {
 public:
  explicit C10Breaks(const TorchView& tv) : tv_(tv) {}

  void checkTarget() const override;
  const KeyTable* keys() const override;
  std::shared_ptr<const std::vector<Operator>> operators() const override;
  std::unique_ptr<PlacedBreaks> place(const std::vector<DispatchBreakpoint>& breaks) const override;
  std::optional<DispatchExplanation> explain(const std::vector<DispatchBreakpoint>& breaks,
                                             const dscope_stop_registers& r) const override;

 private:
  const TorchView& tv_;
};

// The breakpoints of a process whose PyTorch dispatcher cannot be read yet (libtorch loaded, its
// initializers not run; a profile that does not fit yet): they wait, their keys checked against
// the key table of the build's profile, found by build-id. A libtorch_cpu build no profile
// describes never gets one, whatever runs next: that is said, with the build-id and how to give
// its profile, never promised to arm.
class PendingC10Breaks final : public BreakSupport {
 public:
  // `why`: the InspectError reading the dispatcher threw.
  PendingC10Breaks(const Remote& mem, std::exception_ptr why) : mem_(mem), why_(std::move(why)) {}

  void checkTarget() const override;
  const KeyTable* keys() const override;
  bool pending() const override { return true; }
  std::shared_ptr<const std::vector<Operator>> operators() const override { return nullptr; }
  std::unique_ptr<PlacedBreaks> place(const std::vector<DispatchBreakpoint>& breaks) const override;
  // No stop can be explained before the dispatcher can be read: why it cannot.
  std::optional<DispatchExplanation> explain(const std::vector<DispatchBreakpoint>& breaks,
                                             const dscope_stop_registers& r) const override;

 private:
  void refuseUnprofiled() const;

  const Remote& mem_;
  std::exception_ptr why_;
  mutable std::shared_ptr<const C10Profile> profile_;  // keys()'s table lives as long as this
};

}  // namespace dscope::inspect
