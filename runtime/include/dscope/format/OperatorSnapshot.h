// The one formatter of operator state. Both the runtime (in-process, from live objects) and the
// inspect library (out of process, from memory) fill an OperatorSnapshot and print it here, so
// their output is identical by construction; so does the inspect library for a real c10 build. Plain
// data only, keys by name: no runtime objects and no compiled key enum, so any build's keys print.
#pragma once

#include <string>
#include <vector>


namespace dscope::format {

struct KernelRegistration {
  std::string key;         // the registration key's name (may be an alias key's)
  bool alias_key = false;  // printed "[alias]"
  std::string debug;                         // "registered at FILE:LINE"
  std::string inferred_schema;               // empty: "(none)"
  bool fallthrough = false;
  bool boxed = false;
  bool unboxed = false;
};

struct ComputedEntry {
  std::string key;  // a runtime key's name, or "Undefined" for slot 0
  std::string debug;
  std::string label;  // "kernel", "backend fallback", ...
  bool fallthrough = false;
};

struct OperatorSnapshot {
  std::string name;  // "aten::add.Tensor"
  bool has_schema = false;
  std::string schema;  // "aten::add.Tensor(Tensor self, ...) -> Tensor"
  std::string debug;   // the def's "registered at ..."
  std::string alias_analysis = "FROM_SCHEMA";
  bool alias_analysis_is_default = false;
  // In DispatchKey order (as c10's dumpState iterates keys), each key's newest first: the first of
  // a key is its active kernel, the ones after it print "(inactive)".
  std::vector<KernelRegistration> kernels;
  std::vector<ComputedEntry> table;         // valid entries, Undefined first then slot order
};

// torch._C._dispatch_dump(op)
std::string dumpState(const OperatorSnapshot& op);
// torch._C._dispatch_dump_table(op)
std::string dumpComputedTable(const OperatorSnapshot& op);
// One of its lines, without the newline: "CPU: registered at FILE:LINE [kernel]".
std::string computedTableRow(const ComputedEntry& e);
// "[CPU, Meta, BackendSelect, ...]": keys of valid entries (Undefined never listed)
std::string listAllDispatchKeys(const OperatorSnapshot& op);
// c10's "Could not run '<op>' with arguments from the '<key>' backend. ..." message
// (or the no-tensor-arguments variant when key is Undefined). privateuse1_name is the renamed
// PrivateUse1 backend ("privateuseone" when not renamed).
std::string missingKernelMessage(const OperatorSnapshot& op, const std::string& key, const std::string& privateuse1_name);

}  // namespace dscope::format
