// Our runtime as the dispatcher model sees it: RuntimeView's reads (through the descriptor and
// the layout profile it carries) in the model's terms.
#pragma once

#include "model/Dispatcher.h"
#include "source/dscope/DscopeBreaks.h"
#include "source/dscope/DscopeProfile.h"
#include "source/dscope/RuntimeView.h"

namespace dscope::inspect {

class Session;

class DscopeDispatcher final : public Dispatcher {
 public:
  // The runtime is read on first use: a raw key set needs none.
  explicit DscopeDispatcher(Session& session) : session_(session), breaks_(session) {}

  const char* runtimeId() const override { return "dscope"; }
  // The runtime's own key table where its descriptor can be read; this library's where not (a raw
  // key set needs no process).
  const KeyTable& keys() const override;
  std::shared_ptr<const std::vector<Operator>> operatorList() const override { return rt().operatorList(); }
  format::OperatorSnapshot registrations(const Operator& op) const override;
  std::vector<TableEntry> computedTable(const Operator& op) const override;
  TableEntry computedEntry(const Operator& op, int key) const override;
  std::string kernelName(const Kernel& k) const override;
  ThreadKeySets threadKeySets(int64_t tid) const override;
  void visitStoredKernels(const std::function<void(const StoredKernel&)>& visit) const override;
  uint64_t keySetOfWord(uint64_t word) const override { return word; }
  uint64_t keySetOfValue(const std::string& text, const dscope_value& value) const override;
  ProcessDispatchState dispatchState() const override;
  bool tracesFromRecords() const override { return true; }
  std::string dispatchTrace(const TraceRequest& request) const override;
  const BreakSupport& breaks() const override { return breaks_; }

 protected:
  std::string incompleteListNote() const override { return rt().incompleteListNote(); }

 private:
  const RuntimeView& rt() const;
  TableEntry entry(const RemoteTableEntry& e) const;

  Session& session_;
  DscopeBreaks breaks_;
  mutable const KeyTable* keys_ = nullptr;
};

}  // namespace dscope::inspect
