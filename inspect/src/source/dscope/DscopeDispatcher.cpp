#include "source/dscope/DscopeDispatcher.h"

#include "Session.h"
#include "source/dscope/Values.h"
#include "stack/RecordTrace.h"
#include "target/ThreadLocal.h"

namespace dscope::inspect {

const RuntimeView& DscopeDispatcher::rt() const { return session_.runtime(); }

const KeyTable& DscopeDispatcher::keys() const {
  if (!keys_) {
    try {
      keys_ = &rt().keys();
    } catch (const InspectError&) {
      keys_ = &dscopeKeyTable();
    }
  }
  return *keys_;
}

format::OperatorSnapshot DscopeDispatcher::registrations(const Operator& op) const { return rt().snapshot(op.entry, false); }

TableEntry DscopeDispatcher::entry(const RemoteTableEntry& e) const {
  TableEntry out;
  out.key = e.key;
  out.slot = e.slot;
  if (rt().isMissing(e.kernel)) return out;
  out.source = e.source;
  out.kernel = {e.kernel.addr, e.kernel.functor, e.kernel.boxed_fn, e.kernel.unboxed_fn, 0, e.kernel.debug};
  out.registered_key = e.kernel.key;
  out.fallthrough = rt().isFallthrough(e.kernel);
  return out;
}

std::vector<TableEntry> DscopeDispatcher::computedTable(const Operator& op) const {
  std::vector<TableEntry> out;
  for (const RemoteTableEntry& e : rt().tableEntries(op.entry)) out.push_back(entry(e));
  return out;
}

TableEntry DscopeDispatcher::computedEntry(const Operator& op, int key) const {
  return entry(rt().tableEntry(op.entry, key));
}

std::string DscopeDispatcher::kernelName(const Kernel& k) const { return rt().kernelSymbol(rt().kernel(k.addr)); }

void DscopeDispatcher::visitStoredKernels(const std::function<void(const StoredKernel&)>& visit) const {
  const RuntimeView& view = rt();
  for (const Operator& op : view.operators()) {
    try {
      for (const RemoteTableEntry& e : view.tableEntries(op.entry))
        if (!view.isFallthrough(e.kernel))
          visit({&op, e.key, e.kernel.addr, e.kernel.functor,
                 {e.kernel.functor, e.kernel.unboxed_fn, e.kernel.boxed_fn}});
    } catch (const InspectError&) {
    }
  }
}

ThreadKeySets DscopeDispatcher::threadKeySets(int64_t tid) const {
  const RuntimeView& view = rt();
  const auto blocks = view.threadBlocks();
  const ThreadBlock& b = selectThread(view, blocks, tid);
  const auto [included, excluded] = view.threadTls(b);
  return {b.tid, b.shown_tid, b.records.state == DSCOPE_THREAD_ALIVE, included, excluded, std::nullopt};
}

ProcessDispatchState DscopeDispatcher::dispatchState() const { return recordsDispatchState(rt()); }

std::string DscopeDispatcher::dispatchTrace(const TraceRequest& request) const { return recordsDispatchTrace(rt(), *this, request); }

uint64_t DscopeDispatcher::keySetOfValue(const std::string& text, const dscope_value& value) const {
  return keySetWord(session_, text, value);
}

}  // namespace dscope::inspect
