// Real PyTorch's dispatcher (libtorch, c10) read out of a target without debug information:
// through a layout profile of the exact build (TorchProfile.h), found by the build-id of the
// libtorch_cpu the target maps, and checked against the process before any answer is given.
// Only exported symbols are looked up: Dispatcher::realSingleton() (the Dispatcher object sits at
// a fixed distance from it in the same library) and the TLS key sets of libc10.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "Remote.h"
#include "TorchProfile.h"

namespace dscope::inspect {

// An impl::AnnotatedKernel: its KernelFunction's pointers and its "registered at ..." string.
struct TorchKernel {
  uint64_t addr = 0;
  uint64_t functor = 0, boxed = 0, unboxed = 0;
  std::string debug;
  bool valid() const { return boxed != 0; }  // KernelFunction::isValid()
};

struct TorchOperator {
  uint64_t entry = 0;  // its impl::OperatorEntry
  std::string name;    // "aten::add.Tensor"
};

// One entry of a computed dispatch table, as OperatorEntry::computeDispatchTableEntryWithDebug
// finds it: the kernel and why ("kernel", "math kernel", "backend fallback", ...; "missing").
struct TorchTableEntry {
  int key = 0;
  int slot = -1;
  TorchKernel kernel;
  std::string label;
  bool fallthrough = false;
  bool ambiguous = false;  // c10's ambiguousAutogradOtherKernel()
};

class TorchView {
 public:
  struct ListKey;  // what identifies an operator list already walked (TorchView.cpp)
  // The libtorch_cpu the target maps, or nullopt: the target holds no real PyTorch.
  static std::optional<ModuleMapping> findLibtorch(const Remote& mem);

  // Finds the profile of the mapped libtorch_cpu and checks it against the process;
  // InspectError (one line) when there is none or it does not fit.
  explicit TorchView(const Remote& mem);

  const Remote& mem() const { return mem_; }
  const TorchProfile& profile() const { return profile_; }
  const KeyTable& keys() const { return profile_.keys; }

  const std::vector<TorchOperator>& operators() const;
  // By full name, else by base name when that names one operator; InspectError otherwise.
  TorchOperator findOperator(const std::string& query) const;
  // The registered kernels by key, in DispatchKey order (as dumpState iterates), each key's list
  // front first (the active one).
  std::vector<std::pair<int, std::vector<TorchKernel>>> registered(const TorchOperator& op) const;
  // The schema's "registered at ..." string, or nullopt when the operator has no schema.
  std::optional<std::string> schemaDebug(const TorchOperator& op) const;
  // The computed entry of every runtime key (Undefined first, then c10's FULL order).
  std::vector<TorchTableEntry> computedTable(const TorchOperator& op) const;
  TorchTableEntry computedEntry(const TorchOperator& op, int key) const;
  // _dispatch_dump_table(op): the valid entries, one line each.
  std::string dumpComputedTable(const TorchOperator& op) const;
  std::string tableRow(const TorchTableEntry& e) const;

  // The thread's TLS key sets, decoded (stored XOR the build's defaults): {included, excluded}.
  std::pair<uint64_t, uint64_t> threadTls() const;
  // A TensorImpl's key_set_.
  uint64_t tensorKeySet(uint64_t impl) const;

 private:
  uint64_t value(const char* name) const { return profile_.at(name); }
  std::string readStdString(uint64_t addr, const char* what) const;
  TorchKernel readKernel(uint64_t addr) const;
  TorchTableEntry computeEntry(const std::vector<std::pair<int, std::vector<TorchKernel>>>& kernels, int key) const;
  void validate() const;
  void checkOperators(uint64_t count, const std::vector<TorchOperator>& ops) const;
  std::string refusal() const;

  const Remote& mem_;
  ModuleMapping libtorch_;
  TorchProfile profile_;
  uint64_t dispatcher_ = 0;
  uint64_t fallthrough_ = 0;
  mutable std::shared_ptr<const std::vector<TorchOperator>> operators_;
  mutable std::optional<std::vector<TorchKernel>> fallbacks_;
};

}  // namespace dscope::inspect
