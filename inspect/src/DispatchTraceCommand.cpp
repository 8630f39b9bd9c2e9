// dispatch-trace [--thread N|--all] [--full] [--json]
//
// A thread's live dispatch chain from its record block (never the native stack): the entry
// records, the repeating part folded into one line with its repeat count, the top records, and
// for a cycle a diagnosis naming the kernel that re-enters the dispatcher and the fix.
#include <string>

#include "CommandLine.h"
#include "Commands.h"
#include "Json.h"
#include "dscope/DispatchRecords.h"
#include "dscope/format/DispatchRecord.h"

namespace dscope::inspect {

namespace {

const char* kUsage = "dispatch-trace [--thread N|--all] [--full] [--json]";

constexpr uint64_t kEntryRecordsShown = 16;  // folded view: records before the loop
constexpr uint64_t kTopRecordsShown = 3;     // folded view: the innermost records

bool isAutogradKey(DispatchKey k) {
  DispatchKey f = toFunctionalityKey(k);
  return f == DispatchKey::AutogradFunctionality || f == DispatchKey::AutogradOther ||
         f == DispatchKey::AutogradNestedTensor;
}

// What the command says about one thread; text and JSON print the same analysis.
struct Trace {
  const ThreadBlock* block = nullptr;
  debug::DispatchCycle cycle;
  std::vector<uint64_t> entry, top;  // depths shown in the folded view
  uint64_t entry_hidden = 0;         // entry records left out of the folded view
  std::string diagnosis, fix;

  const dscope_thread_records& r() const { return block->records; }
  const dscope_dispatch_record* at(uint64_t d) const { return debug::recordAt(r(), d); }
};

class TracePrinter {
 public:
  explicit TracePrinter(const RuntimeView& rt) : rt_(rt) {}

  Trace analyze(const ThreadBlock& b) const {
    Trace t;
    t.block = &b;
    const uint64_t depth = b.records.depth;
    if (depth == 0) return t;
    t.cycle = debug::findDispatchCycle(depth, [&](uint64_t d) { return t.at(d); });
    const uint64_t entry_end = t.cycle.period ? t.cycle.start_depth : depth;
    for (uint64_t d = 0; d < entry_end && t.entry.size() < kEntryRecordsShown; ++d)
      if (t.at(d)) t.entry.push_back(d);
    for (uint64_t d = t.entry.empty() ? 0 : t.entry.back() + 1; d < entry_end; ++d) t.entry_hidden += t.at(d) != nullptr;
    if (t.cycle.period) {
      for (uint64_t d = depth - std::min(depth - t.cycle.start_depth, kTopRecordsShown); d < depth; ++d) t.top.push_back(d);
      diagnose(t);
    }
    return t;
  }

  std::string line(const dscope_dispatch_record& rec) const {
    return format::recordLine(rec.kind, rt_.operatorName(reinterpret_cast<uint64_t>(rec.op)), debug::recordKey(rec));
  }
  std::string numbered(const Trace& t, uint64_t d) const { return "#" + std::to_string(d) + " " + line(*t.at(d)); }

  std::string text(const Trace& t, bool full) const {
    const auto& r = t.r();
    std::string out = "thread tid " + std::to_string(r.tid) + (r.state == DSCOPE_THREAD_ALIVE ? " (alive)" : " (dead)");
    if (r.depth == 0) return out + ": no dispatch in progress\n";
    out += ": dispatch depth " + groupThousands(r.depth) + "\n";
    if (full || !t.cycle.period) return out + allRecords(t);
    const auto& c = t.cycle;
    if (!t.entry.empty()) {
      out += "  entry (before the loop):\n";
      for (uint64_t d : t.entry) out += "    " + numbered(t, d) + "\n";
      if (t.entry_hidden) out += "    ... " + groupThousands(t.entry_hidden) + " more (dispatch-trace --full)\n";
    }
    out += "  loop: a cycle of " + std::to_string(c.period) + (c.period == 1 ? " dispatch" : " dispatches") +
           (c.start_in_gap ? " from depth <= " : " from depth ") + groupThousands(c.start_depth) + " to the top" +
           (c.start_in_gap ? " (where it began was overwritten)" : "") + ":\n";
    const std::string repeated = " ... repeated " + groupThousands(c.repeats) + " times";
    if (c.period == 1) {
      out += "    " + line(*t.at(phaseRecord(t, 0))) + repeated + "\n";
    } else {
      for (uint64_t i = 0; i < c.period; ++i) out += "    " + line(*t.at(phaseRecord(t, i))) + "\n";
      out += "   " + repeated + "\n";
    }
    out += "  top of the chain:\n";
    for (uint64_t d : t.top) out += "    " + numbered(t, d) + "\n";
    out += "  diagnosis: " + t.diagnosis + "\n";
    out += "  fix: " + t.fix + "\n";
    return out;
  }

  void json(Json& j, const Trace& t, bool full) const {
    const auto& r = t.r();
    j.beginObject().field("tid", static_cast<int64_t>(r.tid));
    j.field("state", r.state == DSCOPE_THREAD_ALIVE ? "alive" : "dead").field("depth", r.depth);
    j.key("cycle");
    if (t.cycle.period) {
      j.beginObject().field("period", t.cycle.period).field("start_depth", t.cycle.start_depth);
      j.field("repeats", t.cycle.repeats).field("start_in_gap", t.cycle.start_in_gap).key("records").beginArray();
      for (uint64_t i = 0; i < t.cycle.period; ++i) recordJson(j, t, phaseRecord(t, i));
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
      for (uint64_t d = 0; d < r.depth; d = nextAvailable(t, d + 1)) {
        if (t.at(d)) all.push_back(d);
      }
      depths("records", all);
    } else {
      depths("entry", t.entry);
      depths("top", t.top);
    }
    j.key("diagnosis");
    if (t.diagnosis.empty()) j.null();
    else j.value(t.diagnosis);
    j.key("fix");
    if (t.fix.empty()) j.null();
    else j.value(t.fix);
    j.endObject();
  }

 private:
  // The depth of the record of phase i (0 = the first record of a repetition) in the top repetition.
  static uint64_t phaseRecord(const Trace& t, uint64_t i) {
    // The last whole repetition: always in the ring (findDispatchCycle compared it).
    return t.cycle.start_depth + (t.cycle.repeats - 1) * t.cycle.period + i;
  }

  // The next depth >= d that the block still holds (depth when none): skips the overwritten middle.
  static uint64_t nextAvailable(const Trace& t, uint64_t d) {
    const uint64_t depth = t.r().depth;
    if (d < depth && !t.at(d)) return depth > DSCOPE_RECORDS_RING ? depth - DSCOPE_RECORDS_RING : depth;
    return d;
  }

  std::string allRecords(const Trace& t) const {
    std::string out;
    const uint64_t depth = t.r().depth;
    for (uint64_t d = 0; d < depth;) {
      if (t.at(d)) {
        out += "    " + numbered(t, d) + (d + 1 == depth ? "  (innermost)" : "") + "\n";
        ++d;
        continue;
      }
      uint64_t next = nextAvailable(t, d);
      out += "    ... depths " + groupThousands(d) + " to " + groupThousands(next - 1) + " overwritten (the block keeps the first " +
             std::to_string(DSCOPE_RECORDS_FIRST) + " and the last " + std::to_string(DSCOPE_RECORDS_RING) + " records)\n";
      d = next;
    }
    return out;
  }

  void recordJson(Json& j, const Trace& t, uint64_t d) const {
    const auto& rec = *t.at(d);
    j.beginObject().field("depth", d).field("kind", format::recordKindName(rec.kind));
    j.field("op", rt_.operatorName(reinterpret_cast<uint64_t>(rec.op))).field("key", toString(debug::recordKey(rec)));
    j.field("keyset", hex(rec.keyset)).field("slot", static_cast<uint32_t>(rec.slot)).endObject();
  }

  // The kernel of the last record of a repetition is the one that dispatches the first record
  // of the next repetition: it re-enters the dispatcher.
  void diagnose(Trace& t) const {
    const dscope_dispatch_record& reentered = *t.at(phaseRecord(t, 0));
    const dscope_dispatch_record& caller = *t.at(phaseRecord(t, t.cycle.period - 1));
    const std::string caller_op = rt_.operatorName(reinterpret_cast<uint64_t>(caller.op));
    const std::string callee_op = rt_.operatorName(reinterpret_cast<uint64_t>(reentered.op));
    const std::string caller_key = toString(debug::recordKey(caller));
    const std::string callee_key = toString(debug::recordKey(reentered));
    RemoteKernel k = rt_.kernel(reinterpret_cast<uint64_t>(caller.kernel));
    const std::string who = caller_op + "'s " + caller_key + " kernel (" + rt_.kernelSymbol(k) + ", " + k.debug + ")";
    if (reentered.kind == DSCOPE_RECORD_CALL && isAutogradKey(debug::recordKey(reentered)) && caller.op == reentered.op) {
      t.diagnosis = who + " calls " + callee_op + " again with op.call(...): call() recomputes the key set from the "
                    "arguments and the thread-local sets, which still select " + callee_key +
                    ", so the kernel re-enters itself until the stack overflows";
      t.fix = "in that kernel, continue below autograd: op.redispatch(ks & after_autograd_keyset, ...) with the "
              "kernel's DispatchKeySet argument, or make the call under an AutoDispatchBelowAutograd guard";
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

std::string runDispatchTrace(Session& s, const std::vector<std::string>& words) {
  ParsedArgs args = parseArgs(words, {{"--all", "--full", "--json"}, {"--thread"}}, kUsage);
  if (!args.positional.empty()) usageError("unexpected argument '" + args.positional.front() + "'", kUsage);
  if (args.has("--all") && args.value("--thread")) usageError("--thread or --all, not both", kUsage);
  const RuntimeView& rt = s.runtime();
  if (!rt.descriptor().records_enabled)
    fail("this runtime was built with DSCOPE_DISPATCH_RECORDS=OFF: there are no dispatch records to show");
  const auto blocks = rt.threadBlocks();
  std::vector<const ThreadBlock*> selected;
  if (args.has("--all")) {
    for (const auto& b : blocks) selected.push_back(&b);
    if (selected.empty()) fail("no thread has dispatched yet (no dispatch records)");
  } else {
    selected.push_back(&selectThread(s.mem(), blocks, args.value("--thread")));
  }
  TracePrinter printer(rt);
  const bool full = args.has("--full");
  if (args.has("--json")) {
    Json j;
    j.beginObject().key("threads").beginArray();
    for (const auto* b : selected) printer.json(j, printer.analyze(*b), full);
    return j.endArray().endObject().str();
  }
  std::string out;
  for (const auto* b : selected) out += (out.empty() ? "" : "\n") + printer.text(printer.analyze(*b), full);
  return out;
}

}  // namespace dscope::inspect
