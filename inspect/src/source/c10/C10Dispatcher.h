// A real c10 build as the dispatcher model sees it: TorchView's reads (through the build's layout
// profile) in the model's terms.
#pragma once

#include "model/Dispatcher.h"
#include "source/c10/C10Breaks.h"
#include "source/c10/TorchView.h"
#include "source/python/PythonView.h"

namespace dscope::inspect {

class C10Dispatcher final : public Dispatcher {
 public:
  // python: the interpreter the process runs, whose frames the stack answers interleave (null: none),
  // asked for only by them.
  C10Dispatcher(const TorchView& tv, std::function<const PythonView*()> python)
      : tv_(tv), python_(std::move(python)), breaks_(tv) {}

  const char* runtimeId() const override { return "pytorch"; }
  const KeyTable& keys() const override { return tv_.keys(); }
  std::shared_ptr<const std::vector<Operator>> operatorList() const override { return tv_.operatorList(); }
  format::OperatorSnapshot registrations(const Operator& op) const override;
  std::vector<TableEntry> computedTable(const Operator& op) const override { return tv_.computedTable(op); }
  TableEntry computedEntry(const Operator& op, int key) const override { return tv_.computedEntry(op, key); }
  std::string kernelName(const Kernel& k) const override { return tv_.kernelName(k); }
  ThreadKeySets threadKeySets(int64_t tid) const override;
  uint64_t keySetOfWord(uint64_t word) const override;
  void visitStoredKernels(const std::function<void(const StoredKernel&)>& visit) const override;
  uint64_t keySetOfValue(const std::string& text, const dscope_value& value) const override;
  ProcessDispatchState dispatchState() const override;
  bool tracesFromRecords() const override { return false; }
  std::string dispatchTrace(const TraceRequest& request) const override;
  const BreakSupport& breaks() const override { return breaks_; }

 private:
  const TorchView& tv_;
  std::function<const PythonView*()> python_;
  C10Breaks breaks_;
};

}  // namespace dscope::inspect
