// keyset and op-table on real PyTorch (TorchView.h): the same commands, options and text shapes
// as on our runtime, with keys named by the build's own key table and tables in c10's own format.
#include <string>

#include "commands/CommandLine.h"
#include "commands/Commands.h"
#include "commands/Json.h"
#include "source/c10/TorchSchema.h"
#include "source/c10/TorchView.h"

namespace dscope::inspect {

namespace {

bool readable(const Remote& mem, uint64_t addr) {
  try {
    mem.readPointer(addr, "an address");
    return true;
  } catch (const InspectError&) {
    return false;
  }
}

// What a number means in a PyTorch process: an address the process maps names a tensor (a Python
// tensor as hex(id(t)) prints it, or a TensorImpl; anything else is refused, saying what it is);
// any other number is a raw key set, of this build's keys only. Real key sets lie far below where
// Linux maps a process's heap and libraries, so the two never meet.
uint64_t keySetOfWord(const TorchView& tv, uint64_t word) {
  if (readable(tv.mem(), word)) return tv.tensorKeySet(tv.tensorImplAt(word));
  if (const uint64_t unknown = tv.keys().unknownBits(word))
    fail(hex(word) + " is no address in this process and no key set of its PyTorch " + tv.profile().version + " (bits " +
         hex(unknown) + " belong to no key of its key table)");
  return word;
}

// `keyset EXPR`'s key set: a number (keySetOfWord), or a debugger value of c10's or ATen's types
// (where the user's code has DWARF).
uint64_t keySetArgument(Session& s, const TorchView& tv, const std::string& text) {
  if (text.empty()) fail("an empty value: give a number or an expression");
  if (auto n = parseNumber(text)) return keySetOfWord(tv, *n);
  std::string error;
  const auto v = s.mem().evaluate(text, &error);
  if (!v && error.empty()) fail("not a number: " + shown(text) + " (a decimal, 0x-hex or 0-octal value; expressions need a debugger)");
  try {
    if (!v) fail(error);
    if (v->kind == DSCOPE_KIND_INTEGER) return keySetOfWord(tv, v->bits);
    const std::string type = v->type;
    uint64_t at = v->kind == DSCOPE_KIND_POINTER ? v->bits : v->address;
    if (v->kind == DSCOPE_KIND_POINTER && !at) fail(text + " is a null pointer");
    if (type == "c10::DispatchKeySet") return at ? s.mem().readPointer(at, "a key set") : v->bits;
    if (type == "at::Tensor" || type == "at::TensorBase") {
      at = s.mem().readPointer(at, "a tensor");  // impl_, the intrusive_ptr's only member
      if (!at) fail(text + " is an undefined tensor");
    } else if (type != "c10::TensorImpl") {
      fail(text + " is a " + (v->kind == DSCOPE_KIND_POINTER ? type : std::string(v->shown)) + ", not a DispatchKeySet or a tensor");
    }
    return tv.tensorKeySet(at);
  } catch (const InspectError& e) {
    fail("cannot evaluate '" + shown(text) + "': " + shown(messageOf(e)));
  }
}

std::string bitName(const KeyTable& kt, const TorchProfile& p, int bit) {
  if (bit < kt.backends()) return p.backend_names[bit];
  return kt.name(bit - kt.backends() + 1);
}

std::string highestWithSlot(const KeyTable& kt, uint64_t raw) {
  const int key = kt.highestKey(raw);
  const KeyInfo* k = kt.byValue(key);
  if (!k || k->slot < 0) return kt.name(key);
  return k->name + " (dispatch-table slot " + std::to_string(k->slot) + ")";
}

std::string withRaw(const KeyTable& kt, uint64_t raw) { return kt.keySetString(raw) + " (raw " + hex(raw) + ")"; }

void keysetJson(Json& j, const TorchProfile& profile, uint64_t raw) {
  const KeyTable& kt = profile.keys;
  j.field("repr", kt.keySetString(raw)).field("raw", hex(raw));
  j.key("keys").beginArray();
  for (int k : kt.keysOf(raw)) j.value(kt.name(k));
  j.endArray().field("highest_key", kt.name(kt.highestKey(raw)));
  const KeyInfo* top = kt.byValue(kt.highestKey(raw));
  j.key("slot");
  if (top && top->slot >= 0) j.value(top->slot);
  else j.null();
  for (const bool functionality : {true, false}) {
    j.key(functionality ? "functionality_bits" : "backend_bits").beginArray();
    for (int bit = 0; bit < 64; ++bit)
      if ((raw >> bit & 1) && (bit >= kt.backends()) == functionality)
        j.beginObject().field("bit", bit).field("name", bitName(kt, profile, bit)).endObject();
    j.endArray();
  }
}

std::string keysetText(const TorchProfile& profile, uint64_t raw, bool verbose) {
  const KeyTable& kt = profile.keys;
  std::string out = kt.keySetString(raw) + "\nraw: " + hex(raw) + "\nhighest key: " + highestWithSlot(kt, raw) + "\n";
  if (!verbose) return out;
  std::string functionality, backend;
  for (int bit = 0; bit < 64; ++bit)
    if (raw >> bit & 1)
      (bit < kt.backends() ? backend : functionality) += "  bit " + std::to_string(bit) + ": " + bitName(kt, profile, bit) + "\n";
  out += "functionality bits:" + std::string(functionality.empty() ? " none\n" : "\n" + functionality);
  return out + "backend bits:" + std::string(backend.empty() ? " none\n" : "\n" + backend);
}

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
    if (key.bits == bit || (key.bits & ~((uint64_t{1} << kt.backends()) - 1)) != bit) continue;
    if (shown++ == 2) return out + ", ...";
    out += (out.empty() ? "" : ", ") + key.name;
  }
  return out;
}

std::string tlsText(int64_t tid, const TorchView& tv, uint64_t included, uint64_t excluded, const std::optional<uint64_t>& explain) {
  const KeyTable& kt = tv.keys();
  const uint64_t def_inc = tv.profile().at("set_default_included"), def_exc = tv.profile().at("set_default_excluded");
  std::string out = "thread tid " + std::to_string(tid) + ":\n";
  out += "  included: " + withRaw(kt, included) + "\n";
  out += "  excluded: " + withRaw(kt, excluded) + "\n";
  if (included == def_inc && excluded == def_exc) out += "  (both are the defaults: nothing included or excluded by hand)\n";
  if (uint64_t extra = included & ~def_inc) out += "  included beyond the default: " + differenceText(kt, extra) + "\n";
  if (uint64_t gone = def_inc & ~included) out += "  default includes missing: " + differenceText(kt, gone) + "\n";
  if (uint64_t extra = excluded & ~def_exc) {
    out += "  excluded beyond the default: " + differenceText(kt, extra) + "\n";
    out += "  (every dispatch on this thread skips these keys until they are re-included: a guard still held, or "
           "a manual exclude that was never restored?)\n";
  }
  if (uint64_t gone = def_exc & ~excluded) out += "  not excluded although excluded by default: " + differenceText(kt, gone) + "\n";
  for (int functionality : kt.backendlessFunctionalities(excluded))
    out += "  (" + kt.name(functionality) + " is excluded for every backend: " + perBackendExamples(kt, functionality) +
           " are skipped; c10's DispatchKeySet printing shows no key for it)\n";
  if (explain) {
    const uint64_t backend_mask = tv.profile().at("set_full_backend_mask");
    const uint64_t with_included = *explain | included;
    const uint64_t effective = with_included & ~(excluded & ~backend_mask);
    out += "explain " + withRaw(kt, *explain) + " on this thread:\n";
    out += "  ks              = " + withRaw(kt, *explain) + "\n";
    out += "  ks | included   = " + withRaw(kt, with_included) + "\n";
    out += "  ... - excluded  = " + withRaw(kt, effective) + "  (removes functionality bits only)\n";
    out += "  key chosen: " + highestWithSlot(kt, effective) + "\n";
  }
  return out;
}

}  // namespace

std::string runTorchKeyset(Session& s, const ParsedArgs& args) {
  const TorchView& tv = s.torch();
  if (args.has("--tls")) {
    int64_t tid = s.mem().selectedTid();
    if (auto thread = args.value("--thread")) {
      const int64_t n = threadOption(*thread);
      tid = s.mem().threadTid(n).value_or(n);  // a debugger thread number, else an OS thread id
    }
    auto [included, excluded] = tv.threadTls(tid);
    std::optional<uint64_t> explain;
    if (auto e = args.value("--explain")) explain = keySetArgument(s, tv, *e);
    if (!args.has("--json")) return tlsText(tid, tv, included, excluded, explain);
    Json j;
    j.beginObject().field("tid", tid).field("runtime", "torch");
    j.key("included").beginObject();
    keysetJson(j, tv.profile(), included);
    j.endObject().key("excluded").beginObject();
    keysetJson(j, tv.profile(), excluded);
    return j.endObject().endObject().str();
  }
  std::string expr;
  for (const auto& w : args.positional) expr += (expr.empty() ? "" : " ") + w;
  const uint64_t raw = keySetArgument(s, tv, expr);
  if (!args.has("--json")) return keysetText(tv.profile(), raw, args.has("--verbose"));
  Json j;
  j.beginObject();
  keysetJson(j, tv.profile(), raw);
  return j.endObject().str();
}

// keyset RAW --profile FILE: a raw key set of another build (a 1.13 tensor's raw_repr() read from a
// log), decoded with that build's own key table; only with no process, whose own table would be
// the one that applies.
std::string runProfileKeyset(Session& s, const ParsedArgs& args, const std::string& path) {
  if (args.has("--tls")) usageError("--profile decodes a raw key set; --tls reads a thread's sets with the process's table", kKeysetUsage);
  if (s.mem().selectedTid())
    fail("--profile decodes a key set with no process; a key set of this process is decoded with its own key table "
         "(leave --profile out)");
  std::string expr;
  for (const auto& w : args.positional) expr += (expr.empty() ? "" : " ") + w;
  const auto raw = parseNumber(expr);
  if (!raw) fail("--profile decodes a number (a raw key set), not " + shown(expr));
  const TorchProfile profile = readTorchProfile(path);
  if (const uint64_t unknown = profile.keys.unknownBits(*raw))
    fail(hex(*raw) + " is no key set of PyTorch " + profile.version + " (bits " + hex(unknown) + " belong to no key of its table)");
  const std::string table = "PyTorch " + profile.version + "'s, from the layout profile " + path;
  if (!args.has("--json")) return keysetText(profile, *raw, args.has("--verbose")) + "key table: " + table + "\n";
  Json j;
  j.beginObject();
  keysetJson(j, profile, *raw);
  return j.field("key_table", table).endObject().str();
}

namespace {

// _dispatch_dump(op): OperatorEntry::dumpState() of the operator, from memory.
std::string registeredDump(const TorchView& tv, const TorchOperator& op) { return dumpRegistered(tv, op); }

std::string keyEntry(const TorchView& tv, const TorchOperator& op, const std::string& key, int value, bool json) {
  const KeyTable& kt = tv.keys();
  const TorchTableEntry e = tv.computedEntry(op, value);
  const std::string registered_key = e.registered_key >= 0 ? kt.name(e.registered_key) : key;
  const std::string why = whyText(e.source, key, registered_key, op.name);
  const bool kernel = e.present() && !e.ambiguous();
  const std::string name = kernel ? tv.kernelName(e.kernel) : "";
  if (json) {
    Json j;
    j.beginObject().field("op", op.name).field("key", key).field("slot", e.slot);
    j.field("missing", !e.present()).field("label", e.present() ? impl::toString(e.source) : "missing");
    j.field("why", why).field("fallthrough", e.fallthrough);
    if (kernel) j.field("debug", e.kernel.debug).field("registered_at_key", registered_key).field("symbol", name);
    return j.endObject().str();
  }
  std::string out = op.name + " at " + key + " (dispatch-table slot " + std::to_string(e.slot) + "):\n";
  out += "  entry:  " + tv.tableRow(e) + "\n";
  out += "  why:    " + why + "\n";
  if (!kernel) return out;
  if (e.fallthrough) out += "  note:   a fallthrough: the dispatcher skips " + key + " and goes on to the next key\n";
  if (e.source == impl::TableEntrySource::BackendFallback) out += "  kernel: the backend fallback for " + key + ", " + e.kernel.debug + "\n";
  else out += "  kernel: registered at key " + registered_key + ", " + e.kernel.debug + "\n";
  return out + "  symbol: " + name + "\n";
}

std::string wholeOperator(const TorchView& tv, const TorchOperator& op, const ParsedArgs& args) {
  const KeyTable& kt = tv.keys();
  const bool registered = !args.has("--computed"), computed = !args.has("--registered");
  const std::string dump = registered ? registeredDump(tv, op) : "";
  if (args.has("--registered") && !args.has("--json")) return dump;
  const bool named = args.has("--json") || !args.has("--computed");  // --computed's text names no kernel
  std::string table;
  std::vector<ComputedRow> rows;
  for (const auto& e : tv.computedTable(op)) {
    if (!e.present()) continue;
    table += tv.tableRow(e) + "\n";
    rows.push_back({kt.name(e.key), e.slot, impl::toString(e.source), e.kernel.debug, e.fallthrough,
                    !named ? "" : e.ambiguous() ? "(ambiguous)" : tv.kernelName(e.kernel)});
  }
  if (args.has("--json")) {
    Json j;
    j.beginObject().field("name", op.name).field("runtime", "torch");
    if (registered) j.field("dispatch_dump", dump);
    if (computed) computedJson(j, rows, table);
    return j.endObject().str();
  }
  if (args.has("--computed")) return table;
  return wholeOperatorText(op.name, dump, table, rows);
}

std::string listOperators(const TorchView& tv, const ParsedArgs& args) {
  std::vector<std::string> names;
  for (const auto& op : tv.operators()) names.push_back(op.name);
  return operatorListAnswer(names, args);
}

}  // namespace

std::string runTorchOpTable(Session& s, const ParsedArgs& args) {
  const TorchView& tv = s.torch();
  const KeyTable& kt = tv.keys();
  if (args.has("--list")) return listOperators(tv, args);
  auto runtimeKey = [&](const std::string& name) {
    const KeyInfo* k = kt.byName(name);
    if (!k) fail("no dispatch key '" + shown(name) + "' in this PyTorch (" + tv.profile().version + ")");
    if (k->alias) fail(name + " is an alias key; computed tables hold runtime keys (e.g. CPU, AutogradCPU)");
    return k->value;
  };
  if (auto missing = args.value("--missing")) {
    const int key = runtimeKey(*missing);
    std::vector<std::string> found;
    for (const auto& op : tv.operators())
      if (!tv.computedEntry(op, key).present()) found.push_back(op.name);
    return missingAnswer(*missing, found, tv.operators().size(), args.has("--json"));
  }
  const TorchOperator op = tv.findOperator(args.positional.front());
  if (auto key = args.value("--key")) return keyEntry(tv, op, *key, runtimeKey(*key), args.has("--json"));
  return wholeOperator(tv, op, args);
}

}  // namespace dscope::inspect
