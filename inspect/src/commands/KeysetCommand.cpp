// keyset EXPR|RAW [--verbose] [--json] [--profile FILE] [--runtime R]
// keyset --tls [--thread N] [--explain EXPR] [--json] [--runtime R]
//
// One command over the dispatcher model: every key is named by the key table of the runtime read
// (ours, or the PyTorch build's), so the same text holds for both.
#include <string>

#include "commands/CommandLine.h"
#include "commands/Commands.h"
#include "text/Json.h"
#include "source/c10/TorchProfile.h"

namespace dscope::inspect {

const char* const kKeysetUsage =
    "keyset EXPR|RAW [--verbose] [--json] [--profile FILE] | keyset --tls [--thread N] [--explain EXPR] [--json]";
const OptionSpec kKeysetOptions{
    {"--verbose", "--json", "--tls"}, {"--thread", "--explain", "--runtime", "--profile"}, {}, {"--explain"}};

namespace {

std::string keysetText(const KeyTable& kt, uint64_t raw, bool verbose) {
  std::string out = kt.keySetString(raw) + "\nraw: " + hex(raw) + "\nhighest key: " + kt.keyWithSlot(raw) + "\n";
  if (!verbose) return out;
  std::string functionality, backend;
  for (int bit = 0; bit < 64; ++bit)
    if (raw >> bit & 1)
      (bit < kt.backends() ? backend : functionality) += "  bit " + std::to_string(bit) + ": " + kt.bitName(bit) + "\n";
  out += "functionality bits:" + std::string(functionality.empty() ? " none\n" : "\n" + functionality);
  return out + "backend bits:" + std::string(backend.empty() ? " none\n" : "\n" + backend);
}

void keysetJson(Json& j, const KeyTable& kt, uint64_t raw) {
  j.field("repr", kt.keySetString(raw)).field("raw", hex(raw));
  j.key("keys").beginArray();
  for (int k : kt.keysOf(raw)) j.value(kt.name(k));
  j.endArray().field("highest_key", kt.name(kt.highestKey(raw)));
  j.key("slot");
  if (const int slot = kt.slotOf(raw); slot >= 0) j.value(slot);
  else j.null();
  for (const bool functionality : {true, false}) {
    j.key(functionality ? "functionality_bits" : "backend_bits").beginArray();
    for (int bit = 0; bit < 64; ++bit)
      if ((raw >> bit & 1) && (bit >= kt.backends()) == functionality)
        j.beginObject().field("bit", bit).field("name", kt.bitName(bit)).endObject();
    j.endArray();
  }
}

// "AutogradCPU", or the raw bits when the difference names no key.
std::string differenceText(const KeyTable& kt, uint64_t raw) {
  const std::string names = kt.keyNames(raw);
  return names.empty() ? "bits " + hex(raw) + " (no complete runtime key)" : names;
}

// "AutogradCPU, AutogradCUDA, ..." for AutogradFunctionality: its first per-backend keys.
std::string perBackendExamples(const KeyTable& kt, int functionality) {
  const uint64_t bit = kt.byValue(functionality)->bits;
  std::string out;
  int shown = 0;
  for (int k : kt.runtimeKeys()) {
    const KeyInfo& key = *kt.byValue(k);
    if (key.bits == bit || (key.bits & ~kt.backendMask()) != bit) continue;
    if (shown++ == 2) return out + ", ...";
    out += (out.empty() ? "" : ", ") + key.name;
  }
  return out;
}

std::string joinedNames(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// Whether the thread is in inference mode and that accounts for every functionality bit in `extra`
// (c10's autograd_dispatch_keyset, which InferenceMode excludes).
bool inferenceModeExcludes(const KeyTable& kt, const ThreadKeySets& t, uint64_t extra) {
  if (!t.python || !t.python->inference_mode.value.value_or(false)) return false;
  uint64_t autograd = 0;
  for (const char* name : {"AutogradOther", "AutogradFunctionality", "AutogradNestedTensor"})
    if (const KeyInfo* k = kt.byName(name)) autograd |= k->bits;
  return (extra & ~autograd) == 0;
}

// keyset --tls's lines about the Python dispatch state: what it is, then what put each key there.
std::string pythonStateText(const KeyTable& kt, const ThreadKeySets& t) {
  if (!t.python || !t.python->any()) return "";
  std::string out = "  python state: " + pythonStateSummary(*t.python) + "\n";
  for (const TlsCause& c : tlsCauses(kt, t.included, t.excluded, *t.python)) out += "  because: " + causeText(c) + "\n";
  return out;
}

std::string tlsText(const KeyTable& kt, const ThreadKeySets& t, const std::optional<uint64_t>& explain) {
  const uint64_t inc = t.included, exc = t.excluded;
  const uint64_t def_inc = kt.defaults().included, def_exc = kt.defaults().excluded;
  std::string out = "thread tid " + t.shown_tid + ":\n";
  out += "  included: " + kt.keySetWithRaw(inc) + "\n";
  out += "  excluded: " + kt.keySetWithRaw(exc) + "\n";
  // Backend bits in the exclude set change nothing (a - b keeps backend bits), but guards leave
  // them behind when they restore (as in c10): report them apart, as harmless.
  const uint64_t exc_extra = exc & ~def_exc;
  const uint64_t exc_extra_functionality = exc_extra & ~kt.backendMask();
  if (inc == def_inc && exc_extra == 0 && (def_exc & ~exc) == 0)
    out += "  (both are the defaults: nothing included or excluded by hand)\n";
  if (uint64_t extra = inc & ~def_inc) out += "  included beyond the default: " + differenceText(kt, extra) + "\n";
  if (uint64_t gone = def_inc & ~inc) out += "  default includes missing: " + differenceText(kt, gone) + "\n";
  if (exc_extra_functionality) {
    out += "  excluded beyond the default: " + differenceText(kt, exc_extra) + "\n";
    if (inferenceModeExcludes(kt, t, exc_extra_functionality))
      out += "  (inference mode excludes these while it is on: see 'because' below)\n";
    else
      out += "  (every dispatch on this thread skips these keys until they are re-included: a manual exclude that "
             "was never restored? ExcludeDispatchKeyGuard restores on scope exit)\n";
  } else if (exc_extra) {
    std::string bits;
    for (int bit = 0; bit < kt.backends(); ++bit)
      if ((exc_extra >> bit) & 1) bits += (bits.empty() ? "" : ", ") + kt.bitName(bit);
    out += "  excluded also holds backend bits: " + bits +
           " (harmless: excluding never removes backend bits; guards leave them behind, as in c10)\n";
  }
  if (uint64_t gone = def_exc & ~exc) out += "  not excluded although excluded by default: " + differenceText(kt, gone) + "\n";
  for (int functionality : kt.backendlessFunctionalities(exc))
    out += "  (" + kt.name(functionality) + " is excluded for every backend: " + perBackendExamples(kt, functionality) +
           " are skipped; c10's DispatchKeySet printing shows no key for it)\n";
  out += pythonStateText(kt, t);
  if (explain) {
    const uint64_t with_included = *explain | inc;
    const uint64_t effective = with_included & ~(exc & ~kt.backendMask());
    out += "explain " + kt.keySetWithRaw(*explain) + " on this thread:\n";
    out += "  ks              = " + kt.keySetWithRaw(*explain) + "\n";
    out += "  ks | included   = " + kt.keySetWithRaw(with_included) + "\n";
    out += "  ... - excluded  = " + kt.keySetWithRaw(effective) + "  (removes functionality bits only)\n";
    out += "  key chosen: " + kt.keyWithSlot(effective) + "\n";
    out += "  (without the operator's fallthrough mask: keys whose kernel is a fallthrough for the operator are "
           "skipped too; `op-table OP --key K` shows one operator's entry)\n";
  }
  return out;
}

std::string tlsJson(const Dispatcher& d, const ThreadKeySets& t, const std::optional<uint64_t>& explain) {
  const KeyTable& kt = d.keys();
  const uint64_t def_inc = kt.defaults().included, def_exc = kt.defaults().excluded;
  Json j;
  j.beginObject().field("tid", t.tid).field("runtime", d.runtimeId()).field("state", t.alive ? "alive" : "dead");
  j.key("included").beginObject();
  keysetJson(j, kt, t.included);
  j.endObject().key("excluded").beginObject();
  keysetJson(j, kt, t.excluded);
  j.endObject();
  j.field("included_beyond_default", hex(t.included & ~def_inc));
  j.field("default_included_missing", hex(def_inc & ~t.included));
  j.field("excluded_beyond_default", hex(t.excluded & ~def_exc));
  j.field("default_excluded_missing", hex(def_exc & ~t.excluded));
  j.key("python_state");
  if (t.python && t.python->any()) pythonStateJson(j, *t.python, tlsCauses(kt, t.included, t.excluded, *t.python));
  else j.null();
  if (explain) {
    const uint64_t with_included = *explain | t.included;
    const uint64_t effective = with_included & ~(t.excluded & ~kt.backendMask());
    j.key("explain").beginObject().field("keyset", hex(*explain)).field("with_included", hex(with_included));
    j.key("effective").beginObject();
    keysetJson(j, kt, effective);
    j.endObject().field("fallthrough_mask_applied", false).endObject();
  }
  return j.endObject().str();
}

std::string keysetAnswer(const KeyTable& kt, uint64_t raw, const ParsedArgs& args, const std::string& table) {
  if (!args.has("--json")) return keysetText(kt, raw, args.has("--verbose")) + (table.empty() ? "" : "key table: " + table + "\n");
  Json j;
  j.beginObject();
  keysetJson(j, kt, raw);
  if (!table.empty()) j.field("key_table", table);
  return j.endObject().str();
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

// keyset RAW --profile FILE: a raw key set of another build (a 1.13 tensor's raw_repr() read from a
// log), decoded with that build's own key table; only with no process, whose own table would be
// the one that applies.
std::string profileKeyset(Session& s, const ParsedArgs& args, const std::string& path) {
  if (args.has("--tls")) usageError("--profile decodes a raw key set; --tls reads a thread's sets with the process's table", kKeysetUsage);
  if (s.mem().selectedTid())
    fail("--profile decodes a key set with no process; a key set of this process is decoded with its own key table "
         "(leave --profile out)");
  const std::string expr = joined(args.positional);
  const auto raw = parseNumber(expr);
  if (!raw) fail("--profile decodes a number (a raw key set), not " + shown(expr));
  const Profile profile = readTorchProfile(path).profile;
  if (const uint64_t unknown = profile.keys.unknownBits(*raw))
    fail(hex(*raw) + " is no key set of PyTorch " + profile.version + " (bits " + hex(unknown) + " belong to no key of its table)");
  return keysetAnswer(profile.keys, *raw, args, "PyTorch " + profile.version + "'s, from the layout profile " + path);
}

// Where no dispatcher is read (no process, or a process that holds none), a key set is decoded with
// DispatchScope's own key table, PyTorch 2.11's; another build's bits mean other keys, so the
// answer says which table it is ("" where the process's own runtime is read).
std::string ownTableNote(Session& s, const Dispatcher& d) {
  if (&d.keys() != &dscopeKeyTable() || s.mem().findSymbol("dscope_debug_descriptor")) return "";
  return std::string("DispatchScope's own (PyTorch 2.11's keys): ") +
         (s.mem().selectedTid() ? "this process holds no dispatcher" : "no process to read") +
         "; `keyset RAW --profile FILE` decodes with the table of the PyTorch build a layout profile describes";
}

}  // namespace

std::string pythonStateSummary(const PythonDispatchState& s) {
  std::vector<std::string> parts;
  auto part = [&](const auto& p, const std::string& what, auto text) {
    if (!p.in_profile) parts.push_back(what + " not in this build's profile");
    else if (!p.value) parts.push_back(what + " unreadable (" + p.error + ")");
    else parts.push_back(text(*p.value));
  };
  part(s.modes, "TorchDispatchModes", [](const PythonDispatchState::Modes& m) {
    if (!m.count) return std::string("no TorchDispatchMode");
    std::vector<std::string> names;
    for (const auto& mode : m.stack) names.push_back(mode.name + (mode.infra.empty() ? "" : " [infra " + mode.infra + "]"));
    if (m.stack.size() < m.count)
      names.push_back("and " + std::to_string(m.count - m.stack.size()) + " more (the first " + std::to_string(m.stack.size()) +
                      " are named)");
    return std::to_string(m.count) + " TorchDispatchMode" + (m.count == 1 ? "" : "s") + " (bottom to top: " +
           joinedNames(names) + ")";
  });
  part(s.python_dispatcher, "the Python dispatcher", [](bool on) { return std::string("Python dispatcher ") + (on ? "on" : "off"); });
  part(s.functorch_depth, "functorch's layers", [](uint64_t d) { return "functorch depth " + std::to_string(d); });
  part(s.grad_mode, "grad mode", [](bool on) { return std::string("grad mode ") + (on ? "on" : "off"); });
  part(s.inference_mode, "inference mode", [](bool on) { return std::string("inference mode ") + (on ? "on" : "off"); });
  return joinedNames(parts);
}

std::string causeText(const TlsCause& c) {
  std::vector<std::string> effects;
  if (!c.included.empty()) effects.push_back("included " + joinedNames(c.included));
  if (!c.excluded.empty()) effects.push_back("excluded " + joinedNames(c.excluded));
  if (!c.removed.empty()) effects.push_back("took " + joinedNames(c.removed) + " out of the included set");
  std::string out = c.cause + " -> " + (effects.empty() ? "none of its keys now" : "");
  for (size_t i = 0; i < effects.size(); ++i) out += (i ? "; " : "") + effects[i];
  if (!c.missing.empty()) out += " (but " + joinedNames(c.missing) + ": a guard in a frame above changed the sets since)";
  return out;
}

void pythonStateJson(Json& j, const PythonDispatchState& s, const std::vector<TlsCause>& causes) {
  j.beginObject();
  std::vector<std::pair<const char*, std::string>> errors;
  std::vector<const char*> absent;
  auto part = [&](const auto& p, const char* name, auto write) {
    j.key(name);
    if (p.value) write(*p.value);
    else j.null();
    if (!p.in_profile) absent.push_back(name);
    else if (!p.value) errors.emplace_back(name, p.error);
  };
  part(s.modes, "dispatch_modes", [&](const PythonDispatchState::Modes& m) {
    j.beginObject().field("count", m.count).key("stack").beginArray();
    for (const auto& mode : m.stack) {
      j.beginObject().field("name", mode.name).text("infra", mode.infra).endObject();
    }
    j.endArray().field("cut", m.stack.size() < m.count).endObject();
  });
  part(s.python_dispatcher, "python_dispatcher", [&](bool on) { j.value(on); });
  part(s.functorch_depth, "functorch_depth", [&](uint64_t d) { j.value(d); });
  part(s.grad_mode, "grad_mode", [&](bool on) { j.value(on); });
  part(s.inference_mode, "inference_mode", [&](bool on) { j.value(on); });
  j.key("not_in_profile").beginArray();
  for (const char* name : absent) j.value(name);
  j.endArray().key("errors").beginObject();
  for (const auto& [name, why] : errors) j.field(name, why);
  j.endObject().key("causes").beginArray();
  for (const TlsCause& c : causes) {
    j.beginObject().field("cause", c.cause);
    for (const auto& [name, keys] : {std::pair{"included", &c.included}, std::pair{"excluded", &c.excluded},
                                     std::pair{"removed", &c.removed}, std::pair{"missing", &c.missing}}) {
      j.key(name).beginArray();
      for (const auto& k : *keys) j.value(k);
      j.endArray();
    }
    j.endObject();
  }
  j.endArray().endObject();
}

uint64_t keySetArgument(Session& s, const Dispatcher& d, const std::string& text) {
  if (text.empty()) fail("an empty value: give a number or an expression");
  if (auto n = parseNumber(text)) return d.keySetOfWord(*n);
  std::string error;
  const auto v = s.mem().evaluate(text, &error);
  if (!v && error.empty()) fail("not a number: " + shown(text) + " (a decimal, 0x-hex or 0-octal value; expressions need a debugger)");
  try {
    if (!v) fail(error);
    return d.keySetOfValue(text, *v);
  } catch (const InspectError& e) {
    fail("cannot evaluate '" + shown(text) + "': " + shown(messageOf(e)));
  }
}

std::string runKeyset(Session& s, const std::vector<std::string>& words) {
  ParsedArgs args = parseArgs(words, kKeysetOptions, kKeysetUsage);
  if (auto profile = args.value("--profile")) return profileKeyset(s, args, *profile);
  if (args.has("--tls")) {
    if (!args.positional.empty()) usageError("--tls takes no key set (--explain EXPR explains one)", kKeysetUsage);
    if (args.has("--verbose")) usageError("--verbose is for a key set, not --tls", kKeysetUsage);
    const Dispatcher& d = s.dispatcher(args.value("--runtime"));
    const ThreadKeySets t = d.threadKeySets(s.mem().chosenThread(threadOption(args.value("--thread"))));
    std::optional<uint64_t> explain;
    if (auto e = args.value("--explain")) explain = keySetArgument(s, d, *e);
    return args.has("--json") ? tlsJson(d, t, explain) : tlsText(d.keys(), t, explain);
  }
  if (args.value("--thread") || args.value("--explain")) usageError("--thread and --explain need --tls", kKeysetUsage);
  if (args.positional.empty()) usageError("keyset needs a value", kKeysetUsage);
  const Dispatcher& d = s.dispatcher(args.value("--runtime"));
  const uint64_t raw = keySetArgument(s, d, joined(args.positional));
  return keysetAnswer(d.keys(), raw, args, ownTableNote(s, d));
}

}  // namespace dscope::inspect
