// Our runtime's dispatch chains: a thread's live chain from its record block (never the native
// stack), or with --frames rebuilt from the debugger's stack (StackChain.h): the entry records,
// the repeating part folded into one line with its repeat count, the top records, and for a cycle
// a diagnosis naming the kernel that re-enters the dispatcher and the fix. Both sources print
// through one printer.
#include "stack/RecordTrace.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_set>

#include "dscope/DispatchRecords.h"
#include "dscope/format/DispatchRecord.h"
#include "stack/StackChain.h"
#include "target/ThreadLocal.h"
#include "text/Json.h"

namespace dscope::inspect {

namespace {

constexpr uint64_t kDefaultMaxFrames = 20000;  // --frames: a stack overflow has hundreds of thousands

constexpr uint64_t kEntryRecordsShown = 16;  // folded view: records before the loop
constexpr uint64_t kTopRecordsShown = 3;     // folded view: the innermost records

// The key is one of autograd's: its functionality is AutogradFunctionality (a backend's autograd
// key), AutogradOther or AutogradNestedTensor.
bool isAutogradKey(const KeyTable& kt, int key) {
  const KeyInfo* k = kt.byValue(key);
  if (!k) return false;
  for (const char* name : {"AutogradFunctionality", "AutogradOther", "AutogradNestedTensor"})
    if (const KeyInfo* f = kt.byName(name); f && f->bits && (k->bits & f->bits) == f->bits) return true;
  return false;
}

// A dispatch chain, oldest first: a thread's record block, or the records rebuilt from its stack.
struct Chain {
  uint64_t depth = 0;
  std::function<const dscope_dispatch_record*(uint64_t)> at;  // null: overwritten (records only)
  const StackChain* stack = nullptr;                            // --frames

  // The next depth >= d whose record is held (depth when none): skips the overwritten middle, so
  // a walk over a chain costs what it holds, whatever its depth (corrupt memory may say 2^62).
  uint64_t next(uint64_t d) const {
    if (d < depth && !at(d)) return depth > DSCOPE_RECORDS_RING ? depth - DSCOPE_RECORDS_RING : depth;
    return d;
  }

  static Chain of(const ThreadBlock& b) {
    const dscope_thread_records* r = &b.records;
    return {r->depth, [r](uint64_t d) { return debug::recordAt(*r, d); }, nullptr, b.tid};
  }
  static Chain of(const StackChain& sc) {
    const StackChain* c = &sc;
    return {sc.dispatches.size(), [c](uint64_t d) { return &c->dispatches[d].rec; }, c, sc.tid};
  }

  int64_t tid = 0;
};

// What the command says about one chain; text and JSON print the same analysis.
struct Trace {
  Chain chain;
  debug::DispatchCycle cycle;
  std::vector<uint64_t> entry, top;  // depths shown in the folded view
  uint64_t entry_hidden = 0;         // entry records left out of the folded view
  std::string diagnosis, fix;
  // Records that cannot be the dispatch the runtime pushed (records only), by depth: why.
  std::map<uint64_t, std::string> corrupt;
  uint64_t corrupt_limit = 0;  // more than this many: no chain the thread pushed

  uint64_t depth() const { return chain.depth; }
  const dscope_dispatch_record* at(uint64_t d) const { return chain.at(d); }
  bool isCorrupt(uint64_t d) const { return corrupt.count(d) != 0; }
  // A record that says what it dispatched: not corrupt, and (from the stack) known in full.
  bool isSound(uint64_t d) const {
    if (isCorrupt(d)) return false;
    return !chain.stack || (chain.stack->dispatches[d].keyKnown() && chain.stack->dispatches[d].rec.kind);
  }
};

// A block may hold this many corrupt records (a record caught being written, a flipped byte)
// before it is taken for no dispatch chain at all (a depth the thread never reached).
uint64_t maxCorruptRecords(uint64_t held) { return std::max<uint64_t>(2, held / 32); }

class TracePrinter {
 public:
  explicit TracePrinter(const RuntimeView& rt) : rt_(rt) {}

  Trace analyze(Chain chain) const {
    Trace t;
    t.chain = std::move(chain);
    const uint64_t depth = t.depth();
    if (depth == 0) return t;
    if (t.chain.stack) {
      // What the stack did not show (a dispatch caught before it entered a kernel, the kind of one
      // whose entry point was past the frames walked) may be anything the loop needs.
      auto same = [](const dscope_dispatch_record& a, const dscope_dispatch_record& b) {
        auto fits = [](auto x, auto y) { return !x || !y || x == y; };
        return fits(a.op, b.op) && fits(a.kernel, b.kernel) && fits(a.keyset, b.keyset) && fits(a.kind, b.kind);
      };
      t.cycle = debug::findDispatchCycle(depth, t.chain.at, DSCOPE_RECORDS_RING, DSCOPE_RECORDS_RING / 3, same);
    } else {
      findCorruptRecords(t);
      findLoopAroundCorruptRecords(t);
    }
    // Every phase of the loop is shown by a sound record; a loop made of corrupt ones is none.
    for (uint64_t i = 0; t.cycle.period && i < t.cycle.period; ++i)
      if (!phaseRecord(t, i)) t.cycle = {};
    const uint64_t entry_end = t.cycle.period ? t.cycle.start_depth : depth;
    uint64_t d = t.chain.next(0);
    for (; d < entry_end && t.entry.size() < kEntryRecordsShown; d = t.chain.next(d + 1)) t.entry.push_back(d);
    for (; d < entry_end; d = t.chain.next(d + 1)) ++t.entry_hidden;
    if (t.cycle.period) {
      for (uint64_t d = depth - std::min(depth - t.cycle.start_depth, kTopRecordsShown); d < depth; ++d) t.top.push_back(d);
      diagnose(t);
    }
    return t;
  }

  // The key a record's dispatch went to: its key set's highest key, by the runtime's key table.
  int recordKey(const dscope_dispatch_record& r) const { return rt_.keys().highestKey(r.keyset); }

  // --frames may not know a dispatch's operator or key (StackDispatch): it says how many it could be.
  std::string opName(const Trace& t, uint64_t d) const {
    if (const void* op = t.at(d)->op) return rt_.operatorName(reinterpret_cast<uint64_t>(op));
    const uint32_t ops = t.chain.stack ? t.chain.stack->dispatches[d].ops : 0;
    return ops ? "<one of " + std::to_string(ops) + " operators>" : "<no kernel entered>";
  }
  std::string keyName(const Trace& t, uint64_t d) const {
    if (t.chain.stack && !t.chain.stack->dispatches[d].keyKnown()) {
      const StackDispatch& sd = t.chain.stack->dispatches[d];
      return sd.ops == 1 ? "<one of " + std::to_string(sd.keys) + " keys>" : "?";
    }
    return rt_.keys().name(recordKey(*t.at(d)));
  }
  std::string line(const Trace& t, uint64_t d) const {
    return format::recordLine(t.at(d)->kind, opName(t, d), std::string_view(keyName(t, d)));
  }
  std::string numbered(const Trace& t, uint64_t d) const {
    if (t.isCorrupt(d)) return "#" + std::to_string(d) + " (corrupt record: " + t.corrupt.at(d) + ")";
    std::string out = "#" + std::to_string(d) + " " + line(t, d);
    if (t.chain.stack) out += "  (stack frame #" + std::to_string(t.chain.stack->dispatches[d].frame) + ")";
    return out;
  }

  // The lines after a chain's header line.
  std::string body(const Trace& t, bool full) const {
    if (full || !t.cycle.period) return allRecords(t);
    const auto& c = t.cycle;
    std::string out;
    if (!t.entry.empty()) {
      out += "  entry (before the loop):\n";
      for (uint64_t d : t.entry) out += "    " + numbered(t, d) + "\n";
      if (t.entry_hidden) out += "    ... " + groupThousands(t.entry_hidden) + " more (dispatch-trace --full)\n";
    }
    const bool partial = t.chain.stack && t.chain.stack->end != StackChain::End::Outermost;
    out += "  loop: a cycle of " + std::to_string(c.period) + (c.period == 1 ? " dispatch" : " dispatches") +
           (c.start_in_gap ? " from depth <= " : " from depth ") + groupThousands(c.start_depth) + " to the top" +
           (c.start_in_gap ? " (where it began was overwritten)" : "") +
           (partial ? " (it may begin below the frames walked)" : "") + ":\n";
    const std::string repeated = " ... repeated " + groupThousands(c.repeats) + " times";
    if (c.period == 1) {
      out += "    " + line(t, *phaseRecord(t, 0)) + repeated + "\n";
    } else {
      for (uint64_t i = 0; i < c.period; ++i) out += "    " + line(t, *phaseRecord(t, i)) + "\n";
      out += "   " + repeated + "\n";
    }
    out += "  top of the chain:\n";
    for (uint64_t d : t.top) out += "    " + numbered(t, d) + "\n";
    out += "  diagnosis: " + t.diagnosis + "\n";
    out += "  fix: " + t.fix + "\n";
    return out;
  }

  std::string text(const Trace& t, const ThreadBlock& b, bool full) const {
    const auto& r = b.records;
    std::string out = "thread tid " + b.shown_tid + (r.state == DSCOPE_THREAD_ALIVE ? " (alive)" : " (dead)");
    if (r.depth == 0) return out + ": no dispatch in progress\n";
    return out + ": dispatch depth " + groupThousands(r.depth) + "\n" + body(t, full);
  }

  std::string text(const Trace& t, const StackChain& sc, bool full) const {
    std::string out = "dispatch chain from the native stack (" + counted(sc.frames_walked, "frame") + " walked";
    if (sc.end == StackChain::End::Bound)
      out += "; stopped at the " + groupThousands(sc.frames_walked) + "-frame bound (--max-frames), older frames not read";
    if (sc.end == StackChain::End::DebuggerCap)
      out += "; stopped at the debugger's " + groupThousands(sc.debugger_cap) +
             "-frame cap (GDB: set backtrace limit, LLDB: settings set target.process.thread.max-backtrace-depth), older frames not read";
    if (sc.end == StackChain::End::Unreadable || sc.end == StackChain::End::Corrupt)
      out += std::string("; the debugger could not unwind past the last one: ") +
             (sc.end == StackChain::End::Unreadable
                  ? "the stack memory of its caller is unreadable (a truncated core, or unmapped memory)"
                  : "the stack is corrupt there") +
             ", older frames not read";
    out += "):\nthread tid " + std::to_string(sc.tid);
    if (t.depth() == 0)
      return out + (sc.end == StackChain::End::Outermost ? ": no dispatch frame on the stack\n"
                                                          : ": no dispatch frame in the frames walked\n");
    out += ": dispatch depth " + groupThousands(t.depth()) + " on the stack" +
           (sc.end == StackChain::End::Outermost ? "" : " walked (the chain's start was not reached)") + "\n";
    out += body(t, full);
    uint64_t unknown = 0;
    for (const auto& d : sc.dispatches) unknown += !d.keyKnown();
    if (unknown)
      out += "  note: " + counted(unknown, "dispatch") + " on the stack did not show which kernel it entered (it had not "
             "entered one yet, or entered one several operators or keys share): its operator or key is not known\n";
    return out;
  }

  void json(Json& j, const Trace& t, const ThreadBlock& b, bool full) const {
    const auto& r = b.records;
    j.beginObject().field("tid", b.tid);
    j.field("state", r.state == DSCOPE_THREAD_ALIVE ? "alive" : "dead").field("depth", r.depth);
    jsonBody(j, t, full);
  }

  void json(Json& j, const Trace& t, const StackChain& sc, bool full) const {
    static const char* kEnds[] = {"outermost frame", "--max-frames bound", "debugger's frame cap", "unreadable stack",
                                  "corrupt stack"};
    j.beginObject().field("source", "frames").field("tid", static_cast<int64_t>(sc.tid));
    j.field("frames_walked", sc.frames_walked).field("walk_ended_at", kEnds[static_cast<int>(sc.end)]);
    j.field("depth", t.depth());
    jsonBody(j, t, full);
  }

  void jsonBody(Json& j, const Trace& t, bool full) const {
    j.key("cycle");
    if (t.cycle.period) {
      j.beginObject().field("period", t.cycle.period).field("start_depth", t.cycle.start_depth);
      j.field("repeats", t.cycle.repeats).field("start_in_gap", t.cycle.start_in_gap).key("records").beginArray();
      for (uint64_t i = 0; i < t.cycle.period; ++i) recordJson(j, t, *phaseRecord(t, i));
      j.endArray().endObject();
    } else {
      j.null();
    }
    auto depths = [&](const char* name, const std::vector<uint64_t>& ds) {
      j.key(name).beginArray();
      for (uint64_t d : ds) recordJson(j, t, d);
      j.endArray();
    };
    if (full || !t.cycle.period) {
      std::vector<uint64_t> all;
      for (uint64_t d = t.chain.next(0); d < t.depth(); d = t.chain.next(d + 1)) all.push_back(d);
      depths("records", all);
    } else {
      depths("entry", t.entry);
      depths("top", t.top);
    }
    j.text("diagnosis", t.diagnosis).text("fix", t.fix).endObject();
  }

  // dispatch-summary's view of a block's chain (DispatchSummary.h).
  ThreadDispatchState state(const Trace& t, const ThreadBlock& b) const {
    ThreadDispatchState st;
    st.tid = b.tid;
    st.shown_tid = b.shown_tid;
    st.state = b.records.state == DSCOPE_THREAD_ALIVE ? "alive" : "dead";
    st.depth = t.depth();
    if (const uint64_t d = t.depth() - 1; t.depth() && t.at(d) && !t.isCorrupt(d)) {
      st.innermost = line(t, d);
      st.innermost_op = opName(t, d);
      st.innermost_key = keyName(t, d);
      const impl::TableEntrySource source =
          rt_.tableEntry(reinterpret_cast<uint64_t>(t.at(d)->op), recordKey(*t.at(d))).source;
      st.innermost_unregistered =
          source == impl::TableEntrySource::BackendFallback || source == impl::TableEntrySource::Missing;
    }
    if (t.cycle.period) {
      DispatchLoop loop{t.cycle.period, t.cycle.repeats, t.cycle.start_in_gap, "", "", ""};
      for (uint64_t i = 0; i < t.cycle.period; ++i) {
        const uint64_t d = *phaseRecord(t, i);
        const std::string op = opName(t, d), key = keyName(t, d);
        if (!loop.op.empty() && std::tie(loop.op, loop.key) <= std::tie(op, key)) continue;
        loop.op = op;
        loop.key = key;
        loop.kernel = shortFunctionName(rt_.kernelSymbol(rt_.kernel(reinterpret_cast<uint64_t>(t.at(d)->kernel))));
      }
      st.loop = loop;
    }
    if (b.records.state == DSCOPE_THREAD_ALIVE) {
      try {
        const KeyTable& kt = rt_.keys();
        const auto [included, excluded] = rt_.threadTls(b);
        st.tls_included = kt.keyNames(included);
        st.tls_excluded = kt.keyNames(excluded);
        st.tls_change = tlsChange({included, excluded}, {kt.defaults().included, kt.defaults().excluded},
                                  [&](uint64_t raw) { return kt.keyNames(raw); });
      } catch (const InspectError& e) {
        rt_.warn(std::string(e.what()).substr(8));  // without "dscope: ": warn adds it back
      }
    }
    return st;
  }

 private:
  // The depth of the record of phase i (0 = the first record of a repetition) in the top whole
  // repetition that holds a sound one; nullopt when none does.
  static std::optional<uint64_t> phaseRecord(const Trace& t, uint64_t i) {
    // The last whole repetitions are in the ring (findDispatchCycle compared them).
    for (uint64_t r = t.cycle.repeats; r-- > 0 && r + 4 > t.cycle.repeats;) {
      const uint64_t d = t.cycle.start_depth + r * t.cycle.period + i;
      if (t.at(d) && t.isSound(d)) return d;
    }
    return std::nullopt;
  }

  // Records the runtime cannot have pushed: a kind it has not, no operator, a key set with bits
  // no key has or whose slot is not the one stored. The runtime writes a record before it counts
  // it, so only the innermost may be half-written (a thread caught mid-push); more than a few
  // mean the depth is not one the thread reached.
  void findCorruptRecords(Trace& t) const {
    uint64_t held = 0;
    for (uint64_t d = t.chain.next(0); d < t.depth(); d = t.chain.next(d + 1)) {
      ++held;
      const dscope_dispatch_record& r = *t.at(d);
      std::string why;
      if (r.kind < DSCOPE_RECORD_CALL || r.kind > DSCOPE_RECORD_REDISPATCH_BOXED)
        why = "kind " + std::to_string(r.kind) + " is no dispatch";
      else if (!r.op || !rt_.tryOperatorName(reinterpret_cast<uint64_t>(r.op)))
        why = "op " + hex(reinterpret_cast<uint64_t>(r.op)) + " is no operator";
      else if (rt_.keys().unknownBits(r.keyset))
        why = "key set " + hex(r.keyset) + " has bits no dispatch key has";
      else if (r.slot != rt_.keys().slotOf(r.keyset))
        why = "slot " + std::to_string(r.slot) + " is not the slot of its key set " + hex(r.keyset);
      else if (!r.kernel || rt_.tableKernel(reinterpret_cast<uint64_t>(r.op), r.slot) != reinterpret_cast<uint64_t>(r.kernel))
        why = "kernel " + hex(reinterpret_cast<uint64_t>(r.kernel)) + " is not the one its operator's table holds at slot " +
              std::to_string(r.slot);
      if (!why.empty()) t.corrupt.emplace(d, std::move(why));
    }
    t.corrupt_limit = maxCorruptRecords(held);
    if (t.corrupt.size() > t.corrupt_limit) {
      const auto& [d, why] = *t.corrupt.begin();
      fail("thread tid " + rt_.mem().threadIds().shown(t.chain.tid) + ": " + std::to_string(t.corrupt.size()) + " of the " +
           std::to_string(held) + " records it holds are not dispatches (the first, at depth " + groupThousands(d) +
           " of " + groupThousands(t.depth()) + ": " + why + "): corrupt memory, or a depth the thread never reached");
    }
  }

  // The loop, with every corrupt record taken to match any: it folds around them. A record below
  // the loop found that breaks it while the kRepeatsBelow records under it go on repeating it is a
  // damaged one (a flipped byte), not where the loop began: it is taken for corrupt too. (The
  // entry of a chain may differ from its loop for real: nothing in it is taken so.)
  void findLoopAroundCorruptRecords(Trace& t) const {
    constexpr uint64_t kRepeatsBelow = 16;
    std::unordered_set<const dscope_dispatch_record*> wildcards;
    for (const auto& [d, why] : t.corrupt) wildcards.insert(t.at(d));
    auto same = [&](const dscope_dispatch_record& a, const dscope_dispatch_record& b) {
      return wildcards.count(&a) || wildcards.count(&b) || debug::sameDispatch(a, b);
    };
    for (;;) {
      t.cycle = debug::findDispatchCycle(t.depth(), t.chain.at, DSCOPE_RECORDS_RING, DSCOPE_RECORDS_RING / 3, same);
      const uint64_t x = t.cycle.start_depth - 1, below = std::max(2 * t.cycle.period, kRepeatsBelow);
      if (!t.cycle.period || t.cycle.start_depth <= below || !t.at(x) || t.corrupt.size() >= t.corrupt_limit) break;
      bool repeats_below = true;
      for (uint64_t y = x - below; repeats_below && y < x; ++y) repeats_below = fitsLoop(t, y);
      if (!repeats_below) break;
      t.corrupt.emplace(x, "it breaks the loop the records on both sides of it repeat");
      wildcards.insert(t.at(x));
    }
    for (const auto& [d, why] : t.corrupt)
      rt_.warn("thread tid " + rt_.mem().threadIds().shown(t.chain.tid) + ": the record at depth " + groupThousands(d) +
               " is corrupt (" + why + ")" + (d + 1 == t.depth() ? ": the innermost, perhaps caught being written" : "") +
               "; the chain is read around it");
  }

  // Record d repeats the loop: it is the same dispatch as the loop's sound record of its phase.
  static bool fitsLoop(const Trace& t, uint64_t d) {
    const uint64_t p = t.cycle.period, start = t.cycle.start_depth;
    const auto ref = phaseRecord(t, ((d % p) + p - (start % p)) % p);
    return t.at(d) && !t.isCorrupt(d) && ref && debug::sameDispatch(*t.at(d), *t.at(*ref));
  }

  std::string allRecords(const Trace& t) const {
    std::string out;
    const uint64_t depth = t.depth();
    for (uint64_t d = 0; d < depth;) {
      if (t.at(d)) {
        out += "    " + numbered(t, d) + (d + 1 == depth ? "  (innermost)" : "") + "\n";
        ++d;
        continue;
      }
      uint64_t next = t.chain.next(d);
      out += "    ... depths " + groupThousands(d) + " to " + groupThousands(next - 1) + " overwritten (the block keeps the first " +
             std::to_string(DSCOPE_RECORDS_FIRST) + " and the last " + std::to_string(DSCOPE_RECORDS_RING) + " records)\n";
      d = next;
    }
    return out;
  }

  void recordJson(Json& j, const Trace& t, uint64_t d) const {
    const auto& rec = *t.at(d);
    if (t.isCorrupt(d)) {
      j.beginObject().field("depth", d).field("corrupt", t.corrupt.at(d)).endObject();
      return;
    }
    j.beginObject().field("depth", d).field("kind", format::recordKindName(rec.kind));
    if (!t.chain.stack) {
      j.field("op", opName(t, d)).field("key", keyName(t, d));
      j.field("keyset", hex(rec.keyset)).field("slot", static_cast<uint32_t>(rec.slot));
      j.endObject();
      return;
    }
    // From the stack: no key set (the kernel tells the key alone); null for what it does not tell,
    // with the number of operators / keys it could be.
    const StackDispatch& sd = t.chain.stack->dispatches[d];
    j.key("op");
    if (rec.op) j.value(opName(t, d));
    else j.null();
    j.key("key");
    if (sd.keyKnown()) j.value(keyName(t, d));
    else j.null();
    if (sd.keyKnown()) j.field("slot", static_cast<uint32_t>(rec.slot));
    else j.field("candidate_ops", static_cast<uint64_t>(sd.ops)).field("candidate_keys", static_cast<uint64_t>(sd.keys));
    j.field("stack_frame", sd.frame).endObject();
  }

  // The kernel of the last record of a repetition is the one that dispatches the first record
  // of the next repetition: it re-enters the dispatcher.
  void diagnose(Trace& t) const {
    const uint64_t callee_d = *phaseRecord(t, 0), caller_d = *phaseRecord(t, t.cycle.period - 1);
    const dscope_dispatch_record& reentered = *t.at(callee_d);
    const dscope_dispatch_record& caller = *t.at(caller_d);
    const std::string caller_op = opName(t, caller_d), callee_op = opName(t, callee_d);
    const std::string caller_key = keyName(t, caller_d), callee_key = keyName(t, callee_d);
    std::string who = caller_op + "'s " + caller_key + " kernel";
    if (caller.kernel) {  // --frames may not know it
      RemoteKernel k = rt_.kernel(reinterpret_cast<uint64_t>(caller.kernel));
      who += " (" + rt_.kernelSymbol(k) + ", " + k.debug + ")";
    }
    if (reentered.kind == DSCOPE_RECORD_CALL && isAutogradKey(rt_.keys(), recordKey(reentered)) && caller.op == reentered.op) {
      t.diagnosis = who + " calls " + callee_op + " again with op.call(...): call() recomputes the key set from the "
                    "arguments and the thread-local sets, which still select " + callee_key +
                    ", so the kernel re-enters itself until the stack overflows";
      t.fix = "in that kernel, continue below autograd: op.redispatch(ks & after_autograd_keyset, ...) with the "
              "kernel's DispatchKeySet argument, or make the call under an AutoDispatchBelowADInplaceOrView guard";
      return;
    }
    t.diagnosis = who + " dispatches " + callee_op + " at " + callee_key + " (" + format::recordKindLabel(reentered.kind) +
                  "), which leads back to the same kernel: the dispatcher is re-entered without making progress";
    t.fix = "the re-entering dispatch must land below " + caller_key +
            ": redispatch with a key set that excludes it, or exclude it with an ExcludeDispatchKeyGuard around the call";
  }

  const RuntimeView& rt_;
};

}  // namespace

namespace {

std::string framesTrace(const RuntimeView& rt, const Dispatcher& d, const TraceRequest& request) {
  const uint64_t max_frames = request.max_frames.value_or(kDefaultMaxFrames);
  int64_t tid = rt.mem().selectedTid();
  if (request.thread) {
    auto t = rt.mem().threadTid(*request.thread);
    if (!t) fail("no thread " + std::to_string(*request.thread));
    tid = *t;
  }
  if (!tid) fail("no process or core file: dispatch-trace --frames reads a thread's stack");
  StackChain chain = readStackChain(rt, d, tid, max_frames);
  TracePrinter printer(rt);
  Trace t = printer.analyze(Chain::of(chain));
  if (request.json) {
    Json j;
    printer.json(j, t, chain, request.full);
    return j.str();
  }
  return printer.text(t, chain, request.full);
}

}  // namespace

ProcessDispatchState recordsDispatchState(const RuntimeView& rt) {
  if (!rt.descriptor().records_enabled)
    fail("this runtime was built with DSCOPE_DISPATCH_RECORDS=OFF: dispatch-summary reads the dispatch records "
         "(dispatch-trace --frames rebuilds one thread's chain from the stack)");
  ProcessDispatchState process{"dscope", "records", rt.mem().selectedTid(), {}};
  TracePrinter printer(rt);
  for (const ThreadBlock& b : rt.threadBlocks()) {
    ThreadDispatchState st;
    st.tid = b.tid;
    st.shown_tid = b.shown_tid;
    st.error = b.corrupt.empty() ? "" : corruptBlockLine(b);
    if (st.error.empty()) {
      try {
        st = printer.state(printer.analyze(Chain::of(b)), b);
      } catch (const InspectError& e) {
        st.error = e.what();
      }
    }
    process.threads.push_back(std::move(st));
  }
  return process;
}

std::string recordsDispatchTrace(const RuntimeView& rt, const Dispatcher& d, const TraceRequest& request) {
  if (request.frames) return framesTrace(rt, d, request);
  if (!rt.descriptor().records_enabled)
    fail("this runtime was built with DSCOPE_DISPATCH_RECORDS=OFF: there are no dispatch records to show "
         "(dispatch-trace --frames rebuilds the chain from the stack)");
  const auto blocks = rt.threadBlocks();
  std::vector<const ThreadBlock*> selected;
  if (request.all) {
    for (const auto& b : blocks) selected.push_back(&b);
    if (selected.empty()) fail("no thread has dispatched yet (no dispatch records)");
  } else {
    selected.push_back(&selectThread(rt, blocks, rt.mem().chosenThread(request.thread)));
  }
  TracePrinter printer(rt);
  const bool full = request.full;
  // With --all, a thread whose block or records are corrupt gets its one line, and the others
  // their chains.
  std::vector<std::pair<const ThreadBlock*, std::optional<Trace>>> traces;
  std::vector<std::string> errors;
  for (const auto* b : selected) {
    std::optional<Trace> trace;
    std::string error = b->corrupt.empty() ? "" : corruptBlockLine(*b);
    if (error.empty()) {
      try {
        trace = printer.analyze(Chain::of(*b));
      } catch (const InspectError& e) {
        if (!request.all) throw;
        error = e.what();
      }
    }
    traces.emplace_back(b, std::move(trace));
    errors.push_back(std::move(error));
  }
  if (request.json) {
    Json j;
    j.beginObject().key("threads").beginArray();
    for (size_t i = 0; i < traces.size(); ++i) {
      const auto& [b, trace] = traces[i];
      if (trace) printer.json(j, *trace, *b, full);
      else j.beginObject().field("block", hex(b->addr)).field("error", errors[i]).endObject();
    }
    return j.endArray().endObject().str();
  }
  std::string out;
  for (size_t i = 0; i < traces.size(); ++i) {
    const auto& [b, trace] = traces[i];
    out += (out.empty() ? "" : "\n") + (trace ? printer.text(*trace, *b, full) : errors[i] + "\n");
  }
  return out;
}

}  // namespace dscope::inspect
