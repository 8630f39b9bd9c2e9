#include "source/dscope/DscopeDispatcher.h"

#include "commands/CommandLine.h"
#include "commands/Commands.h"
#include "target/ThreadLocal.h"

namespace dscope::inspect {

const RuntimeView& DscopeDispatcher::rt() const { return session_.runtime(); }

format::OperatorSnapshot DscopeDispatcher::registrations(const Operator& op) const { return rt().snapshot(op.entry, false); }

TableEntry DscopeDispatcher::entry(const RemoteTableEntry& e) const {
  TableEntry out;
  out.key = static_cast<int>(e.key);
  out.slot = e.slot;
  if (rt().isMissing(e.kernel)) return out;
  out.source = e.source;
  out.kernel = {e.kernel.addr, e.kernel.functor, e.kernel.boxed_fn, e.kernel.unboxed_fn, 0, e.kernel.debug};
  out.registered_key = static_cast<int>(e.kernel.key);
  out.fallthrough = rt().isFallthrough(e.kernel);
  return out;
}

std::vector<TableEntry> DscopeDispatcher::computedTable(const Operator& op) const {
  std::vector<TableEntry> out;
  for (const RemoteTableEntry& e : rt().tableEntries(op.entry)) out.push_back(entry(e));
  return out;
}

TableEntry DscopeDispatcher::computedEntry(const Operator& op, int key) const {
  return entry(rt().tableEntry(op.entry, static_cast<DispatchKey>(key)));
}

std::string DscopeDispatcher::kernelName(const Kernel& k) const { return rt().kernelSymbol(rt().kernel(k.addr)); }

ThreadKeySets DscopeDispatcher::threadKeySets(int64_t tid) const {
  const RuntimeView& view = rt();
  const auto blocks = view.threadBlocks();
  const ThreadBlock& b = selectThread(view, blocks, tid);
  const auto [included, excluded] = view.threadTls(b);
  return {b.tid, b.shown_tid, b.records.state == DSCOPE_THREAD_ALIVE, included.raw_repr(), excluded.raw_repr()};
}

ProcessDispatchState DscopeDispatcher::dispatchState() const { return recordsDispatchState(session_); }

std::string DscopeDispatcher::dispatchTrace(const ParsedArgs& args) const { return recordsDispatchTrace(session_, args); }

uint64_t DscopeDispatcher::keySetOfValue(const std::string& text, const dscope_value& value) const {
  return keySetWord(session_, text, value);
}

std::string corruptBlockLine(const ThreadBlock& b) {
  return errorLine("the record block at " + hex(b.addr) + " is corrupt (" + b.corrupt + ")");
}

const ThreadBlock& selectThread(const RuntimeView& rt, const std::vector<ThreadBlock>& blocks, int64_t tid) {
  const Remote& mem = rt.mem();
  const ThreadIds& ids = mem.threadIds();
  // A block holds the id its thread knows itself by (in a pid namespace, not the debugger's tid).
  auto byTid = [&](int64_t tid) -> const ThreadBlock* {
    const ThreadBlock* dead = nullptr;
    const int64_t own = ids.ownId(tid);
    for (const auto& b : blocks) {
      if (b.records.tid != own && b.tid != tid) continue;
      if (!b.corrupt.empty()) fail("thread tid " + ids.shown(tid) + ": " + corruptBlockLine(b).substr(8));
      if (b.records.state == DSCOPE_THREAD_ALIVE) return &b;
      if (!dead) dead = &b;  // a dead block keeps its last owner's tid
    }
    return dead;
  };
  // Not found: it has not dispatched, unless its block may be one that could not be read.
  auto noBlock = [&](int64_t tid) {
    // A number that is no thread at all (not the debugger's, no OS thread of the process).
    if (mem.threadExists(tid) == false)
      fail("no thread " + std::to_string(tid) + " (neither a debugger thread number nor a thread id that dispatched)");
    std::string why;
    for (const auto& b : blocks)
      if (!b.corrupt.empty()) why = corruptBlockLine(b).substr(8);
    if (!rt.warnings().empty()) why = rt.warnings().back();
    if (!why.empty()) fail("thread tid " + ids.shown(tid) + " has no readable dispatch records: " + why);
    fail("thread tid " + ids.shown(tid) + " has no dispatch records (it has not dispatched yet); "
         "`dispatch-trace --all` lists the threads that have");
  };
  if (tid) {
    if (const auto* b = byTid(tid)) return *b;
    noBlock(tid);
  }
  for (const auto& b : blocks)
    if (b.corrupt.empty() && b.records.state == DSCOPE_THREAD_ALIVE) return b;
  if (!rt.warnings().empty()) fail("no readable thread dispatch records: " + rt.warnings().back());
  fail("no thread has dispatched yet (no dispatch records)");
}

}  // namespace dscope::inspect
