// impl::OperatorEntry: one operator's schema, registered kernels and computed dispatch table.
//
// Debugger-friendly by construction: registered kernels are an intrusive list (newest first)
// with a count, the computed table is a fixed array indexed by table slot, names and debug
// strings are heap copies (so they are in every core). Entries are never freed, and neither
// are kernels once published in a table: a concurrent dispatch may still be running them.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dscope/DebugInterface.h"
#include "dscope/DispatchKeySet.h"
#include "dscope/FunctionSchema.h"
#include "dscope/KernelFunction.h"
#include "dscope/LocalDispatchKeySet.h"
#include "dscope/format/OperatorSnapshot.h"

namespace dscope {

class Dispatcher;

namespace impl {

// A heap copy of a string that lives as long as its owner (plain char* for outside readers).
const char* copyToHeap(std::string_view s);

struct AnnotatedKernel {
  KernelFunction kernel;
  const char* debug = "";            // "registered at FILE:LINE"
  const char* inferred_schema = nullptr;  // "(Tensor _0) -> Tensor _0", null for boxed kernels
  DispatchKey key = DispatchKey::Undefined;  // registration key (alias keys allowed)
  AnnotatedKernel* next = nullptr;   // next older registration of the same operator
};

// A def(): the parsed schema plus heap copies of its text and debug string for outside readers.
// Never freed once published (a caller may hold a reference); deregistered ones are retired.
struct RegisteredSchema {
  FunctionSchema schema;
  const char* text;   // "aten::mm(Tensor self, Tensor mat2) -> Tensor"
  const char* debug;  // "registered at FILE:LINE"
  RegisteredSchema* next_retired = nullptr;
};

// How a computed table entry was resolved (the label dumpComputedTable prints).
enum class TableEntrySource : uint8_t {
  Missing = 0,
  Kernel,                 // [kernel]
  DefaultBackendKernel,   // [default backend kernel]
  NestedKernel,           // [nested kernel]
  AmbiguousAutogradOther, // [ambiguous autogradother]
  MathKernel,             // [math kernel]
  AutogradKernel,         // [autograd kernel]
  BatchedKernel,          // [batched kernel]
  BackendFallback,        // [backend fallback]
};
const char* toString(TableEntrySource s);

// Computes the dispatch key set of a call (c10::DispatchKeyExtractor): the union of the
// tensor arguments' key sets, plus TLS included, minus TLS excluded, masked by the keys that
// are not fallthrough for this operator.
class DispatchKeyExtractor {
 public:
  DispatchKeyExtractor();

  template <class... Args>
  DispatchKeySet getDispatchKeySetUnboxed(const Args&... args) const {
    DispatchKeySet ks;
    ((ks = ks | keySetOf(args)), ...);
    return computeDispatchKeySet(ks);
  }
  DispatchKeySet getDispatchKeySetBoxed(const Stack* stack) const;

  DispatchKeySet computeDispatchKeySet(DispatchKeySet ks) const {
    const auto& tls = raw_local_dispatch_key_set;
    DispatchKeySet effective = (ks | tls.included()) - tls.excluded();
    return effective & DispatchKeySet(DispatchKeySet::RAW, nonFallthroughMask(effective));
  }
  // The keys that do not fall through, for a dispatch whose key set (after TLS) is `effective`.
  uint64_t nonFallthroughMask(DispatchKeySet effective) const {
    return requiresBitsetPerBackend_.load(std::memory_order_relaxed)
               ? nonFallthroughKeysPerBackend_[effective.getBackendIndex()].load(std::memory_order_relaxed)
               : nonFallthroughKeys_.load(std::memory_order_relaxed);
  }

  // What a dispatch-break stop explains (dscope_break_dispatch): each dispatch argument's key set,
  // the thread's TLS sets, the mask. Only made when the break filter may match (never on the fast path).
  template <class... Args>
  dscope_break_dispatch describeUnboxed(dscope_record_kind kind, const Args&... args) const {
    dscope_break_dispatch d{};
    uint32_t from_end = sizeof...(Args);
    DispatchKeySet all;
    auto add = [&](const auto& a) {
      --from_end;
      using T = std::decay_t<decltype(a)>;
      if constexpr (isDispatchArgument<T>) {
        const DispatchKeySet ks = keySetOf(a);
        all = all | ks;
        if (d.argument_count < DSCOPE_BREAK_MAX_ARGUMENTS) d.arguments[d.argument_count++] = {from_end, tensorCount(a), ks.raw_repr()};
      }
    };
    (add(args), ...);
    return described(d, kind, all);
  }
  dscope_break_dispatch describeBoxed(dscope_record_kind kind, const Stack* stack) const;

  void setOperatorHasFallthroughForKey(DispatchKey k, bool has_fallthrough);
  void registerSchema(const FunctionSchema& schema);
  DispatchKeySet nonFallthroughKeys() const {
    return DispatchKeySet(DispatchKeySet::RAW, nonFallthroughKeys_.load(std::memory_order_relaxed));
  }
  // c10's dumpState: argument bits ('0'/'1', bit 0 first), a space, nonFallthroughKeys_, '\n'.
  std::string dumpState() const;

 private:
  // The argument types a dispatch reads key sets from: Tensor, Tensor?, Tensor[].
  template <class T>
  static constexpr bool isTensorList = std::is_same_v<T, TensorList> || std::is_same_v<T, std::vector<Tensor>>;
  template <class T>
  static constexpr bool isDispatchArgument = std::is_same_v<T, Tensor> || std::is_same_v<T, std::optional<Tensor>> || isTensorList<T>;

  template <class T>
  static DispatchKeySet keySetOf(const T& a) {
    if constexpr (std::is_same_v<T, Tensor>) return a.key_set();
    else if constexpr (std::is_same_v<T, std::optional<Tensor>>) return a ? a->key_set() : DispatchKeySet();
    else if constexpr (isTensorList<T>) {
      DispatchKeySet ks;
      for (const auto& t : a) ks = ks | t.key_set();
      return ks;
    } else return {};
  }
  // The tensors a dispatch argument holds (0 for a Tensor? that is None).
  template <class T>
  static uint32_t tensorCount(const T& a) {
    if constexpr (std::is_same_v<T, std::optional<Tensor>>) return a ? 1 : 0;
    else if constexpr (isTensorList<T>) return static_cast<uint32_t>(a.size());
    else return 1;
  }

  dscope_break_dispatch described(dscope_break_dispatch d, dscope_record_kind kind, DispatchKeySet arguments) const;

  friend struct ::dscope::debug::Layout;
  std::atomic<uint64_t> nonFallthroughKeys_;
  std::atomic<uint64_t> nonFallthroughKeysPerBackend_[num_backends];
  std::atomic<bool> requiresBitsetPerBackend_{false};
  uint64_t dispatch_arg_indices_reverse_ = 0;  // bit i: the i-th argument from the end is a tensor
};

class OperatorEntry {
 public:
  OperatorEntry(OperatorName name, const Dispatcher& d);
  OperatorEntry(const OperatorEntry&) = delete;
  OperatorEntry& operator=(const OperatorEntry&) = delete;

  const OperatorName& operator_name() const { return name_; }
  const char* name_cstr() const { return full_name_; }
  // FNV-1a 64 of "ns::name.overload" and of "ns::name": what break filter entries hold.
  uint64_t name_hash() const { return name_hash_; }
  uint64_t base_name_hash() const { return base_name_hash_; }
  // The break filter's bloom bits of both hashes: a dispatch checks the entries only when the
  // descriptor's break_bloom meets them (DebugInterface.h).
  uint64_t breakMask() const { return break_mask_; }
  bool hasSchema() const { return schema_ != nullptr; }
  const FunctionSchema& schema() const;  // throws when the operator has no def

  // ---- hot path ----
  const DispatchKeyExtractor& dispatchKeyExtractor() const { return extractor_; }
  const AnnotatedKernel& lookup(DispatchKeySet ks) const { return lookupSlot(ks.getDispatchTableIndexForDispatchKeySet()); }
  const AnnotatedKernel& lookupSlot(int slot) const { return *dispatchTable_[slot].load(std::memory_order_acquire); }

  // ---- introspection (torch._C._dispatch_*) ----
  bool hasKernelForDispatchKey(DispatchKey k) const;          // registered directly at k
  bool hasComputedKernelForDispatchKey(DispatchKey k) const;  // valid computed entry for k
  bool hasAnyKernel() const { return num_kernels_ != 0; }
  format::OperatorSnapshot snapshot() const;
  std::string dumpState() const;          // _dispatch_dump
  std::string dumpComputedTable() const;  // _dispatch_dump_table
  std::string listAllDispatchKeys() const;
  [[noreturn]] void reportError(DispatchKey k) const;
  void checkInvariants() const;

 private:
  friend class ::dscope::Dispatcher;
  friend struct ::dscope::debug::Layout;

  // All of these run under the Dispatcher's registration lock.
  void registerSchema(FunctionSchema schema, std::string debug);
  void deregisterSchema();
  AnnotatedKernel* registerKernel(const Dispatcher& d, std::optional<DispatchKey> key, KernelFunction kernel,
                                  std::string debug);
  void deregisterKernel(const Dispatcher& d, AnnotatedKernel* k);
  void updateFallback(const Dispatcher& d, DispatchKey k);
  void updateDispatchTable_(const Dispatcher& d, DispatchKey k);
  void updateDispatchTableEntry_(const Dispatcher& d, DispatchKey k);
  void updateDispatchTableFull_(const Dispatcher& d);
  std::pair<const AnnotatedKernel*, TableEntrySource> computeDispatchTableEntry(const Dispatcher& d,
                                                                                DispatchKey k) const;
  struct TableQuery;  // what computeDispatchTableEntry tells the table rules (OperatorEntry.cpp)
  const AnnotatedKernel* newestKernelAt(DispatchKey k) const;
  bool hasKernelForAnyDispatchKey(DispatchKeySet ks) const;
  void checkSchemaMatches(const FunctionSchema& expected, std::string_view inferred, std::string_view debug) const;

  OperatorName name_;
#ifdef DSCOPE_TEST_LAYOUT_PADDING
  // Only in a test build of the runtime laid out unlike the tools' (tests/e2e/other_layout_test.py).
  char test_layout_padding_[DSCOPE_TEST_LAYOUT_PADDING];
#endif
  const char* full_name_;                 // "aten::add.Tensor" (heap)
  uint64_t name_hash_;
  uint64_t base_name_hash_;
  uint64_t break_mask_;  // dscope_break_bloom_bit(name_hash_) | dscope_break_bloom_bit(base_name_hash_)
  RegisteredSchema* schema_ = nullptr;   // null: no def() (yet, or any more)
  RegisteredSchema* retired_schemas_ = nullptr;
  AnnotatedKernel* kernels_ = nullptr;    // newest first
  uint32_t num_kernels_ = 0;
  AnnotatedKernel* retired_ = nullptr;    // deregistered kernels, kept alive (see file comment)
  std::atomic<const AnnotatedKernel*> dispatchTable_[num_runtime_entries];
  TableEntrySource dispatchTableSource_[num_runtime_entries] = {};
  DispatchKeyExtractor extractor_;
  std::shared_ptr<const CppSignature> cpp_signature_;  // first kernel's or typed()'s signature
  std::string cpp_signature_debug_;

 public:
  OperatorEntry* next_ = nullptr;  // Dispatcher's operator list (registration order)

  // typed<Sig>() check: the C++ signature every kernel and caller must share.
  void assertSignatureIsCorrect(const CppSignature& call_signature) const;
};

}  // namespace impl
}  // namespace dscope
