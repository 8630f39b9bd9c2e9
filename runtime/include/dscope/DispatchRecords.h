// Per-thread dispatch records (the shadow stack of docs/DEBUG-INTERFACE.md) and the break
// filter check: the two things every dispatch does for outside readers.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "dscope/DebugInterface.h"
#include "dscope/DispatchKeySet.h"
#include "dscope/LocalDispatchKeySet.h"

// 0 only to measure what the records cost (CMake option DSCOPE_DISPATCH_RECORDS=OFF).
#ifndef DSCOPE_DISPATCH_RECORDS
#define DSCOPE_DISPATCH_RECORDS 1
#endif

namespace dscope::impl {
class OperatorEntry;
struct AnnotatedKernel;
}  // namespace dscope::impl

namespace dscope::debug {

static_assert((DSCOPE_RECORDS_RING & (DSCOPE_RECORDS_RING - 1)) == 0, "the ring size must be a power of two");

// This thread's block; null until the thread's first dispatch.
extern DSCOPE_HOT_THREAD_LOCAL dscope_thread_records* current_thread_records DSCOPE_TLS_INITIAL_EXEC;
// Claims a dead block or allocates a new one, and links it into the registry (lock-free).
dscope_thread_records* registerCurrentThread();
// DSCOPE_MAX_DISPATCH_DEPTH exceeded: throws dscope::Error naming the repeating dispatch.
[[noreturn]] void dispatchDepthExceeded(const dscope_thread_records& r);
// A push at depth >= slow_depth: enforces the depth limit, and keeps the bottom records when
// the chain grows past the ring. Only deep chains get here.
void deepPush(dscope_thread_records& r);

// The record at depth d of a chain of `depth` records, if the block still holds it.
// (depth - d, not d + RING: a corrupt depth near 2^64 must not wrap around.)
inline const dscope_dispatch_record* recordAt(const dscope_thread_records& r, uint64_t d) {
  if (d >= r.depth) return nullptr;
  if (r.depth - d <= DSCOPE_RECORDS_RING) return &r.ring[d % DSCOPE_RECORDS_RING];
  if (d < DSCOPE_RECORDS_FIRST) return &r.first[d];
  return nullptr;  // in the middle of a very deep chain: overwritten
}

// The key a record's dispatch went to.
inline DispatchKey recordKey(const dscope_dispatch_record& r) {
  return DispatchKeySet::from_raw_repr(r.keyset).highestPriorityTypeId();
}

// Pushes one record for the lifetime of a dispatch; popped on return and on exception.
// About a dozen instructions: always inlined into the dispatch path.
class RecordScope {
 public:
  [[gnu::always_inline]] RecordScope(const impl::OperatorEntry* op, const impl::AnnotatedKernel* kernel,
                                     DispatchKeySet ks, int slot, dscope_record_kind kind) {
#if DSCOPE_DISPATCH_RECORDS
    r_ = current_thread_records;
    if (!r_) [[unlikely]] r_ = registerCurrentThread();
    uint64_t d = r_->depth;
    if (d >= r_->slow_depth) [[unlikely]] deepPush(*r_);
    // Field by field into place: building the record on the stack and copying it stalls on
    // store forwarding (a wide load over several narrower stores).
    dscope_dispatch_record& rec = r_->ring[d % DSCOPE_RECORDS_RING];
    rec.op = op;
    rec.kernel = kernel;
    rec.keyset = ks.raw_repr();
    rec.slot = static_cast<uint16_t>(slot);
    rec.kind = static_cast<uint8_t>(kind);
    r_->depth = d + 1;
#else
    (void)op, (void)kernel, (void)ks, (void)slot, (void)kind;
#endif
  }
  [[gnu::always_inline]] ~RecordScope() {
#if DSCOPE_DISPATCH_RECORDS
    --r_->depth;
#endif
  }
  RecordScope(const RecordScope&) = delete;
  RecordScope& operator=(const RecordScope&) = delete;

 private:
#if DSCOPE_DISPATCH_RECORDS
  dscope_thread_records* r_;
#endif
};

// The break filter's bloom word: one relaxed load and one branch per dispatch while it is 0 (no
// entry armed). While armed, a dispatch tests it against its operator's breakMask() inline and
// calls checkBreakFilter only when they meet:
//   if (uint64_t armed = debug::breakBloom()) [[unlikely]]
//     if (armed & entry.breakMask()) debug::checkBreakFilter(entry, ks, <describe the dispatch>);
inline uint64_t breakBloom() {
  return std::atomic_ref<uint64_t>(dscope_debug_descriptor.break_bloom).load(std::memory_order_relaxed);
}
// Calls dscope_debug_break_hook when (op, chosen key) matches an entry; `dispatch` is what the
// hook passes on (DispatchKeyExtractor::describeUnboxed / describeBoxed).
void checkBreakFilter(const impl::OperatorEntry& op, DispatchKeySet ks, const dscope_break_dispatch& dispatch);
// Calls the hook, then counts the hit (DebugDescriptor.cpp: see there why it lives apart).
[[gnu::noinline]] void callBreakHook(const void* op, uint64_t keyset, uint16_t key, const dscope_break_dispatch& dispatch);

// In-process arming of the break filter (what a debugger does by writing the descriptor).
// Returns false when the table is full. name: "aten::mm" or "aten::add.Tensor".
bool addBreak(const std::string& name, std::optional<DispatchKey> key = std::nullopt);
void clearBreaks();

// ---- the repeating part of a dispatch chain ----

struct DispatchCycle {
  uint64_t period = 0;       // records per repetition; 0: no repetition found
  uint64_t start_depth = 0;  // depth of the first record of the first repetition
  uint64_t repeats = 0;      // whole repetitions from start_depth to the top
  bool start_in_gap = false; // the loop began in the overwritten middle: start_depth is a bound
};

// Two records describe the same dispatch (same op, kernel, key set and kind).
inline bool sameDispatch(const dscope_dispatch_record& a, const dscope_dispatch_record& b) {
  return a.op == b.op && a.kernel == b.kernel && a.keyset == b.keyset && a.kind == b.kind;
}

// Finds the shortest period p such that the top 3p records repeat with period p (so at least
// three repetitions, within the top `window` records), then walks down to where the
// repetition starts. `at(d)` returns the record at depth d or null; `depth` is the chain
// length. Pure: runs in-process (crash handler, max-depth error) and out of process (inspect
// library) alike. Bounded by max_period * window + depth record comparisons. `same` compares two
// records (a reader that meets a corrupt record may let it match anything).
template <class At, class Same = bool (*)(const dscope_dispatch_record&, const dscope_dispatch_record&)>
DispatchCycle findDispatchCycle(uint64_t depth, At&& at, uint64_t window = DSCOPE_RECORDS_RING,
                                uint64_t max_period = DSCOPE_RECORDS_RING / 3, Same same = sameDispatch) {
  DispatchCycle c;
  if (window > depth) window = depth;
  for (uint64_t p = 1; p <= max_period && 3 * p <= window; ++p) {
    bool ok = true;
    for (uint64_t d = depth - 2 * p; d < depth && ok; ++d) {
      const dscope_dispatch_record *a = at(d), *b = at(d - p);
      ok = a && b && same(*a, *b);
    }
    if (!ok) continue;
    // Extend downwards while the records we still have keep the pattern.
    uint64_t start = depth - 3 * p;
    while (start > 0) {
      const dscope_dispatch_record *a = at(start - 1), *b = at(start - 1 + p);
      if (!a || !b || !same(*a, *b)) break;
      --start;
    }
    if (start > 0 && !at(start - 1)) {
      // A gap (the chain is deeper than first + ring): look for the start in the bottom records,
      // comparing each with the top record of the same phase.
      uint64_t top = depth - p;
      auto samePhase = [&](uint64_t d) { return at(top + ((d % p) + p - (top % p)) % p); };
      uint64_t end = 0;
      while (end < start && at(end)) ++end;
      uint64_t d0 = end;
      while (d0 > 0 && same(*at(d0 - 1), *samePhase(d0 - 1))) --d0;
      if (end > 0 && d0 < end) start = d0;
      else c.start_in_gap = true;
    }
    c.period = p;
    c.start_depth = start;
    c.repeats = (depth - start) / p;
    return c;
  }
  return c;
}

}  // namespace dscope::debug
