// op-table OP [--registered|--computed] [--key K] [--json]
// op-table --list [PATTERN] [--json]
// op-table --missing KEY [--json]
//
// Output: --registered is exactly torch._C._dispatch_dump(OP) and --computed exactly
// _dispatch_dump_table(OP) (the runtime's own formatter, so byte-identical to the in-process
// dumps). The default prints both under "== ..." headers, then a third section naming the
// kernel behind every computed entry (symbols never go inside the PyTorch-format lines).
#include <string>

#include "commands/CommandLine.h"
#include "commands/Commands.h"
#include "text/Json.h"

namespace dscope::inspect {

const char* const kOpTableUsage =
    "op-table OP [--registered|--computed] [--key K] [--json] | op-table --list [PATTERN] [--json] | "
    "op-table --missing KEY [--json]";
const OptionSpec kOpTableOptions{
    {"--registered", "--computed", "--json", "--list"}, {"--key", "--missing", "--runtime"}, {"--key", "--missing"}, {}};

namespace {

// The row _dispatch_dump_table prints for one entry (or a "missing" row).
std::string tableRow(const KeyTable& kt, const TableEntry& e) {
  if (!e.present()) return kt.name(e.key) + ": (missing)";
  return format::computedTableRow({kt.name(e.key), e.kernel.debug, impl::toString(e.source), e.fallthrough});
}

// The runtime key a --key or --missing option names; InspectError for an unknown or alias key.
int runtimeKey(const Dispatcher& d, const std::string& name) {
  const KeyInfo& k = d.keys().named(name);
  if (k.alias) fail(name + " is an alias key; computed tables hold runtime keys (e.g. CPU, AutogradCPU)");
  return k.value;
}

std::string keyEntry(const Dispatcher& d, const Operator& op, const std::string& key, int value, bool json) {
  const KeyTable& kt = d.keys();
  const TableEntry e = d.computedEntry(op, value);
  const std::string registered_key = e.registered_key >= 0 ? kt.name(e.registered_key) : key;
  const std::string why = whyText(e.source, key, registered_key, op.name);
  const bool kernel = e.present() && !e.ambiguous();
  const std::string name = kernel ? d.kernelName(e.kernel) : "";
  if (json) {
    Json j;
    j.beginObject().field("op", op.name).field("key", key).field("slot", e.slot);
    j.field("missing", !e.present()).field("label", e.present() ? impl::toString(e.source) : "missing");
    j.field("why", why).field("fallthrough", e.fallthrough);
    if (kernel) j.field("debug", e.kernel.debug).field("registered_at_key", registered_key).field("symbol", name);
    return j.endObject().str();
  }
  std::string out = op.name + " at " + key + " (dispatch-table slot " + std::to_string(e.slot) + "):\n";
  out += "  entry:  " + tableRow(kt, e) + "\n";
  out += "  why:    " + why + "\n";
  if (!kernel) return out;
  if (e.fallthrough) out += "  note:   a fallthrough: the dispatcher skips " + key + " and goes on to the next key\n";
  if (e.source == impl::TableEntrySource::BackendFallback) out += "  kernel: the backend fallback for " + key + ", " + e.kernel.debug + "\n";
  else out += "  kernel: registered at key " + registered_key + ", " + e.kernel.debug + "\n";
  return out + "  symbol: " + name + "\n";
}

struct ComputedRow {
  std::string key;
  int slot = 0;
  std::string label, debug;
  bool fallthrough = false;
  std::string symbol;
};

void computedJson(Json& j, const std::vector<ComputedRow>& rows, const std::string& table) {
  j.key("computed").beginArray();
  for (const auto& r : rows) {
    j.beginObject().field("key", r.key).field("slot", r.slot).field("label", r.label);
    j.field("debug", r.debug).field("fallthrough", r.fallthrough).field("symbol", r.symbol).endObject();
  }
  j.endArray().field("dispatch_dump_table", table);
}

void registeredJson(Json& j, const format::OperatorSnapshot& snap, const std::string& dump) {
  j.key("registered").beginArray();
  for (const auto& k : snap.kernels) {
    j.beginObject().field("key", k.key).field("debug", k.debug).field("inferred_schema", k.inferred_schema);
    j.field("fallthrough", k.fallthrough).field("boxed", k.boxed).field("unboxed", k.unboxed).endObject();
  }
  j.endArray().field("dispatch_dump", dump);
}

std::string wholeOperator(const Dispatcher& d, const Operator& op, const ParsedArgs& args) {
  const KeyTable& kt = d.keys();
  const bool json = args.has("--json");
  const bool registered = !args.has("--computed"), computed = !args.has("--registered");
  std::optional<format::OperatorSnapshot> snap;
  std::string dump;
  if (registered || json) snap = d.registrations(op);
  if (registered) dump = format::dumpState(*snap);
  if (args.has("--registered") && !json) return dump;
  const bool named = json || !args.has("--computed");  // --computed's text names no kernel
  std::string table;
  std::vector<ComputedRow> rows;
  for (const auto& e : d.computedTable(op)) {
    if (!e.present()) continue;
    table.append(tableRow(kt, e)).append("\n");
    rows.push_back({kt.name(e.key), e.slot, impl::toString(e.source), e.kernel.debug, e.fallthrough,
                    !named ? "" : e.ambiguous() ? "(ambiguous)" : d.kernelName(e.kernel)});
  }
  if (json) {  // --registered / --computed keep their half, as in the text
    Json j;
    j.beginObject().field("name", op.name).field("runtime", d.runtimeId()).field("has_schema", snap->has_schema);
    if (snap->has_schema)
      j.field("schema", snap->schema).field("debug", snap->debug).field("alias_analysis", snap->alias_analysis);
    if (registered) registeredJson(j, *snap, dump);
    if (computed) computedJson(j, rows, table);
    return j.endObject().str();
  }
  if (args.has("--computed")) return table;
  std::string out = "== torch._C._dispatch_dump(\"" + op.name + "\")\n" + dump;
  out += "== torch._C._dispatch_dump_table(\"" + op.name + "\")\n" + table;
  out += "== kernels of the computed table (key: symbol)\n";
  for (const auto& r : rows) out += r.key + ": " + r.symbol + "\n";
  return out;
}

std::string operatorListAnswer(const std::vector<Operator>& ops, const ParsedArgs& args) {
  if (args.positional.size() > 1) usageError("--list takes at most one pattern", kOpTableUsage);
  const std::string pattern = args.positional.empty() ? "" : args.positional.front();
  std::vector<const std::string*> matches;
  for (const auto& op : ops)
    if (op.name.find(pattern) != std::string::npos) matches.push_back(&op.name);
  if (args.has("--json")) {
    Json j;
    j.beginObject().field("pattern", pattern).field("total", static_cast<uint64_t>(ops.size()));
    j.key("operators").beginArray();
    for (const auto* name : matches) j.value(*name);
    return j.endArray().endObject().str();
  }
  std::string out;
  for (const auto* name : matches) out += *name + "\n";
  if (pattern.empty()) return out + std::to_string(ops.size()) + (ops.size() == 1 ? " operator registered\n" : " operators registered\n");
  return out + std::to_string(matches.size()) + " of " + std::to_string(ops.size()) + " operators match '" + pattern + "'\n";
}

std::string missingAnswer(const Dispatcher& d, const std::string& key_name, bool json) {
  const int key = runtimeKey(d, key_name);
  const auto& ops = d.operators();
  std::vector<std::string> missing;
  for (const auto& op : ops)
    if (!d.computedEntry(op, key).present()) missing.push_back(op.name);
  if (json) {
    Json j;
    j.beginObject().field("key", key_name).field("total", static_cast<uint64_t>(ops.size()));
    j.key("operators").beginArray();
    for (const auto& name : missing) j.value(name);
    return j.endArray().endObject().str();
  }
  std::string out;
  for (const auto& name : missing) out += name + "\n";
  return out + std::to_string(missing.size()) + " of " + std::to_string(ops.size()) + " operators have no kernel for " + key_name +
         " (no kernel, alias kernel or fallback: a dispatch there fails)\n";
}

}  // namespace

std::string runOpTable(Session& s, const std::vector<std::string>& words) {
  ParsedArgs args = parseArgs(words, kOpTableOptions, kOpTableUsage);
  const bool list = args.has("--list");
  const auto missing = args.value("--missing");
  if (list && missing) usageError("--list and --missing do not combine", kOpTableUsage);
  if ((list || missing) && (args.has("--registered") || args.has("--computed") || args.value("--key")))
    usageError("--registered, --computed and --key need an operator", kOpTableUsage);
  if (missing && !args.positional.empty()) usageError("--missing takes only a key", kOpTableUsage);
  if (!list && !missing) {
    if (args.positional.size() != 1) usageError("op-table needs one operator name", kOpTableUsage);
    if (args.has("--registered") && args.has("--computed")) usageError("--registered or --computed, not both", kOpTableUsage);
    if (args.value("--key") && (args.has("--registered") || args.has("--computed")))
      usageError("--key shows one computed entry; it does not combine with --registered/--computed", kOpTableUsage);
  }
  const Dispatcher& d = s.dispatcher(args.value("--runtime"));
  if (list) return operatorListAnswer(d.operators(), args);
  if (missing) return missingAnswer(d, *missing, args.has("--json"));
  std::optional<int> key;
  if (auto k = args.value("--key")) key = runtimeKey(d, *k);  // a bad key fails before the operator is looked up
  const Operator op = d.findOperator(args.positional.front());
  if (key) return keyEntry(d, op, *args.value("--key"), *key, args.has("--json"));
  return wholeOperator(d, op, args);
}

}  // namespace dscope::inspect
