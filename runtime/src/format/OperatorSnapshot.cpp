#include "dscope/format/OperatorSnapshot.h"


namespace dscope::format {

std::string dumpState(const OperatorSnapshot& op) {
  std::string out = "name: " + op.name + "\n";
  if (op.has_schema) {
    out += "schema: " + op.schema + "\n";
    out += "debug: " + op.debug + "\n";
    out += "alias analysis kind: " + op.alias_analysis + (op.alias_analysis_is_default ? " (default)" : "") + "\n";
  } else {
    out += "schema: (none)\n";
  }
  for (size_t i = 0; i < op.kernels.size(); ++i) {
    const KernelRegistration& k = op.kernels[i];
    out += k.key;
    if (k.alias_key) out += "[alias]";
    if (i > 0 && op.kernels[i - 1].key == k.key) out += " (inactive)";
    out += ": " + k.debug + " :: " + (k.inferred_schema.empty() ? "(none)" : k.inferred_schema) + " [ ";
    if (k.fallthrough) out += "fallthrough ";
    if (k.boxed) out += "boxed ";
    if (k.unboxed) out += "unboxed ";
    out += "]\n";
  }
  return out;
}

std::string computedTableRow(const ComputedEntry& e) {
  std::string row;
  row.reserve(e.key.size() + e.debug.size() + e.label.size() + 18);
  row.append(e.key).append(": ").append(e.fallthrough ? "fallthrough " : "").append(e.debug).append(" [").append(e.label).append("]");
  return row;
}

std::string dumpComputedTable(const OperatorSnapshot& op) {
  std::string out;
  for (const auto& e : op.table) out.append(computedTableRow(e)).append("\n");
  return out;
}

std::string listAllDispatchKeys(const OperatorSnapshot& op) {
  std::string out = "[";
  bool first = true;
  for (const auto& e : op.table) {
    if (e.key == "Undefined") continue;
    if (!first) out += ", ";
    out += e.key;
    first = false;
  }
  return out + "]";
}

std::string missingKernelMessage(const OperatorSnapshot& op, const std::string& key, const std::string& privateuse1_name) {
  if (key == "Undefined") {
    return "There were no tensor arguments to this function (e.g., you passed an empty list of Tensors), "
           "but no fallback function is registered for schema " + op.name +
           ".  This usually means that this function requires a non-empty list of Tensors, or that you "
           "(the operator writer) forgot to register a fallback function.  Available functions are " +
           listAllDispatchKeys(op) + ".\n\n" + dumpComputedTable(op);
  }
  std::string key_name = key;
  // A renamed PrivateUse1 backend shows under its own name, as in c10.
  const std::string suffix = "PrivateUse1";
  if (key_name.size() >= suffix.size() && key_name.compare(key_name.size() - suffix.size(), suffix.size(), suffix) == 0 &&
      privateuse1_name != "privateuseone")
    key_name = key_name.substr(0, key_name.size() - suffix.size()) + privateuse1_name;
  return "Could not run '" + op.name + "' with arguments from the '" + key_name +
         "' backend. This could be because the operator doesn't exist for this backend, or was omitted "
         "during the selective/custom build process (if using custom build). If you are a Facebook "
         "employee using PyTorch on mobile, please visit https://fburl.com/ptmfixes for possible "
         "resolutions. '" + op.name + "' is only available for these backends: " + listAllDispatchKeys(op) +
         ".\n\n" + dumpComputedTable(op);
}

}  // namespace dscope::format
