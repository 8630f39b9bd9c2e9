// The thread-record registry, the break filter and the max-depth guard (docs/DEBUG-INTERFACE.md);
// the descriptor itself and the break hook are in DebugDescriptor.cpp.
#include "dscope/DebugInterface.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <limits>

#include "dscope/CrashHandler.h"
#include "dscope/Dispatcher.h"
#include "dscope/DispatchRecords.h"
#include "dscope/Error.h"
#include "dscope/format/DispatchRecord.h"

namespace {

uint64_t maxDispatchDepthFromEnv() {
  const char* v = std::getenv("DSCOPE_MAX_DISPATCH_DEPTH");
  if (!v || !*v) return std::numeric_limits<uint64_t>::max();
  char* end = nullptr;
  unsigned long long n = std::strtoull(v, &end, 10);
  if (*end != '\0' || n == 0) {
    std::fprintf(stderr, "ignoring invalid value for DSCOPE_MAX_DISPATCH_DEPTH: %s (expected a positive integer)\n", v);
    return std::numeric_limits<uint64_t>::max();
  }
  return n;
}

const uint64_t kDepthLimit = maxDispatchDepthFromEnv();

}  // namespace

// dscope_debug_descriptor and dscope_debug_break_hook are defined in DebugDescriptor.cpp.

namespace dscope::debug {

DSCOPE_HOT_THREAD_LOCAL dscope_thread_records* current_thread_records DSCOPE_TLS_INITIAL_EXEC;

namespace {

// Marks the thread's block dead when the thread exits (a non-trivial thread_local, touched
// only on the registration slow path so the hot path keeps its plain TLS pointer).
struct ThreadRecordsOwner {
  dscope_thread_records* block = nullptr;
  ~ThreadRecordsOwner() {
    if (!block) return;
    current_thread_records = nullptr;
    std::atomic_ref<uint32_t>(block->state).store(DSCOPE_THREAD_DEAD, std::memory_order_release);
  }
};
thread_local ThreadRecordsOwner owner;

void claim(dscope_thread_records* r) {
  r->tid = static_cast<int32_t>(::syscall(SYS_gettid));
  r->tls = &impl::raw_local_dispatch_key_set;
  r->depth = 0;
  r->depth_limit = kDepthLimit;
  r->slow_depth = std::min<uint64_t>(kDepthLimit, DSCOPE_RECORDS_RING);
}

}  // namespace

dscope_thread_records* registerCurrentThread() {
  auto head = std::atomic_ref<dscope_thread_records*>(dscope_debug_descriptor.thread_records);
  dscope_thread_records* block = nullptr;
  // Reuse a dead thread's block: the registry stays as large as the most threads ever alive.
  for (auto* r = head.load(std::memory_order_acquire); r && !block; r = r->next) {
    uint32_t dead = DSCOPE_THREAD_DEAD;
    if (std::atomic_ref<uint32_t>(r->state).compare_exchange_strong(dead, DSCOPE_THREAD_ALIVE)) block = r;
  }
  if (!block) {
    block = new dscope_thread_records();  // never freed: tools may read it after the thread ends
    block->magic = DSCOPE_THREAD_RECORDS_MAGIC;
    block->state = DSCOPE_THREAD_ALIVE;
    claim(block);
    block->next = head.load(std::memory_order_relaxed);
    while (!head.compare_exchange_weak(block->next, block, std::memory_order_release, std::memory_order_relaxed)) {
    }
    std::atomic_ref<uint32_t>(dscope_debug_descriptor.thread_records_count).fetch_add(1, std::memory_order_relaxed);
  } else {
    claim(block);
  }
  owner.block = block;
  current_thread_records = block;
  detail::onThreadRegistered();
  return block;
}

namespace {

std::string describe(const dscope_dispatch_record& r) {
  return std::string(static_cast<const impl::OperatorEntry*>(r.op)->name_cstr()) + " at " +
         toString(recordKey(r)) + " (" + format::recordKindName(r.kind) + ")";
}

}  // namespace

void dispatchDepthExceeded(const dscope_thread_records& r) {
  std::string msg = "dispatch depth exceeded DSCOPE_MAX_DISPATCH_DEPTH=" + std::to_string(r.depth_limit);
  auto cycle = findDispatchCycle(r.depth, [&](uint64_t d) { return recordAt(r, d); });
  if (cycle.period) {
    const auto& top = *recordAt(r, r.depth - 1);
    msg += ": " + describe(top) + " re-enters the dispatcher in a cycle of " + std::to_string(cycle.period) +
           " dispatch(es), repeated " + std::to_string(cycle.repeats) + " times since depth " +
           std::to_string(cycle.start_depth) + ". A kernel probably calls op.call(...) where it should call " +
           "op.redispatch(ks & after_autograd_keyset, ...) (or run under AutoDispatchBelowAutograd).";
  } else if (r.depth > 0) {
    msg += "; innermost dispatch: " + describe(*recordAt(r, r.depth - 1));
  }
  throw Error(msg);
}

void deepPush(dscope_thread_records& r) {
  if (r.depth >= r.depth_limit) dispatchDepthExceeded(r);
  // The chain is about to outgrow the ring: its bottom records, all still live there, are kept
  // in `first` before the ring overwrites them.
  static_assert(DSCOPE_RECORDS_FIRST <= DSCOPE_RECORDS_RING);
  if (r.depth == DSCOPE_RECORDS_RING) std::memcpy(r.first, r.ring, sizeof(r.first));
}

void checkBreakFilter(const impl::OperatorEntry& op, DispatchKeySet ks, const dscope_break_dispatch& dispatch) {
  auto& d = dscope_debug_descriptor;
  uint32_t n = std::min<uint32_t>(std::atomic_ref<uint32_t>(d.break_count).load(std::memory_order_acquire), DSCOPE_MAX_BREAKS);
  for (uint32_t i = 0; i < n; ++i) {
    const auto& e = d.breaks[i];
    if (e.name_hash != op.name_hash() && e.name_hash != op.base_name_hash()) continue;  // the common case
    auto key = static_cast<uint16_t>(ks.highestPriorityTypeId());
    if (e.key == DSCOPE_BREAK_ANY_KEY || e.key == key) {
      callBreakHook(&op, ks.raw_repr(), key, dispatch);
      return;
    }
  }
}

bool addBreak(const std::string& name, std::optional<DispatchKey> key) {
  auto& d = dscope_debug_descriptor;
  auto count = std::atomic_ref<uint32_t>(d.break_count);
  uint32_t n = count.load();
  if (n >= DSCOPE_MAX_BREAKS) return false;
  d.breaks[n] = {dscope_fnv1a64(name.c_str()), key ? static_cast<uint16_t>(*key) : uint16_t{DSCOPE_BREAK_ANY_KEY}, {}};
  count.store(n + 1, std::memory_order_release);
  // Armed last, so a dispatch that sees the new bit also sees the entry.
  std::atomic_ref<uint64_t>(d.break_bloom).fetch_or(dscope_break_bloom_bit(d.breaks[n].name_hash), std::memory_order_release);
  return true;
}

void clearBreaks() {
  std::atomic_ref<uint64_t>(dscope_debug_descriptor.break_bloom).store(0);
  std::atomic_ref<uint32_t>(dscope_debug_descriptor.break_count).store(0);
}

}  // namespace dscope::debug
