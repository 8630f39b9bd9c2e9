// dispatch-break-parse ARGS... (the user's dispatch-break command line)
// dispatch-break-arm NAME [--key K] | dispatch-break-arm --clear
// dispatch-break-describe OP_PTR KEYSET KEY
//
// The front ends own the breakpoints (their numbers, and the one on dscope_debug_break_hook);
// these read the user's command line for them, write the runtime's break filter
// (docs/DEBUG-INTERFACE.md §6) and turn the hook's arguments into one line.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "CommandLine.h"
#include "Commands.h"
#include "Json.h"

namespace dscope::inspect {

const char* const kDispatchBreakUsage = "dispatch-break OP [--key K] | dispatch-break --list | dispatch-break --delete N";

namespace {

const char* kArmUsage = "dispatch-break-arm OP [--key K] [--json] | dispatch-break-arm --clear [--json]";
const char* kDescribeUsage = "dispatch-break-describe OP_PTR KEYSET KEY [--json]";

constexpr uint64_t kBreakCountOffset = offsetof(struct dscope_debug_descriptor_t, break_count);
constexpr uint64_t kBreakBloomOffset = offsetof(struct dscope_debug_descriptor_t, break_bloom);
constexpr uint64_t kBreaksOffset = offsetof(struct dscope_debug_descriptor_t, breaks);

std::string keyLabel(uint16_t key) {
  return key == DSCOPE_BREAK_ANY_KEY ? "any key" : toString(static_cast<DispatchKey>(key));
}

// Whether any operator is named `name` in full or as its base name (what the filter matches).
bool operatorExists(const RuntimeView& rt, const std::string& name) {
  if (!rt.descriptor().dispatcher) return false;
  for (const auto& op : rt.operators())
    if (namesOperator(op.name, name)) return true;
  return false;
}

// The filter entry's key for an operator name and an optional --key K (DSCOPE_BREAK_ANY_KEY
// without one); a malformed name or a key no dispatch can select is the user's mistake.
uint16_t checkedBreak(const std::string& name, const std::optional<std::string>& key_name) {
  checkOperatorName(name);
  if (!key_name) return DSCOPE_BREAK_ANY_KEY;
  const DispatchKey key = parseKeyOrFail(*key_name);
  if (isAliasDispatchKey(key))
    fail(*key_name + " is an alias key; a dispatch always goes to a runtime key (e.g. CPU, AutogradCPU)");
  return static_cast<uint16_t>(key);
}

// A typo (aten::mmm) arms an entry that never matches: say so (it may be registered later).
std::string unregisteredNote(const std::string& name) {
  return "dispatch-break: no operator named " + name + " is registered yet; the entry matches once one is\n";
}

std::string clearBreaks(Session& s, bool json) {
  const RuntimeView& rt = s.runtime();
  const uint32_t count = rt.descriptor().break_count;
  // The bloom word first: once it is 0 no dispatch looks at the entries.
  const uint64_t no_bloom = 0;
  rt.mem().write(rt.descriptorAddress() + kBreakBloomOffset, &no_bloom, sizeof no_bloom, "the break filter bloom word");
  const uint32_t zero = 0;
  rt.mem().write(rt.descriptorAddress() + kBreakCountOffset, &zero, sizeof zero, "the break filter count");
  if (json) return Json().beginObject().field("cleared", count).endObject().str();
  return "dispatch-break: cleared " + std::to_string(count) + (count == 1 ? " filter entry\n" : " filter entries\n");
}

}  // namespace

// One parser and one set of messages for both front ends, which add `--kept N` (the breakpoints
// they keep). The answer's first line is "list", "delete N", or for a new breakpoint (name and key
// checked: no spaces, KEY as PyTorch spells it) "add OP [KEY]" when the runtime is there to arm,
// "pend OP [KEY]" when it is not loaded yet (no process, or one stopped before its libraries
// load): the front end keeps it pending (or, in a core file, fails to arm it). After "add", the
// note on an operator that is not registered (yet).
std::string runBreakParse(Session& s, const std::vector<std::string>& words) {
  ParsedArgs args = parseArgs(words, {{"--list"}, {"--key", "--delete", "--kept"}}, kDispatchBreakUsage);
  const uint64_t kept = args.value("--kept") ? numberOption("--kept", *args.value("--kept"), "a count") : 0;
  args.values.erase("--kept");
  if (args.has("--list")) {
    if (!args.positional.empty() || !args.values.empty()) usageError("--list takes nothing else", kDispatchBreakUsage);
    return "list\n";
  }
  if (auto number = args.value("--delete")) {
    if (!args.positional.empty() || args.value("--key")) usageError("--delete takes only a breakpoint number", kDispatchBreakUsage);
    return "delete " + std::to_string(numberOption("--delete", *number, "a breakpoint number", INT32_MAX)) + "\n";
  }
  if (args.positional.size() != 1)
    usageError(args.positional.empty() ? "dispatch-break needs an operator name" : "dispatch-break takes one operator name",
               kDispatchBreakUsage);
  const std::string& name = args.positional.front();
  const uint16_t key = checkedBreak(name, args.value("--key"));
  if (kept >= DSCOPE_MAX_BREAKS)
    fail(std::to_string(kept) + " dispatch breakpoints are set, as many as the runtime's break filter holds: delete one "
         "first (dispatch-break --delete N)");
  std::string out = " " + name;
  if (key != DSCOPE_BREAK_ANY_KEY) out += std::string(" ") + toString(static_cast<DispatchKey>(key));
  out += "\n";
  try {
    if (!operatorExists(s.runtime(), name)) out += unregisteredNote(name);
  } catch (const RuntimeNotLoaded&) {
    return "pend" + out;
  } catch (const InspectError&) {  // a runtime that cannot be read: arming says why
  }
  return "add" + out;
}

std::string runBreakArm(Session& s, const std::vector<std::string>& words) {
  ParsedArgs args = parseArgs(words, {{"--clear", "--json"}, {"--key"}}, kArmUsage);
  const bool json = args.has("--json");
  if (args.has("--clear")) {
    if (!args.positional.empty() || args.value("--key")) usageError("--clear takes nothing else", kArmUsage);
    return clearBreaks(s, json);
  }
  if (args.positional.size() != 1) usageError("dispatch-break-arm needs one operator name", kArmUsage);
  const std::string name = args.positional.front();
  const uint16_t key = checkedBreak(name, args.value("--key"));
  const RuntimeView& rt = s.runtime();
  const auto& d = rt.descriptor();
  if (!rt.mem().canWrite()) fail("cannot arm a dispatch breakpoint: the target is not writable (a core file?)");
  if (d.break_count > DSCOPE_MAX_BREAKS)
    fail("the break filter count is " + std::to_string(d.break_count) + " (corrupt memory?); dispatch-break-arm --clear resets it");
  const dscope_break_entry entry{dscope_fnv1a64(name.c_str()), key, {}};
  // Two breakpoints on the same operator and key share one entry (the front ends re-arm their
  // whole list, duplicates included).
  for (uint32_t i = 0; i < d.break_count; ++i)
    if (d.breaks[i].name_hash == entry.name_hash && d.breaks[i].key == key) {
      if (json) return Json().beginObject().field("armed", name).field("key", keyLabel(key)).field("entry", i + 1).endObject().str();
      return "dispatch-break: " + name + " at " + keyLabel(key) + " is armed already (filter entry " + std::to_string(i + 1) + ")\n";
    }
  if (d.break_count == DSCOPE_MAX_BREAKS)
    fail("the dispatch break filter is full (" + std::to_string(DSCOPE_MAX_BREAKS) + " entries); dispatch-break-arm --clear first");
  // The entry, the count, then the bloom word that arms it: the runtime never sees a half-written
  // entry. The bloom word is rebuilt from every entry in use, so it always covers exactly them.
  const uint32_t index = d.break_count, count = index + 1;
  rt.mem().write(rt.descriptorAddress() + kBreaksOffset + index * sizeof(dscope_break_entry), &entry, sizeof entry,
                 "a break filter entry");
  rt.mem().write(rt.descriptorAddress() + kBreakCountOffset, &count, sizeof count, "the break filter count");
  uint64_t bloom = dscope_break_bloom_bit(entry.name_hash);
  for (uint32_t i = 0; i < index; ++i) bloom |= dscope_break_bloom_bit(d.breaks[i].name_hash);
  rt.mem().write(rt.descriptorAddress() + kBreakBloomOffset, &bloom, sizeof bloom, "the break filter bloom word");
  const bool known = operatorExists(rt, name);
  if (json) {
    return Json().beginObject().field("armed", name).field("key", keyLabel(key)).field("entry", count)
        .field("capacity", DSCOPE_MAX_BREAKS).field("name_hash", hex(entry.name_hash)).field("operator_registered", known)
        .endObject().str();
  }
  std::string out = "dispatch-break: armed " + name + " at " + keyLabel(key) + " (filter entry " + std::to_string(count) +
                    " of " + std::to_string(DSCOPE_MAX_BREAKS) + "; stops in dscope_debug_break_hook)\n";
  if (!known) out += unregisteredNote(name);
  return out;
}

std::string runBreakDescribe(Session& s, const std::vector<std::string>& words) {
  ParsedArgs args = parseArgs(words, {{"--json"}, {}}, kDescribeUsage);
  if (args.positional.size() != 3) usageError("dispatch-break-describe needs OP_PTR KEYSET KEY", kDescribeUsage);
  const uint64_t op = numberOrExpression(s.mem(), args.positional[0]);
  const auto ks = DispatchKeySet::from_raw_repr(numberOrExpression(s.mem(), args.positional[1]));
  const uint64_t key = numberOrExpression(s.mem(), args.positional[2]);
  if (key >= num_all_dispatch_keys) fail("dispatch key value " + std::to_string(key) + " is out of range");
  const std::string name = s.runtime().operatorName(op);
  const char* key_name = toString(static_cast<DispatchKey>(key));
  if (args.has("--json")) {
    return Json().beginObject().field("op", name).field("key", key_name).field("keyset", hex(ks.raw_repr()))
        .field("keyset_repr", toString(ks)).endObject().str();
  }
  return "dispatch-break: " + name + " at " + key_name + " (keyset " + toString(ks) + ")\n";
}

}  // namespace dscope::inspect
