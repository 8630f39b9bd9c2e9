// Dispatcher, OperatorHandle and TypedOperatorHandle<Sig> (c10's names and behaviour).
//
//   auto op = Dispatcher::singleton().findSchemaOrThrow("aten::mm", "").typed<Tensor(const Tensor&, const Tensor&)>();
//   op.call(a, b);                                  // key set from arguments + TLS
//   op.redispatch(ks & after_autograd_keyset, a, b); // key set as given
//
// Registration takes a lock; dispatch takes none. It reads the operator's table slot (an
// atomic pointer to an immutable kernel) and the fallthrough mask, so a dispatch running
// beside a registration sees either the old or the new kernel, never a torn one.
#pragma once

#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "dscope/DispatchRecords.h"
#include "dscope/OperatorEntry.h"

namespace dscope {

template <class Sig>
class TypedOperatorHandle;

namespace detail {
// DSCOPE_SHOW_DISPATCH_TRACE=1: read once when the runtime loads (PyTorch caches it too).
extern const bool show_dispatch_trace;
// Prints " [call] op=[aten::mm], key=[AutogradCPU]" to stderr (one more leading space per
// nesting level) and keeps the nesting depth for the lifetime of the scope.
class DispatchTraceScope {
 public:
  DispatchTraceScope(dscope_record_kind kind, const impl::OperatorEntry& op, DispatchKeySet ks);
  ~DispatchTraceScope();
  DispatchTraceScope(const DispatchTraceScope&) = delete;
  DispatchTraceScope& operator=(const DispatchTraceScope&) = delete;
};
}  // namespace detail

class OperatorHandle {
 public:
  explicit OperatorHandle(impl::OperatorEntry* e) : entry_(e) {}

  const OperatorName& operator_name() const { return entry_->operator_name(); }
  bool hasSchema() const { return entry_->hasSchema(); }
  const FunctionSchema& schema() const { return entry_->schema(); }
  impl::OperatorEntry& entry() const { return *entry_; }
  bool operator==(const OperatorHandle& o) const { return entry_ == o.entry_; }

  template <class Sig>
  TypedOperatorHandle<Sig> typed() const {
    entry_->assertSignatureIsCorrect(CppSignature::make<Sig>());
    return TypedOperatorHandle<Sig>(entry_);
  }

  void callBoxed(Stack* stack) const;
  void callBoxed(Stack& stack) const { callBoxed(&stack); }
  void redispatchBoxed(DispatchKeySet ks, Stack* stack) const;

 protected:
  impl::OperatorEntry* entry_;
};

template <class Ret, class... Args>
class TypedOperatorHandle<Ret(Args...)> final : public OperatorHandle {
 public:
  explicit TypedOperatorHandle(impl::OperatorEntry* e) : OperatorHandle(e) {}

  // Inline on purpose: this is the whole dispatch fast path.
  Ret call(Args... args) const {
    DispatchKeySet ks = entry_->dispatchKeyExtractor().getDispatchKeySetUnboxed(args...);
    return dispatch(DSCOPE_RECORD_CALL, ks, std::forward<Args>(args)...);
  }
  // The key set is used as given: no argument extraction, no TLS, no fallthrough mask.
  Ret redispatch(DispatchKeySet ks, Args... args) const {
    return dispatch(DSCOPE_RECORD_REDISPATCH, ks, std::forward<Args>(args)...);
  }

 private:
  // What every dispatch does: look up, push a record, check the break filter and the trace
  // flag (one predictable branch each while off), run the kernel.
  Ret dispatch(dscope_record_kind kind, DispatchKeySet ks, Args... args) const {
    int slot = ks.getDispatchTableIndexForDispatchKeySet();
    const impl::AnnotatedKernel& k = entry_->lookupSlot(slot);
    debug::RecordScope record(entry_, &k, ks, slot, kind);
    if (uint64_t armed = debug::breakBloom()) [[unlikely]]
      if (armed & entry_->breakMask())
        debug::checkBreakFilter(*entry_, ks, entry_->dispatchKeyExtractor().describeUnboxed(kind, args...));
    if (detail::show_dispatch_trace) [[unlikely]]
      return traced(kind, k, ks, std::forward<Args>(args)...);
    return k.kernel.template call<Ret, Args...>(*this, ks, std::forward<Args>(args)...);
  }
  [[gnu::noinline]] Ret traced(dscope_record_kind kind, const impl::AnnotatedKernel& k, DispatchKeySet ks,
                               Args... args) const {
    detail::DispatchTraceScope scope(kind, *entry_, ks);
    return k.kernel.template call<Ret, Args...>(*this, ks, std::forward<Args>(args)...);
  }
};

class Dispatcher final {
 public:
  static Dispatcher& singleton();

  // ---- lookup ----
  std::optional<OperatorHandle> findSchema(const OperatorName& name);
  // Throws dscope::Error("Could not find schema for <name>.<overload>") when absent.
  OperatorHandle findSchemaOrThrow(std::string_view name, std::string_view overload_name);
  std::optional<OperatorHandle> findOp(const OperatorName& name);  // with or without a def
  std::vector<std::string> getAllOpNames();
  // Operators with a kernel registered directly at k (any key when k is nullopt).
  std::vector<std::string> getRegistrationsForDispatchKey(std::optional<DispatchKey> k);
  std::vector<impl::OperatorEntry*> operators();  // registration order

  // ---- registration: each returns the function that undoes it ----
  using Deregister = std::function<void()>;
  Deregister registerLibrary(const std::string& ns, std::string debug);
  Deregister registerDef(FunctionSchema schema, std::string debug);
  Deregister registerImpl(const OperatorName& name, std::optional<DispatchKey> key, KernelFunction kernel,
                          std::string debug);
  Deregister registerFallback(DispatchKey key, KernelFunction kernel, std::string debug);

  // ---- calls ----
  void callBoxed(const OperatorHandle& op, Stack* stack) const;
  void redispatchBoxed(const OperatorHandle& op, DispatchKeySet ks, Stack* stack) const;

  // The backend fallback kernel at a table slot (null when none).
  const impl::AnnotatedKernel* backendFallbackKernel(int slot) const { return backendFallbackKernels_[slot]; }

 private:
  friend struct debug::Layout;
  Dispatcher() = default;
  impl::OperatorEntry& findOrRegisterName_(const OperatorName& name);

  std::mutex mutex_;
#ifdef DSCOPE_TEST_LAYOUT_PADDING
  char test_layout_padding_[DSCOPE_TEST_LAYOUT_PADDING];  // as in OperatorEntry
#endif
  impl::OperatorEntry* operators_head_ = nullptr;  // intrusive list in registration order
  impl::OperatorEntry* operators_tail_ = nullptr;
  uint32_t num_operators_ = 0;
  std::unordered_map<std::string, impl::OperatorEntry*> lookup_;  // in-process index only
  std::unordered_map<std::string, std::string> libraries_;        // namespace -> def debug
  impl::AnnotatedKernel* backendFallbackKernels_[num_runtime_entries] = {};
  impl::AnnotatedKernel* retired_fallbacks_ = nullptr;  // deregistered, kept alive (chained by next)
};

}  // namespace dscope
