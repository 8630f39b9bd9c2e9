// One dscope_inspect_run call's view of its target (Inspect.cpp): the memory, and each source
// made on first use, with the one choice of which runtime the commands read.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "source/c10/C10Dispatcher.h"
#include "source/dscope/DscopeDispatcher.h"
#include "source/python/PythonView.h"
#include "target/Remote.h"

namespace dscope::inspect {

// What one dscope_inspect_run call works with: the target, and the runtime view made on
// first use (keyset RAW needs no process at all).
class Session {
 public:
  explicit Session(const dscope_target* target) : mem_(target) {}
  const Remote& mem() const { return mem_; }
  const RuntimeView& runtime() {
    if (!view_) view_.emplace(mem_);
    return *view_;
  }
  // Real PyTorch's dispatcher (libtorch with a layout profile), made on first use.
  const TorchView& torch() {
    if (!torch_) torch_.emplace(mem_, [this] { return pythonIfReadable(); });
    return *torch_;
  }
  // The Python interpreter the process runs, found on first use; null when it runs none
  // (InspectError when it runs one that cannot be read).
  const PythonView* python() {
    if (!python_looked_up_) python_ = PythonView::find(mem_), python_looked_up_ = true;
    return python_.get();
  }
  // python() for an answer Python frames only add to: null, and the reason among the warnings,
  // when the interpreter cannot be read.
  const PythonView* pythonIfReadable() {
    try {
      return python();
    } catch (const InspectError& e) {
      python_looked_up_ = true;
      python_note_ = "Python frames left out: " + messageOf(e);
      return nullptr;
    }
  }
  // Whether the commands read PyTorch's dispatcher rather than ours: --runtime torch|dscope when
  // given, else PyTorch's when the process maps libtorch and holds no runtime of ours. With both,
  // ours, and a note saying so (among the warnings).
  bool readsTorch(const std::optional<std::string>& runtime_option);
  // The dispatcher the commands read, the one readsTorch chooses.
  const Dispatcher& dispatcher(const std::optional<std::string>& runtime_option);
  // What dispatch-break asks of the runtime the process runs (readsTorch's choice, no option): its
  // dispatcher's break support, or, while PyTorch's dispatcher cannot be read yet, breakpoints that
  // wait for it.
  const BreakSupport& breaks();
  // What the runtime view could not read whole (RuntimeView::warnings), once each.
  std::vector<std::string> warnings() const;

 private:
  // The models, made on first use (PyTorch's reads its dispatcher first: InspectError).
  const DscopeDispatcher& dscopeModel();
  const C10Dispatcher& c10Model();

  Remote mem_;
  std::optional<RuntimeView> view_;
  std::optional<TorchView> torch_;
  std::optional<DscopeDispatcher> dscope_model_;
  std::optional<C10Dispatcher> c10_model_;
  std::optional<PendingC10Breaks> pending_c10_breaks_;
  std::string note_;
  std::unique_ptr<PythonView> python_;
  bool python_looked_up_ = false;
  std::string python_note_;
};

}  // namespace dscope::inspect
