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
  // Stable order: by key value, and within a key newest first (the first one is active).
  for (uint16_t v = 0; v < num_all_dispatch_keys; ++v) {
    auto key = static_cast<DispatchKey>(v);
    bool first = true;
    for (const auto& k : op.kernels) {
      if (k.key != key) continue;
      out += toString(key);
      if (isAliasDispatchKey(key)) out += "[alias]";
      if (!first) out += " (inactive)";
      out += ": " + k.debug + " :: " + (k.inferred_schema.empty() ? "(none)" : k.inferred_schema) + " [ ";
      if (k.fallthrough) out += "fallthrough ";
      if (k.boxed) out += "boxed ";
      if (k.unboxed) out += "unboxed ";
      out += "]\n";
      first = false;
    }
  }
  return out;
}

std::string dumpComputedTable(const OperatorSnapshot& op) {
  std::string out;
  for (const auto& e : op.table) {
    out += std::string(toString(e.key)) + ": " + (e.fallthrough ? "fallthrough " : "") + e.debug + " [" + e.label + "]\n";
  }
  return out;
}

std::string listAllDispatchKeys(const OperatorSnapshot& op) {
  std::string out = "[";
  bool first = true;
  for (const auto& e : op.table) {
    if (e.key == DispatchKey::Undefined) continue;
    if (!first) out += ", ";
    out += toString(e.key);
    first = false;
  }
  return out + "]";
}

std::string missingKernelMessage(const OperatorSnapshot& op, DispatchKey key, const std::string& privateuse1_name) {
  if (key == DispatchKey::Undefined) {
    return "There were no tensor arguments to this function (e.g., you passed an empty list of Tensors), "
           "but no fallback function is registered for schema " + op.name +
           ".  This usually means that this function requires a non-empty list of Tensors, or that you "
           "(the operator writer) forgot to register a fallback function.  Available functions are " +
           listAllDispatchKeys(op) + ".\n\n" + dumpComputedTable(op);
  }
  std::string key_name = toString(key);
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
