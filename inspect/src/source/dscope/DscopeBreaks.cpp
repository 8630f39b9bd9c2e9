#include "source/dscope/DscopeBreaks.h"

#include <algorithm>
#include <cstring>

#include "Session.h"
#include "dscope/Error.h"
#include "dscope/FunctionSchema.h"
#include "dscope/format/DispatchRecord.h"

namespace dscope::inspect {

namespace {

// The filter's entries for a list of breakpoints: one per operator and key (two breakpoints on
// the same operator and key share one).
std::vector<dscope_break_entry> filterEntries(const KeyTable& keys, const std::vector<DispatchBreakpoint>& breaks) {
  std::vector<dscope_break_entry> entries;
  for (const auto& b : breaks) {
    const uint16_t key = b.key.empty() ? DSCOPE_BREAK_ANY_KEY : static_cast<uint16_t>(checkedBreakKey(keys, b.key));
    const dscope_break_entry entry{dscope_fnv1a64(b.op.c_str()), key, {}};
    if (std::none_of(entries.begin(), entries.end(),
                     [&](const auto& e) { return e.name_hash == entry.name_hash && e.key == entry.key; }))
      entries.push_back(entry);
  }
  return entries;
}

// A stop at dscope_debug_break_hook(op, keyset, key, dispatch): the dispatch as our runtime saw it.
DispatchExplanation ourExplanation(Session& s, const dscope_stop_registers& r) {
  const RuntimeView& rt = s.runtime();
  const KeyTable& kt = rt.keys();
  const int key = static_cast<int>(r.args[2] & 0xFFFF);
  if (!kt.byValue(key)) fail("dispatch key value " + std::to_string(key) + " is out of range");
  const uint64_t ks = r.args[1];
  DispatchExplanation e;
  e.op = rt.operatorName(r.args[0]);
  e.key = kt.name(key);
  e.dispatched = kt.keySetString(ks);
  e.slot = kt.slotOf(ks);
  e.tid = r.tid, e.pc = r.pc, e.sp = r.sp;
  if (r.args[3]) {
    const auto d = rt.mem().read<dscope_break_dispatch>(r.args[3], "the dispatch the break hook describes");
    if (d.argument_count > DSCOPE_BREAK_MAX_ARGUMENTS) fail("the dispatch the break hook describes is corrupt");
    e.kind = format::recordKindName(static_cast<uint8_t>(d.kind));
    const format::OperatorSnapshot snap = rt.snapshot(r.args[0]);
    std::vector<std::string> names;  // the schema's argument names, in order (none without a schema)
    if (snap.has_schema) {
      try {
        for (const auto& a : FunctionSchema::parse(snap.schema).arguments) names.push_back(a.name);
      } catch (const Error&) {  // a corrupt schema string: the arguments go by position
      }
    }
    uint64_t all = 0;
    for (uint32_t i = 0; i < d.argument_count; ++i) {
      const auto& a = d.arguments[i];
      all |= a.keyset;
      const std::string name = a.from_end < names.size() ? names[names.size() - 1 - a.from_end]
                                                         : "argument " + std::to_string(a.from_end) + " from the end";
      e.arguments.push_back({name, a.tensors == 0 ? std::string("None") : kt.keySetString(a.keyset)});
    }
    e.included = kt.keySetString(d.tls_included), e.excluded = kt.keySetString(d.tls_excluded);
    // c10's (ks | included) - excluded: operator- keeps the backend bits.
    const uint64_t effective = (all | d.tls_included) & (kt.backendMask() | ~d.tls_excluded);
    const uint64_t computed = effective & d.non_fallthrough;
    for (int k : kt.keysOf(effective))
      if (!KeyTable::has(computed, *kt.byValue(k))) e.fallthrough.push_back(kt.name(k));
    e.computed = kt.keySetString(computed);
  } else {
    e.arguments_note = "the runtime did not describe the dispatch";
  }
  try {  // the stop is told even when its kernel cannot be read
    const RemoteTableEntry entry = rt.tableEntry(r.args[0], key);
    if (!rt.isMissing(entry.kernel)) {
      e.kernel = rt.kernelSymbol(entry.kernel);
      e.why = whyText(entry.source, e.key, kt.name(entry.kernel.key), e.op);
      e.registered = entry.kernel.debug;
    }
  } catch (const InspectError& error) {
    e.kernel = std::string("(cannot be read: ") + (error.what() + std::strlen("dscope: ")) + ")";
  }
  return e;
}

}  // namespace

const KeyTable* DscopeBreaks::keys() const {
  try {
    return &session_.runtime().keys();
  } catch (const InspectError&) {  // not loaded yet, or unreadable: this library's keys
    return &dscopeKeyTable();
  }
}

bool DscopeBreaks::pending() const {
  try {
    session_.runtime();
    return false;
  } catch (const RuntimeNotLoaded&) {
    return !session_.mem().isCore();
  } catch (const InspectError&) {  // a runtime that cannot be read: arming says why
    return false;
  }
}

std::shared_ptr<const std::vector<Operator>> DscopeBreaks::operators() const {
  try {
    const RuntimeView& rt = session_.runtime();
    if (!rt.descriptor().dispatcher) return std::make_shared<const std::vector<Operator>>();
    return rt.operatorList();
  } catch (const InspectError&) {
    return nullptr;
  }
}

void DscopeBreaks::arm(const std::vector<DispatchBreakpoint>& breaks, uint64_t& armed) const {
  const RuntimeView& rt = session_.runtime();
  if (!rt.mem().canWrite()) fail("cannot arm a dispatch breakpoint: the target is not writable (a core file?)");
  const std::vector<dscope_break_entry> entries = filterEntries(rt.keys(), breaks);  // at most DSCOPE_MAX_BREAKS
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
    session_.mem().placeBreakHook();  // before the entries: a dispatch may stop as soon as they are armed
    rt.mem().write(base + layout.Descriptor_breaks, entries.data(), count * sizeof(dscope_break_entry), "the break filter entries");
  }
  rt.mem().write(base + layout.Descriptor_break_count, &count, sizeof count, "the break filter count");
  if (count) rt.mem().write(base + layout.Descriptor_break_bloom, &bloom, sizeof bloom, "the break filter bloom word");
  // The descriptor's instance names the process (0 until the runtime's constructors have run:
  // that one is written again).
  armed = rt.descriptor().instance;
}

void DscopeBreaks::armIfNew(const std::vector<DispatchBreakpoint>& breaks, uint64_t& armed) const {
  try {
    const uint64_t instance = session_.runtime().descriptor().instance;
    if (instance != 0 && instance == armed) return;
  } catch (const RuntimeNotLoaded&) {
    return;  // still pending (e.g. `main` of a program that loads the runtime later)
  }
  arm(breaks, armed);
}

std::optional<DispatchExplanation> DscopeBreaks::explain(const std::vector<DispatchBreakpoint>&,
                                                        const dscope_stop_registers& r) const {
  const auto hook = session_.mem().findSymbol("dscope_debug_break_hook");
  if (!hook || *hook != r.pc) return std::nullopt;
  return ourExplanation(session_, r);
}

}  // namespace dscope::inspect
