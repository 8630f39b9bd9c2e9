// Real PyTorch's dispatcher (libtorch, c10) read out of a target without debug information:
// through a layout profile of the exact build (Profile.h), found by the build-id of the
// libtorch_cpu the target maps, and checked against the process before any answer is given.
// Only exported symbols are looked up: Dispatcher::realSingleton() (the Dispatcher object sits at
// a fixed distance from it in the same library) and the TLS key sets of libc10.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <tuple>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dscope/TableRules.h"
#include "target/Remote.h"
#include "model/Dispatcher.h"
#include "source/c10/TorchProfile.h"
#include "dscope/OperatorEntry.h"

namespace dscope::inspect {

// The dynamic type of a C++ object with a vtable as its type_info names it (mangled, without a
// local type's leading '*'), or "" when addr holds none. Read through the vtable's RTTI slot,
// which release builds keep: kernel functors and TensorImpls are named this way.
std::string dynamicTypeName(const Remote& mem, uint64_t addr);
// The same, or "" with *why saying which pointer or name is damaged (a vtable, type_info or name
// outside read-only data, a name that is no mangled name).
std::string checkedTypeName(const Remote& mem, uint64_t addr, std::string* why);

// The mapped file whose name starts with `prefix` ("libc10.so" for libc10.so.1.13.0), if any.
std::optional<ModuleMapping> mappedModule(const Remote& mem, const char* prefix);

// A std::string of libstdc++ (its data pointer, then its length), bounded.
std::string readCppString(const Remote& mem, uint64_t addr, const char* what);

class PythonView;

class TorchView {
 public:
  struct ListKey;  // what identifies an operator list already walked (TorchView.cpp)
  // The libtorch_cpu the target maps, or nullopt: the target holds no real PyTorch.
  static std::optional<ModuleMapping> findLibtorch(const Remote& mem);

  // Finds the profile of the mapped libtorch_cpu and checks it against the process;
  // InspectError (one line) when there is none or it does not fit.
  // python: the interpreter the process runs, asked for only when a Python kernel is named (null:
  // none readable).
  TorchView(const Remote& mem, std::function<const PythonView*()> python);

  const Remote& mem() const { return mem_; }
  const Profile& profile() const { return profile_->profile; }
  const C10Layout& layout() const { return profile_->layout; }
  const KeyTable& keys() const { return profile_->profile.keys; }

  const std::vector<Operator>& operators() const;
  std::shared_ptr<const std::vector<Operator>> operatorList() const {
    operators();
    return operators_;
  }
  // The registered kernels by key, in DispatchKey order (as dumpState iterates), each key's list
  // front first (the active one). Held by the view until it reads another operator's kernels.
  const std::vector<std::pair<int, std::vector<Kernel>>>& registered(const Operator& op) const;
  // The schema's "registered at ..." string, or nullopt when the operator has no schema.
  std::optional<std::string> schemaDebug(const Operator& op) const;
  // The computed entry of every runtime key (Undefined first, then c10's FULL order).
  std::vector<TableEntry> computedTable(const Operator& op) const;
  TableEntry computedEntry(const Operator& op, int key) const;
  // What a kernel is, without DWARF: c10's sentinel it is, else the function a compile-time
  // function-pointer kernel names in its functor's type, the function a runtime functor wraps,
  // the functor's own type, or the boxed function's symbol.
  std::string kernelName(const Kernel& k) const;
  // The function a runtime functor over a function pointer holds (a kernel registered as a plain
  // function pointer: the frame its trampoline, shared by every kernel of that C++ signature,
  // calls), or 0 when the functor at `functor` is no such functor.
  uint64_t runtimeFunction(uint64_t functor) const;
  // The Python object (its function) a Python kernel's functor holds; nullopt for a functor of any
  // other type.
  std::optional<uint64_t> pythonKernelObject(uint64_t functor) const;

  // c10::fallthrough_kernel's address (0 when the library exports none): a table entry whose boxed
  // function it is never runs (the dispatcher masks its key out).
  uint64_t fallthroughKernel() const { return fallthrough_; }

  // Thread tid's TLS key sets, decoded (stored XOR the build's defaults): {included, excluded}.
  // Read through glibc's own thread and TLS layouts (ThreadLocal.h), the same in every debugger.
  std::pair<uint64_t, uint64_t> threadTls(int64_t tid) const;
  // A TensorImpl's key_set_.
  uint64_t tensorKeySet(uint64_t impl) const;
  // The TensorImpl an address names for `keyset ADDR`: a Python tensor's (hex(id(t)), an object
  // whose type is torch.Tensor or derives from it), or a TensorImpl's own address;
  // InspectError saying what the address holds instead (a Python list object, a C++ object of
  // another type, memory that is neither).
  uint64_t tensorImplAt(uint64_t addr) const;

 private:
  std::string readStdString(uint64_t addr, const char* what) const { return readCppString(mem_, addr, what); }
  Kernel readKernel(uint64_t addr) const;
  TableEntry computeEntry(const std::vector<std::pair<int, std::vector<Kernel>>>& kernels, int key) const;
  TableEntry checkedEntry(const Operator& op, const std::vector<std::pair<int, std::vector<Kernel>>>& kernels,
                               int key, const std::vector<Kernel>& table) const;
  std::vector<Kernel> storedTable(const Operator& op) const;
  struct OperatorKernels {
    uint64_t entry = 0;
    std::vector<Kernel> table;                                  // the stored dispatch table, by slot
    std::vector<std::pair<int, std::vector<Kernel>>> kernels;  // registered(op, &table)
  };
  const OperatorKernels& kernelsOf(const Operator& op) const;
  // The kernel map, each key's list checked against the stored table.
  std::vector<std::pair<int, std::vector<Kernel>>> registered(const Operator& op,
                                                                   const std::vector<Kernel>& table) const;
  void validate() const;
  void resolveAliases();
  std::string nameKernel(const Kernel& k) const;
  // A Python kernel's name: its function's (module.qualname at file:LINE), of the functor nameKernel
  // found to be a PythonKernelHolder.
  std::string pythonKernelName(uint64_t holder) const;
  // The PyObject* a PythonKernelHolder holds (its func_, at the profile's PythonKernelHolder_func).
  uint64_t holderObject(uint64_t holder) const;
  void checkCode(const Kernel& k, uint64_t fn, const char* what) const;
  const std::vector<Kernel>& backendFallbacks() const;
  void checkOperators(uint64_t count, const std::vector<Operator>& ops) const;
  std::string refusal() const;
  uint64_t pythonTypeOf(uint64_t addr) const;
  bool isTensorType(uint64_t type) const;

  // c10's alias keys by name, looked up once (null where this build has none: 1.13 has no
  // FuncTorchBatchedDecomposition, and a rule that reads a missing alias never applies).

  const Remote& mem_;
  std::function<const PythonView*()> python_;
  ModuleMapping libtorch_;
  std::shared_ptr<const C10Profile> profile_;  // never null
  uint64_t dispatcher_ = 0;
  uint64_t fallthrough_ = 0;
  // The computed-table rules' alias keys (dscope/TableRules.h), by impl::TableAlias; null where
  // the build has none (1.13: FuncTorchBatchedDecomposition).
  std::array<const KeyInfo*, std::size(impl::kTableAliases)> aliases_{};
  mutable std::shared_ptr<const std::vector<Operator>> operators_;
  mutable std::shared_ptr<const std::vector<Kernel>> fallbacks_;
  mutable std::optional<OperatorKernels> last_kernels_;
};

}  // namespace dscope::inspect
