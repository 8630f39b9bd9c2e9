// keyset EXPR|RAW [--verbose] [--json] [--profile FILE]
// keyset --tls [--thread N] [--explain EXPR] [--json]
#include <string>

#include "commands/CommandLine.h"
#include "commands/Commands.h"
#include "commands/Json.h"
#include "target/ThreadLocal.h"

namespace dscope::inspect {

const char* const kKeysetUsage =
    "keyset EXPR|RAW [--verbose] [--json] [--profile FILE] | keyset --tls [--thread N] [--explain EXPR] [--json]";

namespace {

constexpr int kSentinelBit = 63;  // DispatchKeySet(EndOfFunctionalityKeys): a bit, but no table slot

bool hasSentinelBit(DispatchKeySet ks) { return (ks.raw_repr() >> kSentinelBit) & 1; }

// "bit 16: Dense" for a functionality bit (bit 15 + key value), "bit 0: CPUBit" for a backend bit.
std::string bitName(int bit) {
  if (bit < num_backends) return toString(static_cast<BackendComponent>(bit + 1));
  if (bit == kSentinelBit) return "EndOfFunctionalityKeys (a sentinel, not a real key)";
  return toString(static_cast<DispatchKey>(bit - num_backends + 1));
}

std::string keysetText(DispatchKeySet ks, bool verbose) {
  std::string out = toString(ks) + "\n";
  out += "raw: " + hex(ks.raw_repr()) + "\n";
  out += "highest key: " + keyWithSlot(ks) + "\n";
  if (!verbose) return out;
  std::string functionality, backend;
  for (int bit = 0; bit < 64; ++bit) {
    if (!((ks.raw_repr() >> bit) & 1)) continue;
    std::string line = "  bit " + std::to_string(bit) + ": " + bitName(bit) + "\n";
    (bit < num_backends ? backend : functionality) += line;
  }
  out += "functionality bits:" + std::string(functionality.empty() ? " none\n" : "\n" + functionality);
  out += "backend bits:" + std::string(backend.empty() ? " none\n" : "\n" + backend);
  return out;
}

void keysetJson(Json& j, DispatchKeySet ks) {
  j.field("repr", toString(ks)).field("raw", hex(ks.raw_repr()));
  j.key("keys").beginArray();
  for (DispatchKey k : ks) j.value(toString(k));
  j.endArray();
  j.field("highest_key", toString(ks.highestPriorityTypeId()));
  j.key("slot");
  if (hasSentinelBit(ks)) j.null();
  else j.value(ks.getDispatchTableIndexForDispatchKeySet());
  j.key("functionality_bits").beginArray();
  for (int bit = num_backends; bit < 64; ++bit)
    if ((ks.raw_repr() >> bit) & 1) j.beginObject().field("bit", bit).field("name", bitName(bit)).endObject();
  j.endArray();
  j.key("backend_bits").beginArray();
  for (int bit = 0; bit < num_backends; ++bit)
    if ((ks.raw_repr() >> bit) & 1) j.beginObject().field("bit", bit).field("name", bitName(bit)).endObject();
  j.endArray();
}

// "AutogradCPU", or the raw bits when the difference names no runtime key.
std::string differenceText(uint64_t raw) {
  std::string names = keyNames(DispatchKeySet(DispatchKeySet::RAW, raw));
  return names.empty() ? "bits " + hex(raw) + " (no complete runtime key)" : names;
}

// Where no dispatcher is read (no process, or a process that holds none), a key set is decoded with
// DispatchScope's own key table, PyTorch 2.11's; another build's bits mean other keys, so the
// answer says which table it is ("" where the process's own runtime is read).
std::string ownTableNote(const Session& s) {
  if (s.mem().findSymbol("dscope_debug_descriptor")) return "";
  return std::string("DispatchScope's own (PyTorch 2.11's keys): ") +
         (s.mem().selectedTid() ? "this process holds no dispatcher" : "no process to read") +
         "; `keyset RAW --profile FILE` decodes with the table of the PyTorch build a layout profile describes";
}

std::string tlsText(const ThreadBlock& b, DispatchKeySet included, DispatchKeySet excluded,
                    const std::optional<DispatchKeySet>& explain) {
  std::string out = "thread tid " + b.shown_tid + ":\n";
  out += "  included: " + keySetWithRaw(included) + "\n";
  out += "  excluded: " + keySetWithRaw(excluded) + "\n";
  const uint64_t inc = included.raw_repr(), exc = excluded.raw_repr();
  const uint64_t def_inc = default_included_set.raw_repr(), def_exc = default_excluded_set.raw_repr();
  // Backend bits in the exclude set change nothing (a - b keeps backend bits), but guards leave
  // them behind when they restore (as in c10): report them apart, as harmless.
  const uint64_t exc_extra = exc & ~def_exc;
  const uint64_t exc_extra_functionality = exc_extra & ~full_backend_mask;
  if (inc == def_inc && exc_extra == 0 && (def_exc & ~exc) == 0)
    out += "  (both are the defaults: nothing included or excluded by hand)\n";
  if (uint64_t extra = inc & ~def_inc) out += "  included beyond the default: " + differenceText(extra) + "\n";
  if (uint64_t gone = def_inc & ~inc) out += "  default includes missing: " + differenceText(gone) + "\n";
  if (exc_extra_functionality) {
    out += "  excluded beyond the default: " + differenceText(exc_extra) + "\n";
    out += "  (every dispatch on this thread skips these keys until they are re-included: a manual exclude that "
           "was never restored? ExcludeDispatchKeyGuard restores on scope exit)\n";
  } else if (exc_extra) {
    std::string bits;
    for (int bit = 0; bit < num_backends; ++bit)
      if ((exc_extra >> bit) & 1) bits += (bits.empty() ? "" : ", ") + std::string(bitName(bit));
    out += "  excluded also holds backend bits: " + bits +
           " (harmless: excluding never removes backend bits; guards leave them behind, as in c10)\n";
  }
  if (uint64_t gone = def_exc & ~exc) out += "  not excluded although excluded by default: " + differenceText(gone) + "\n";
  if (explain) {
    DispatchKeySet with_included = *explain | included;
    DispatchKeySet effective = with_included - excluded;
    out += "explain " + keySetWithRaw(*explain) + " on this thread:\n";
    out += "  ks              = " + keySetWithRaw(*explain) + "\n";
    out += "  ks | included   = " + keySetWithRaw(with_included) + "\n";
    out += "  ... - excluded  = " + keySetWithRaw(effective) + "  (removes functionality bits only)\n";
    out += "  key chosen: " + keyWithSlot(effective) + "\n";
    out += "  (without the operator's fallthrough mask: keys whose kernel is a fallthrough for the operator are "
           "skipped too; `op-table OP --key K` shows one operator's entry)\n";
  }
  return out;
}

std::string runTls(Session& s, const ParsedArgs& args) {
  const RuntimeView& rt = s.runtime();
  auto blocks = rt.threadBlocks();
  const ThreadBlock& b = selectThread(rt, blocks, args.value("--thread"));
  auto [included, excluded] = rt.threadTls(b);
  std::optional<DispatchKeySet> explain;
  if (auto e = args.value("--explain")) explain = keySetArgument(s, *e);
  if (!args.has("--json")) return tlsText(b, included, excluded, explain);
  Json j;
  j.beginObject().field("tid", b.tid);
  j.field("state", b.records.state == DSCOPE_THREAD_ALIVE ? "alive" : "dead");
  j.key("included").beginObject();
  keysetJson(j, included);
  j.endObject().key("excluded").beginObject();
  keysetJson(j, excluded);
  j.endObject();
  j.field("included_beyond_default", hex(included.raw_repr() & ~default_included_set.raw_repr()));
  j.field("default_included_missing", hex(default_included_set.raw_repr() & ~included.raw_repr()));
  j.field("excluded_beyond_default", hex(excluded.raw_repr() & ~default_excluded_set.raw_repr()));
  j.field("default_excluded_missing", hex(default_excluded_set.raw_repr() & ~excluded.raw_repr()));
  if (explain) {
    DispatchKeySet effective = (*explain | included) - excluded;
    j.key("explain").beginObject().field("keyset", hex(explain->raw_repr()));
    j.field("with_included", hex((*explain | included).raw_repr()));
    j.key("effective").beginObject();
    keysetJson(j, effective);
    j.endObject().field("fallthrough_mask_applied", false).endObject();
  }
  return j.endObject().str();
}

}  // namespace

std::string runKeyset(Session& s, const std::vector<std::string>& words) {
  ParsedArgs args =
      parseArgs(words, {{"--verbose", "--json", "--tls"}, {"--thread", "--explain", "--runtime", "--profile"}}, kKeysetUsage);
  if (auto profile = args.value("--profile")) return runProfileKeyset(s, args, *profile);
  if (args.has("--tls")) {
    if (!args.positional.empty()) usageError("--tls takes no key set (--explain EXPR explains one)", kKeysetUsage);
    if (args.has("--verbose")) usageError("--verbose is for a key set, not --tls", kKeysetUsage);
    return s.readsTorch(args.value("--runtime")) ? runTorchKeyset(s, args) : runTls(s, args);
  }
  if (args.value("--thread") || args.value("--explain")) usageError("--thread and --explain need --tls", kKeysetUsage);
  if (args.positional.empty()) usageError("keyset needs a value", kKeysetUsage);
  if (s.readsTorch(args.value("--runtime"))) return runTorchKeyset(s, args);
  std::string expr;
  for (const auto& w : args.positional) expr += (expr.empty() ? "" : " ") + w;
  const DispatchKeySet ks = keySetArgument(s, expr);
  const std::string table = ownTableNote(s);
  if (!args.has("--json")) return keysetText(ks, args.has("--verbose")) + (table.empty() ? "" : "key table: " + table + "\n");
  Json j;
  j.beginObject();
  keysetJson(j, ks);
  if (!table.empty()) j.field("key_table", table);
  return j.endObject().str();
}

// ---------------------------------------------------------------- shared helpers

std::string keySetWithRaw(DispatchKeySet ks) { return toString(ks) + " (raw " + hex(ks.raw_repr()) + ")"; }

std::string keyWithSlot(DispatchKeySet ks) {
  std::string key = toString(ks.highestPriorityTypeId());
  if (hasSentinelBit(ks)) return key + " (bit 63 is set: the EndOfFunctionalityKeys sentinel has no dispatch-table slot)";
  return key + " (dispatch-table slot " + std::to_string(ks.getDispatchTableIndexForDispatchKeySet()) + ")";
}

std::string keyNames(DispatchKeySet ks) {
  std::string out;
  for (DispatchKey k : ks) out += (out.empty() ? "" : ", ") + std::string(toString(k));
  return out;
}

std::string corruptBlockLine(const ThreadBlock& b) {
  return errorLine("the record block at " + hex(b.addr) + " is corrupt (" + b.corrupt + ")");
}

const ThreadBlock& selectThread(const RuntimeView& rt, const std::vector<ThreadBlock>& blocks,
                                const std::optional<std::string>& thread_option) {
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
    std::string why;
    for (const auto& b : blocks)
      if (!b.corrupt.empty()) why = corruptBlockLine(b).substr(8);
    if (!rt.warnings().empty()) why = rt.warnings().back();
    if (!why.empty()) fail("thread tid " + ids.shown(tid) + " has no readable dispatch records: " + why);
    fail("thread tid " + ids.shown(tid) + " has no dispatch records (it has not dispatched yet); "
         "`dispatch-trace --all` lists the threads that have");
  };
  if (thread_option) {
    const int64_t n = threadOption(*thread_option);
    auto tid = mem.threadTid(n);
    // Without a thread-number mapping (or for a number that is no debugger thread), accept an OS tid.
    if (!tid) {
      if (const auto* b = byTid(n)) return *b;
      fail("no thread " + shown(*thread_option) + " (neither a debugger thread number nor a thread id that dispatched)");
    }
    if (const auto* b = byTid(*tid)) return *b;
    noBlock(*tid);
  }
  if (int64_t tid = mem.selectedTid()) {
    if (const auto* b = byTid(tid)) return *b;
    noBlock(tid);
  }
  for (const auto& b : blocks)
    if (b.corrupt.empty() && b.records.state == DSCOPE_THREAD_ALIVE) return b;
  if (!rt.warnings().empty()) fail("no readable thread dispatch records: " + rt.warnings().back());
  fail("no thread has dispatched yet (no dispatch records)");
}

}  // namespace dscope::inspect
