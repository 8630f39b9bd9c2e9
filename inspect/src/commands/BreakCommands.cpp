// dispatch-break: the table of breakpoints (BreakTable.h), the runtime's break filter it is written
// into (docs/DEBUG-INTERFACE.md §6), and the line a stop prints. Every message of the command in
// both debuggers is here.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "commands/BreakTable.h"
#include "commands/CommandLine.h"
#include "commands/Json.h"
#include "target/TargetImage.h"
#include "source/c10/TorchView.h"
#include "dscope/Error.h"
#include "dscope/FunctionSchema.h"
#include "dscope/format/DispatchRecord.h"

namespace dscope::inspect {

const char* const kDispatchBreakUsage =
    "dispatch-break OP [--key K] | dispatch-break --list | dispatch-break --delete N | dispatch-break --why [--json]";

namespace {

// Whether any operator is named `name` in full or as its base name (what the filter matches).
bool operatorExists(const std::vector<Operator>& ops, const std::string& name) {
  return std::any_of(ops.begin(), ops.end(), [&](const Operator& op) { return namesOperator(op.name, name); });
}

// Our runtime's key for an optional --key K.
DispatchKey runtimeKey(const std::string& name) { return static_cast<DispatchKey>(checkedBreakKey(dscopeKeyTable(), name)); }

std::string described(const DispatchBreakpoint& b) { return b.op + (b.key.empty() ? "" : " at " + b.key); }

// The filter's entries for a list of breakpoints: one per operator and key (two breakpoints on
// the same operator and key share one).
std::vector<dscope_break_entry> filterEntries(const std::vector<DispatchBreakpoint>& breaks) {
  std::vector<dscope_break_entry> entries;
  for (const auto& b : breaks) {
    const uint16_t key = b.key.empty() ? DSCOPE_BREAK_ANY_KEY : static_cast<uint16_t>(runtimeKey(b.key));
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
  const uint64_t key = r.args[2] & 0xFFFF;
  if (key >= num_all_dispatch_keys) fail("dispatch key value " + std::to_string(key) + " is out of range");
  const auto ks = DispatchKeySet::from_raw_repr(r.args[1]);
  DispatchExplanation e;
  e.op = rt.operatorName(r.args[0]);
  e.key = toString(static_cast<DispatchKey>(key));
  e.dispatched = toString(ks);
  e.slot = ks.getDispatchTableIndexForDispatchKeySet();
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
    DispatchKeySet all;
    for (uint32_t i = 0; i < d.argument_count; ++i) {
      const auto& a = d.arguments[i];
      const auto arg_ks = DispatchKeySet::from_raw_repr(a.keyset);
      all = all | arg_ks;
      const std::string name = a.from_end < names.size() ? names[names.size() - 1 - a.from_end]
                                                         : "argument " + std::to_string(a.from_end) + " from the end";
      e.arguments.push_back({name, a.tensors == 0 ? std::string("None") : toString(arg_ks)});
    }
    const auto included = DispatchKeySet::from_raw_repr(d.tls_included), excluded = DispatchKeySet::from_raw_repr(d.tls_excluded);
    e.included = toString(included), e.excluded = toString(excluded);
    const DispatchKeySet effective = (all | included) - excluded;
    const DispatchKeySet computed = effective & DispatchKeySet::from_raw_repr(d.non_fallthrough);
    for (DispatchKey k : effective)
      if (!computed.has(k)) e.fallthrough.push_back(toString(k));
    e.computed = toString(computed);
  } else {
    e.arguments_note = "the runtime did not describe the dispatch";
  }
  try {  // the stop is told even when its kernel cannot be read
    const RemoteTableEntry entry = rt.tableEntry(r.args[0], static_cast<DispatchKey>(key));
    if (!rt.isMissing(entry.kernel)) {
      e.kernel = rt.kernelSymbol(entry.kernel);
      e.why = whyText(entry.source, e.key, toString(entry.kernel.key), e.op);
      e.registered = entry.kernel.debug;
    }
  } catch (const InspectError& error) {
    e.kernel = std::string("(cannot be read: ") + (error.what() + std::strlen("dscope: ")) + ")";
  }
  return e;
}

void row(std::string& out, const std::string& label, const std::string& text) {
  out += "  " + label + std::string(label.size() < 16 ? 16 - label.size() : 1, ' ') + text + "\n";
}

}  // namespace

std::string explanationText(const DispatchExplanation& e) {
  std::string out = "dispatch-break: " + e.op + " at " + e.key + " (keyset " + e.dispatched + ")\n";
  for (const auto& a : e.arguments) row(out, "argument " + a.name, a.keys);
  if (!e.arguments_note.empty()) row(out, "arguments", e.arguments_note);
  if (e.included) row(out, "TLS included", *e.included);
  if (e.excluded) row(out, "TLS excluded", *e.excluded);
  if (!e.fallthrough.empty()) {
    std::string keys;
    for (const auto& k : e.fallthrough) keys += (keys.empty() ? "" : ", ") + k;
    row(out, "fallthrough", keys + " (the operator falls through there: masked out)");
  }
  if (!e.computed.empty()) row(out, "computed", e.computed + " (arguments | TLS included - TLS excluded, fallthroughs masked)");
  std::string how;  // what made the set: the runtime says (kind); else the sets tell a redispatch
  if (e.kind == "call" || e.kind == "callBoxed") how = "a call: the dispatcher computed it";
  else if (e.kind == "redispatch" || e.kind == "redispatchBoxed") how = "a redispatch: the kernel that called it passed this set";
  else if (!e.computed.empty())
    how = e.computed == e.dispatched ? "the computed set" : "not the computed set: a kernel redispatched with this one";
  row(out, "dispatched", e.dispatched + (how.empty() ? "" : " (" + how + ")"));
  row(out, "slot", std::to_string(e.slot) + " (" + e.key + ", the set's highest key)");
  if (!e.kernel.empty()) row(out, "kernel", e.kernel);
  if (!e.why.empty()) row(out, "why", e.why);
  if (!e.registered.empty()) row(out, "registered", e.registered);
  return out;
}

std::string explanationJson(const DispatchExplanation& e) {
  Json j;
  j.beginObject().field("op", e.op).field("key", e.key).field("slot", e.slot).field("keyset", e.dispatched);
  j.field("kind", e.kind);
  j.key("arguments").beginArray();
  for (const auto& a : e.arguments) j.beginObject().field("name", a.name).field("keyset", a.keys).endObject();
  j.endArray().field("arguments_note", e.arguments_note);
  j.key("tls").beginObject();
  if (e.included) j.field("included", *e.included);
  if (e.excluded) j.field("excluded", *e.excluded);
  j.endObject();
  j.key("fallthrough").beginArray();
  for (const auto& k : e.fallthrough) j.value(k);
  j.endArray().field("computed", e.computed);
  j.key("kernel").beginObject().field("name", e.kernel).field("why", e.why).field("registered", e.registered).endObject();
  j.field("tid", e.tid).field("pc", hex(e.pc));
  return j.endObject().str();
}

namespace {

// Real PyTorch's view, to place breakpoints on its kernels, or nullptr while they wait for it
// (libtorch loaded, its initializers not run yet; a profile that does not fit yet). A libtorch_cpu
// build no profile describes never gets one, whatever runs next: that is said, with the build-id
// and how to give its profile, never promised to arm.
const TorchView* torchToArm(Session& s) {
  try {
    return &s.torch();
  } catch (const RuntimeNotLoaded&) {
    return nullptr;
  } catch (const InspectError& e) {
    const auto libtorch = TorchView::findLibtorch(s.mem());
    if (libtorch && !findTorchProfile(fileBuildId(libtorch->path))) fail("cannot arm a dispatch breakpoint: " + messageOf(e));
    return nullptr;
  }
}

// The key table of the PyTorch build the process maps, before its dispatcher can be read: its
// profile's, found by build-id; nullptr when no profile describes it (yet).
const KeyTable* pendingTorchKeys(Session& s) {
  const auto libtorch = TorchView::findLibtorch(s.mem());
  if (!libtorch) return nullptr;
  static std::shared_ptr<const Profile> kept;  // the table handed out lives as long as the next lookup
  kept = findTorchProfile(fileBuildId(libtorch->path));
  return kept ? &kept->keys : nullptr;
}

}  // namespace

std::string BreakTable::command(Session& s, const std::vector<std::string>& words) {
  ParsedArgs args = parseArgs(words, {{"--list", "--why", "--json"}, {"--key", "--delete"}}, kDispatchBreakUsage);
  if (args.has("--why")) {
    if (!args.positional.empty() || !args.values.empty() || args.has("--list")) usageError("--why takes only --json", kDispatchBreakUsage);
    return why(s, args.has("--json"));
  }
  if (args.has("--json")) usageError("--json goes with --why", kDispatchBreakUsage);
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
  return add(s, op, args.value("--key").value_or(""));
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
  kernel_sites_ = {};  // until locations() runs again
  try {
    arm(s);  // the rest, without the deleted one; nothing to say when no runtime is there
  } catch (const InspectError&) {
  }
  return "";
}

std::string BreakTable::add(Session& s, const std::string& op, const std::string& key) {
  if (breaks_.size() >= DSCOPE_MAX_BREAKS)
    fail(std::to_string(breaks_.size()) + " dispatch breakpoints are set, as many as the runtime's break filter holds: "
         "delete one first (dispatch-break --delete N)");
  const DispatchBreakpoint b{next_, op, key};
  // Kept, with the line that says so (a typo such as aten::mmm is kept too: it may be registered later).
  auto kept = [&](std::optional<bool> registered) {
    breaks_.push_back(b);
    ++next_;
    kernel_sites_ = {};  // until locations() runs again
    std::string out = "Dispatch breakpoint " + std::to_string(b.number) + ": " + described(b) + "\n";
    if (registered == false)
      out += "dispatch-break: no operator named " + op + " is registered yet; the entry matches once one is\n";
    return out;
  };
  // Kept until the runtime can be read, its key checked against the key table it will have: ours,
  // or the table of the PyTorch build the process maps (its profile's; unchecked without one,
  // until the breakpoint arms).
  auto pending = [&](const KeyTable* keys) {
    if (!key.empty() && keys) checkedBreakKey(*keys, key);
    breaks_.push_back(b);
    ++next_;
    kernel_sites_ = {};  // until locations() runs again
    return "Dispatch breakpoint " + std::to_string(b.number) + " (" + op + ") pending: it arms when the runtime is loaded.\n";
  };
  if (s.readsTorch(std::nullopt)) {
    // Real PyTorch: breakpoints on its kernels, which the front end places (locations()).
    if (s.mem().isCore()) fail("cannot arm a dispatch breakpoint: the target is not writable (a core file?)");
    const TorchView* tv = torchToArm(s);
    if (!tv) return pending(pendingTorchKeys(s));
    if (!key.empty()) checkedBreakKey(tv->keys(), key);
    return kept(operatorExists(tv->operators(), op));
  }
  std::optional<bool> registered;  // unknown while no runtime can be read
  try {
    const RuntimeView& rt = s.runtime();
    registered = rt.descriptor().dispatcher && operatorExists(rt.operators(), op);
  } catch (const RuntimeNotLoaded&) {
    // Not started yet, or stopped before the runtime loads: arms when the front end says the
    // runtime is loaded. A core never runs on: it says why nothing can be armed.
    if (!s.mem().isCore()) {
      armed_instance_ = 0;  // a process's filter no longer holds the whole table
      return pending(&dscopeKeyTable());
    }
  } catch (const InspectError&) {  // a runtime that cannot be read: arming says why
  }
  if (!key.empty()) runtimeKey(key);
  std::string out = kept(registered);
  try {
    arm(s);
  } catch (...) {
    breaks_.pop_back();  // a core file, or a runtime that cannot take it: nothing was armed
    --next_;
    throw;
  }
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

std::vector<uint64_t> BreakTable::locations(Session& s) {
  kernel_sites_ = {};
  registrations_ = {};
  if (breaks_.empty() || s.mem().isCore() || !s.readsTorch(std::nullopt)) return {};
  const TorchView* tv = torchToArm(s);
  if (!tv) return {};  // not initialized yet: pending
  kernel_sites_ = torchKernelSites(*tv, breaks_);
  std::vector<uint64_t> out = kernel_sites_.locations();
  registrations_ = torchRegistrations(*tv);
  for (uint64_t a : {registrations_.impl, registrations_.fallback})
    if (a) out.push_back(a);
  return out;
}

dscope_hit_action BreakTable::hit(Session& s, const dscope_stop_registers& r, std::string* text) {
  // The stops that are not ours first, and from the registers alone where they can tell: a kernel
  // breakpoint is hit thousands of times, and the first symbol lookup or profile read of a stop
  // costs a walk of the process's mappings (in LLDB a packet per mapping).
  if (r.pc && (r.pc == registrations_.impl || r.pc == registrations_.fallback))
    return torchRegistrationConcerns(s.mem(), registrations_, breaks_, r) ? DSCOPE_HIT_SYNC_ON_RETURN : DSCOPE_HIT_CONTINUE;
  if (torchCallRuledOut(kernel_sites_, r)) return DSCOPE_HIT_CONTINUE;
  const auto hook = s.mem().findSymbol("dscope_debug_break_hook");
  if (hook && *hook == r.pc) {
    *text = stopped(ourExplanation(s, r));
    return DSCOPE_HIT_STOP;
  }
  if (!s.readsTorch(std::nullopt)) return DSCOPE_HIT_CONTINUE;
  auto e = torchBreakHit(s.torch(), breaks_, r);
  if (!e) return DSCOPE_HIT_CONTINUE;
  *text = stopped(std::move(*e));
  return DSCOPE_HIT_STOP;
}

std::optional<DispatchExplanation>& lastBreakStop() {
  static std::optional<DispatchExplanation> stop;
  return stop;
}

std::string BreakTable::stopped(DispatchExplanation e) {
  lastBreakStop() = e;
  last_ = std::move(e);
  return explanationText(*last_);
}

std::string BreakTable::why(Session& s, bool json) const {
  if (!last_) fail("no dispatch-break stop to explain");
  // Only while the thread is still at that stop: its innermost frame is where it stopped.
  const dscope_target* t = s.mem().target();
  uint64_t pc = 0, sp = 0;
  if (!t || !t->stack_frame || t->stack_frame(t->ctx, last_->tid, 0, &pc, &sp) != 0 || pc != last_->pc || sp != last_->sp)
    fail("thread " + std::to_string(last_->tid) + " has moved on from the last dispatch-break stop (" + last_->op + " at " +
         last_->key + "); --why explains a stop while the thread is still there");
  return json ? explanationJson(*last_) : explanationText(*last_);
}

}  // namespace dscope::inspect
