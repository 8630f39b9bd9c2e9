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
#include "commands/Json.h"

namespace dscope::inspect {

const char* const kOpTableUsage =
    "op-table OP [--registered|--computed] [--key K] [--json] | op-table --list [PATTERN] [--json] | "
    "op-table --missing KEY [--json]";

namespace {

using impl::TableEntrySource;

std::string whyText(const TableEntry& e, const std::string& op) {
  return inspect::whyText(e.source, toString(e.key), toString(e.kernel.key), op);
}
// The row _dispatch_dump_table prints for one entry (or a "missing" row).
std::string tableRow(const RuntimeView& rt, const TableEntry& e) {
  if (rt.isMissing(e.kernel)) return std::string(toString(e.key)) + ": (missing)";
  format::OperatorSnapshot one;
  one.table.push_back({e.key, e.kernel.debug, impl::toString(e.source), rt.isFallthrough(e.kernel)});
  std::string row = format::dumpComputedTable(one);
  return row.substr(0, row.size() - 1);  // without its newline
}

std::string keyEntry(const RuntimeView& rt, const RemoteOperator& op, DispatchKey key, bool json) {
  if (isAliasDispatchKey(key))
    fail(std::string(toString(key)) + " is an alias key; computed tables hold runtime keys (e.g. CPU, AutogradCPU)");
  TableEntry e = rt.tableEntry(op.addr, key);
  const bool missing = rt.isMissing(e.kernel), fallthrough = rt.isFallthrough(e.kernel);
  const std::string symbol = missing ? "" : rt.kernelSymbol(e.kernel);
  if (json) {
    Json j;
    j.beginObject().field("op", op.name).field("key", toString(key)).field("slot", e.slot);
    j.field("missing", missing).field("label", missing ? "missing" : impl::toString(e.source));
    j.field("why", whyText(e, op.name)).field("fallthrough", fallthrough);
    if (!missing) j.field("debug", e.kernel.debug).field("registered_at_key", toString(e.kernel.key)).field("symbol", symbol);
    return j.endObject().str();
  }
  std::string out = op.name + " at " + toString(key) + " (dispatch-table slot " + std::to_string(e.slot) + "):\n";
  out += "  entry:  " + tableRow(rt, e) + "\n";
  out += "  why:    " + whyText(e, op.name) + "\n";
  if (missing) return out;
  if (fallthrough) out += "  note:   a fallthrough: the dispatcher skips " + std::string(toString(key)) + " and goes on to the next key\n";
  out += "  kernel: registered at key " + std::string(toString(e.kernel.key)) + ", " + e.kernel.debug + "\n";
  out += "  symbol: " + symbol + "\n";
  return out;
}

std::string wholeOperator(const RuntimeView& rt, const RemoteOperator& op, const ParsedArgs& args) {
  format::OperatorSnapshot snap = rt.snapshot(op.addr);
  const std::string dump = format::dumpState(snap), table = format::dumpComputedTable(snap);
  if (!args.has("--json") && args.has("--registered")) return dump;
  if (!args.has("--json") && args.has("--computed")) return table;
  std::vector<ComputedRow> rows;
  for (const TableEntry& e : rt.validTableEntries(op.addr))
    rows.push_back({toString(e.key), e.slot, impl::toString(e.source), e.kernel.debug, rt.isFallthrough(e.kernel),
                    rt.kernelSymbol(e.kernel)});
  if (args.has("--json")) {  // --registered / --computed keep their half, as in the text
    const bool registered = !args.has("--computed"), computed = !args.has("--registered");
    Json j;
    j.beginObject().field("name", snap.name).field("has_schema", snap.has_schema);
    if (snap.has_schema) j.field("schema", snap.schema).field("debug", snap.debug).field("alias_analysis", snap.alias_analysis);
    if (registered) {
      j.key("registered").beginArray();
      for (const auto& k : snap.kernels) {
        j.beginObject().field("key", toString(k.key)).field("debug", k.debug).field("inferred_schema", k.inferred_schema);
        j.field("fallthrough", k.fallthrough).field("boxed", k.boxed).field("unboxed", k.unboxed).endObject();
      }
      j.endArray().field("dispatch_dump", dump);
    }
    if (computed) computedJson(j, rows, table);
    return j.endObject().str();
  }
  return wholeOperatorText(snap.name, dump, table, rows);
}

std::string listOperators(const RuntimeView& rt, const ParsedArgs& args) {
  std::vector<std::string> names;
  for (const auto& op : rt.operators()) names.push_back(op.name);
  return operatorListAnswer(names, args);
}

std::string missingForKey(const RuntimeView& rt, const std::string& key_name, const ParsedArgs& args) {
  DispatchKey key = parseKeyOrFail(key_name);
  if (isAliasDispatchKey(key))
    fail(key_name + " is an alias key; --missing needs a runtime key (e.g. CPU, Meta, AutogradCPU)");
  const auto& ops = rt.operators();
  std::vector<std::string> missing;
  for (const auto& op : ops)
    if (rt.isMissing(rt.tableEntry(op.addr, key).kernel)) missing.push_back(op.name);
  return missingAnswer(toString(key), missing, ops.size(), args.has("--json"));
}

}  // namespace

void computedJson(Json& j, const std::vector<ComputedRow>& rows, const std::string& table) {
  j.key("computed").beginArray();
  for (const auto& r : rows) {
    j.beginObject().field("key", r.key).field("slot", r.slot).field("label", r.label);
    j.field("debug", r.debug).field("fallthrough", r.fallthrough).field("symbol", r.symbol).endObject();
  }
  j.endArray().field("dispatch_dump_table", table);
}

std::string wholeOperatorText(const std::string& name, const std::string& dump, const std::string& table,
                              const std::vector<ComputedRow>& rows) {
  std::string out = "== torch._C._dispatch_dump(\"" + name + "\")\n" + dump;
  out += "== torch._C._dispatch_dump_table(\"" + name + "\")\n" + table;
  out += "== kernels of the computed table (key: symbol)\n";
  for (const auto& r : rows) out += r.key + ": " + r.symbol + "\n";
  return out;
}

std::string operatorListAnswer(const std::vector<std::string>& names, const ParsedArgs& args) {
  if (args.positional.size() > 1) usageError("--list takes at most one pattern", kOpTableUsage);
  const std::string pattern = args.positional.empty() ? "" : args.positional.front();
  std::vector<const std::string*> matches;
  for (const auto& name : names)
    if (name.find(pattern) != std::string::npos) matches.push_back(&name);
  if (args.has("--json")) {
    Json j;
    j.beginObject().field("pattern", pattern).field("total", static_cast<uint64_t>(names.size()));
    j.key("operators").beginArray();
    for (const auto* name : matches) j.value(*name);
    return j.endArray().endObject().str();
  }
  std::string out;
  for (const auto* name : matches) out += *name + "\n";
  if (pattern.empty()) return out + std::to_string(names.size()) + (names.size() == 1 ? " operator registered\n" : " operators registered\n");
  return out + std::to_string(matches.size()) + " of " + std::to_string(names.size()) + " operators match '" + pattern + "'\n";
}

std::string missingAnswer(const std::string& key, const std::vector<std::string>& missing, size_t total, bool json) {
  if (json) {
    Json j;
    j.beginObject().field("key", key).field("total", static_cast<uint64_t>(total));
    j.key("operators").beginArray();
    for (const auto& name : missing) j.value(name);
    return j.endArray().endObject().str();
  }
  std::string out;
  for (const auto& name : missing) out += name + "\n";
  return out + std::to_string(missing.size()) + " of " + std::to_string(total) + " operators have no kernel for " + key +
         " (no kernel, alias kernel or fallback: a dispatch there fails)\n";
}

std::string whyText(impl::TableEntrySource source, const std::string& key, const std::string& reg_key,
                    const std::string& op) {
  using impl::TableEntrySource;
  switch (source) {
    case TableEntrySource::Kernel: return "a kernel is registered at " + key + " itself";
    case TableEntrySource::DefaultBackendKernel:
      return "no kernel at " + key + "; the " + reg_key + " kernel (a default backend kernel) covers it";
    case TableEntrySource::NestedKernel:
      return "no kernel at " + key + "; the CompositeImplicitAutogradNestedTensor kernel covers it";
    case TableEntrySource::AmbiguousAutogradOther:
      return "ambiguous: a CompositeImplicitAutograd kernel and a kernel for a backend behind AutogradOther both "
             "apply; register an AutogradOther kernel (or a CompositeExplicitAutograd one) to resolve it";
    case TableEntrySource::MathKernel:
      return "no kernel at " + key + " and no backend kernel; the CompositeImplicitAutograd kernel (a math kernel) "
             "covers it";
    case TableEntrySource::AutogradKernel: return "no kernel at " + key + "; the Autograd alias kernel covers it";
    case TableEntrySource::BatchedKernel:
      return "no kernel at " + key + "; the FuncTorchBatchedDecomposition kernel covers it";
    case TableEntrySource::BackendFallback:
      return "no kernel for " + op + " at " + key + "; the backend fallback registered for " + key + " runs";
    case TableEntrySource::Missing: break;
  }
  return "no kernel, alias kernel or backend fallback covers " + key + ": a dispatch here fails with \"Could not run '" +
         op + "' with arguments from the '" + key + "' backend\"";
}

std::string runOpTable(Session& s, const std::vector<std::string>& words) {
  ParsedArgs args =
      parseArgs(words, {{"--registered", "--computed", "--json", "--list"}, {"--key", "--missing", "--runtime"}}, kOpTableUsage);
  const bool list = args.has("--list");
  const auto missing = args.value("--missing");
  if (list && missing) usageError("--list and --missing do not combine", kOpTableUsage);
  if ((list || missing) && (args.has("--registered") || args.has("--computed") || args.value("--key")))
    usageError("--registered, --computed and --key need an operator", kOpTableUsage);
  if (missing && !args.positional.empty()) usageError("--missing takes only a key", kOpTableUsage);
  if ((list || missing) && s.readsTorch(args.value("--runtime"))) return runTorchOpTable(s, args);
  if (list) return listOperators(s.runtime(), args);
  if (missing) return missingForKey(s.runtime(), *missing, args);
  if (args.positional.size() != 1) usageError("op-table needs one operator name", kOpTableUsage);
  if (args.has("--registered") && args.has("--computed")) usageError("--registered or --computed, not both", kOpTableUsage);
  if (args.value("--key") && (args.has("--registered") || args.has("--computed")))
    usageError("--key shows one computed entry; it does not combine with --registered/--computed", kOpTableUsage);
  if (s.readsTorch(args.value("--runtime"))) return runTorchOpTable(s, args);
  std::optional<DispatchKey> key;
  if (auto k = args.value("--key")) key = parseKeyOrFail(*k);  // a bad key fails before any memory is read
  const RuntimeView& rt = s.runtime();
  RemoteOperator op = rt.findOperator(args.positional.front());
  if (key) return keyEntry(rt, op, *key, args.has("--json"));
  return wholeOperator(rt, op, args);
}

}  // namespace dscope::inspect
