// dispatch-break: the table of breakpoints (BreakTable.h), the runtime's break filter it is written
// into (docs/DEBUG-INTERFACE.md §6), and the line a stop prints. Every message of the command in
// both debuggers is here.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "BreakTable.h"
#include "CommandLine.h"

namespace dscope::inspect {

const char* const kDispatchBreakUsage = "dispatch-break OP [--key K] | dispatch-break --list | dispatch-break --delete N";

namespace {

// Whether any operator is named `name` in full or as its base name (what the filter matches).
bool operatorExists(const RuntimeView& rt, const std::string& name) {
  if (!rt.descriptor().dispatcher) return false;
  for (const auto& op : rt.operators())
    if (namesOperator(op.name, name)) return true;
  return false;
}

// The filter entry's key for an optional --key K: DSCOPE_BREAK_ANY_KEY without one; a key no
// dispatch can select is the user's mistake.
uint16_t filterKey(const std::optional<std::string>& key_name) {
  if (!key_name) return DSCOPE_BREAK_ANY_KEY;
  const DispatchKey key = parseKeyOrFail(*key_name);
  if (isAliasDispatchKey(key))
    fail(*key_name + " is an alias key; a dispatch always goes to a runtime key (e.g. CPU, AutogradCPU)");
  return static_cast<uint16_t>(key);
}

std::string described(const DispatchBreakpoint& b) {
  return b.op + (b.key == DSCOPE_BREAK_ANY_KEY ? "" : std::string(" at ") + toString(static_cast<DispatchKey>(b.key)));
}

// The filter's entries for a list of breakpoints: one per operator and key (two breakpoints on
// the same operator and key share one).
std::vector<dscope_break_entry> filterEntries(const std::vector<DispatchBreakpoint>& breaks) {
  std::vector<dscope_break_entry> entries;
  for (const auto& b : breaks) {
    const dscope_break_entry entry{dscope_fnv1a64(b.op.c_str()), b.key, {}};
    if (std::none_of(entries.begin(), entries.end(),
                     [&](const auto& e) { return e.name_hash == entry.name_hash && e.key == entry.key; }))
      entries.push_back(entry);
  }
  return entries;
}

}  // namespace

std::string BreakTable::command(Session& s, const std::vector<std::string>& words) {
  ParsedArgs args = parseArgs(words, {{"--list"}, {"--key", "--delete"}}, kDispatchBreakUsage);
  if (args.has("--list")) {
    if (!args.positional.empty() || !args.values.empty()) usageError("--list takes nothing else", kDispatchBreakUsage);
    return list();
  }
  if (auto number = args.value("--delete")) {
    if (!args.positional.empty() || args.value("--key")) usageError("--delete takes only a breakpoint number", kDispatchBreakUsage);
    return remove(s, static_cast<int64_t>(numberOption("--delete", *number, "a breakpoint number", INT32_MAX)));
  }
  if (args.positional.size() != 1)
    usageError(args.positional.empty() ? "dispatch-break needs an operator name" : "dispatch-break takes one operator name",
               kDispatchBreakUsage);
  // Name and key are checked before a breakpoint is kept, pending or not: a bad entry would keep
  // the others from arming later, and so would one more than the runtime's filter holds.
  const std::string& op = args.positional.front();
  checkOperatorName(op);
  return add(s, op, filterKey(args.value("--key")));
}

std::string BreakTable::list() const {
  if (breaks_.empty()) return "No dispatch breakpoints.\n";
  std::string out;
  for (const auto& b : breaks_) out += std::to_string(b.number) + "  " + described(b) + "\n";
  return out;
}

std::string BreakTable::remove(Session& s, int64_t number) {
  auto it = std::find_if(breaks_.begin(), breaks_.end(), [&](const auto& b) { return b.number == number; });
  if (it == breaks_.end()) fail("no dispatch breakpoint " + std::to_string(number));
  breaks_.erase(it);
  try {
    arm(s);  // the rest, without the deleted one; nothing to say when no runtime is there
  } catch (const InspectError&) {
  }
  return "";
}

std::string BreakTable::add(Session& s, const std::string& op, uint16_t key) {
  if (breaks_.size() >= DSCOPE_MAX_BREAKS)
    fail(std::to_string(breaks_.size()) + " dispatch breakpoints are set, as many as the runtime's break filter holds: "
         "delete one first (dispatch-break --delete N)");
  const DispatchBreakpoint b{next_, op, key};
  std::optional<bool> registered;  // unknown while no runtime can be read
  try {
    registered = operatorExists(s.runtime(), op);
  } catch (const RuntimeNotLoaded&) {
    // Not started yet, or stopped before the runtime loads: arms when the front end says the
    // runtime is loaded. A core never runs on: it says why nothing can be armed.
    if (!s.mem().isCore()) {
      armed_instance_ = 0;  // a process's filter no longer holds the whole table
      breaks_.push_back(b);
      ++next_;
      return "Dispatch breakpoint " + std::to_string(b.number) + " (" + op + ") pending: it arms when the runtime is loaded.\n";
    }
  } catch (const InspectError&) {  // a runtime that cannot be read: arming says why
  }
  breaks_.push_back(b);
  try {
    arm(s);
  } catch (...) {
    breaks_.pop_back();  // a core file, or a runtime that cannot take it: nothing was armed
    throw;
  }
  ++next_;
  std::string out = "Dispatch breakpoint " + std::to_string(b.number) + ": " + described(b) + "\n";
  // A typo (aten::mmm) arms an entry that never matches: say so (it may be registered later).
  if (registered == false)
    out += "dispatch-break: no operator named " + op + " is registered yet; the entry matches once one is\n";
  return out;
}

void BreakTable::arm(Session& s) {
  const RuntimeView& rt = s.runtime();
  if (!rt.mem().canWrite()) fail("cannot arm a dispatch breakpoint: the target is not writable (a core file?)");
  const std::vector<dscope_break_entry> entries = filterEntries(breaks_);  // at most DSCOPE_MAX_BREAKS
  uint64_t bloom = 0;
  for (const auto& e : entries) bloom |= dscope_break_bloom_bit(e.name_hash);
  const uint64_t base = rt.descriptorAddress();
  const dscope_layout_profile& layout = rt.layout();
  // The bloom word first, then the entries, the count, and the bloom word that arms them: while
  // the word is 0 no dispatch looks at the entries, so none sees a half-written one.
  const uint64_t no_bloom = 0;
  rt.mem().write(base + layout.Descriptor_break_bloom, &no_bloom, sizeof no_bloom, "the break filter bloom word");
  const uint32_t count = static_cast<uint32_t>(entries.size());
  if (count) {
    s.mem().placeBreakHook();  // before the entries: a dispatch may stop as soon as they are armed
    rt.mem().write(base + layout.Descriptor_breaks, entries.data(), count * sizeof(dscope_break_entry), "the break filter entries");
  }
  rt.mem().write(base + layout.Descriptor_break_count, &count, sizeof count, "the break filter count");
  if (count) rt.mem().write(base + layout.Descriptor_break_bloom, &bloom, sizeof bloom, "the break filter bloom word");
  armed_instance_ = rt.descriptor().instance;
}

void BreakTable::armIfNew(Session& s) {
  if (breaks_.empty()) return;
  try {
    const uint64_t instance = s.runtime().descriptor().instance;
    if (instance != 0 && instance == armed_instance_) return;
  } catch (const RuntimeNotLoaded&) {
    return;  // still pending (e.g. `main` of a program that loads the runtime later)
  }
  arm(s);
}

std::string describeBreakStop(Session& s, uint64_t op, uint64_t keyset, uint64_t key) {
  if (key >= num_all_dispatch_keys) fail("dispatch key value " + std::to_string(key) + " is out of range");
  const auto ks = DispatchKeySet::from_raw_repr(keyset);
  return "dispatch-break: " + s.runtime().operatorName(op) + " at " + toString(static_cast<DispatchKey>(key)) +
         " (keyset " + toString(ks) + ")\n";
}

}  // namespace dscope::inspect
