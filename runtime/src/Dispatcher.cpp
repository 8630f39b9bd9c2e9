#include "dscope/Dispatcher.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "dscope/format/DispatchRecord.h"

namespace dscope {

// ---------------------------------------------------------------- kernels the dispatcher owns

std::string CppSignature::name() const {
  int status = 0;
  char* demangled = abi::__cxa_demangle(type_->name(), nullptr, nullptr, &status);
  std::string out = status == 0 && demangled ? demangled : type_->name();
  std::free(demangled);
  return out;
}

std::string KernelFunction::dumpState() const {
  std::string out;
  if (isFallthrough()) out += "fallthrough ";
  if (hasBoxed()) out += "boxed ";
  if (hasUnboxed()) out += "unboxed ";
  return out;
}

namespace detail {

void fallthroughKernel(void*, const OperatorHandle& op, DispatchKeySet ks, Stack*) {
  throw Error("fallthrough_kernel was executed for " + op.operator_name().full() + " at " +
              toString(ks.highestPriorityTypeId()) +
              " but it should have been short-circuited by the dispatcher. This could occur if you "
              "registered a fallthrough kernel as a override for a specific operator (as opposed to a "
              "backend fallback) and then redispatched to it with a key set that still contains its key.");
}

void missingKernel(void*, const OperatorHandle& op, DispatchKeySet ks, Stack*) {
  op.entry().reportError(ks.highestPriorityTypeId());
}

void ambiguousAutogradOtherKernel(void*, const OperatorHandle& op, DispatchKeySet, Stack*) {
  throw Error(op.operator_name().full() +
              " has kernels registered to both CompositeImplicitAutograd and a backend mapped to AutogradOther. "
              "This makes the backend kernel unreachable; the dispatcher will always prefer the "
              "CompositeImplicitAutograd lowering (see Note: [Ambiguity in AutogradOther kernel]). If you want "
              "to override CompositeImplicitAutograd, please open an issue to request a dedicated Autograd "
              "dispatch key for the backend.\nCanonical state\n~~~~~~~~~~~\n" + op.entry().dumpState());
}

}  // namespace detail

// ---------------------------------------------------------------- trace

namespace detail {

namespace {
bool readTraceFlag() {
  const char* v = std::getenv("DSCOPE_SHOW_DISPATCH_TRACE");
  if (!v || std::string_view(v) == "0") return false;
  if (std::string_view(v) == "1") return (dscope_debug_descriptor.trace_enabled = 1);
  std::fprintf(stderr, "ignoring invalid value for DSCOPE_SHOW_DISPATCH_TRACE: %s valid values are 0 or 1.\n", v);
  return false;
}
DSCOPE_HOT_THREAD_LOCAL int64_t dispatch_trace_depth DSCOPE_TLS_INITIAL_EXEC;
}  // namespace

const bool show_dispatch_trace = readTraceFlag();

DispatchTraceScope::DispatchTraceScope(dscope_record_kind kind, const impl::OperatorEntry& op, DispatchKeySet ks) {
  ++dispatch_trace_depth;
  // One write per line so that lines of concurrent threads do not interleave.
  std::string line(static_cast<size_t>(dispatch_trace_depth), ' ');
  line += format::recordLine(static_cast<uint8_t>(kind), op.name_cstr(), ks.highestPriorityTypeId()) + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
}

DispatchTraceScope::~DispatchTraceScope() { --dispatch_trace_depth; }

}  // namespace detail

// ---------------------------------------------------------------- handles

void OperatorHandle::callBoxed(Stack* stack) const { Dispatcher::singleton().callBoxed(*this, stack); }

void OperatorHandle::redispatchBoxed(DispatchKeySet ks, Stack* stack) const {
  Dispatcher::singleton().redispatchBoxed(*this, ks, stack);
}

// ---------------------------------------------------------------- Dispatcher

Dispatcher& Dispatcher::singleton() {
  // Never destroyed: static destructors of other libraries may still deregister kernels.
  static Dispatcher* d = [] {
    auto* created = new Dispatcher();
    dscope_debug_descriptor.dispatcher = created;
    return created;
  }();
  return *d;
}

std::optional<OperatorHandle> Dispatcher::findOp(const OperatorName& name) {
  std::lock_guard lock(mutex_);
  auto it = lookup_.find(name.full());
  if (it == lookup_.end()) return std::nullopt;
  return OperatorHandle(it->second);
}

std::optional<OperatorHandle> Dispatcher::findSchema(const OperatorName& name) {
  auto op = findOp(name);
  if (op && op->hasSchema()) return op;
  return std::nullopt;
}

OperatorHandle Dispatcher::findSchemaOrThrow(std::string_view name, std::string_view overload_name) {
  OperatorName n{std::string(name), std::string(overload_name)};
  if (auto op = findSchema(n)) return *op;
  if (findOp(n))
    throw Error("Could not find schema for " + n.full() +
                " but we found an implementation; did you forget to def() the operator?");
  throw Error("Could not find schema for " + n.full());
}

std::vector<impl::OperatorEntry*> Dispatcher::operators() {
  std::lock_guard lock(mutex_);
  std::vector<impl::OperatorEntry*> out;
  out.reserve(num_operators_);
  for (auto* e = operators_head_; e; e = e->next_) out.push_back(e);
  return out;
}

std::vector<std::string> Dispatcher::getAllOpNames() {
  std::vector<std::string> out;
  for (auto* e : operators())
    if (e->hasSchema() || e->hasAnyKernel()) out.push_back(e->name_cstr());
  return out;
}

std::vector<std::string> Dispatcher::getRegistrationsForDispatchKey(std::optional<DispatchKey> k) {
  std::vector<std::string> out;
  for (auto* e : operators())
    if (k ? e->hasKernelForDispatchKey(*k) : e->hasAnyKernel()) out.push_back(e->name_cstr());
  return out;
}

impl::OperatorEntry& Dispatcher::findOrRegisterName_(const OperatorName& name) {
  auto key = name.full();
  if (auto it = lookup_.find(key); it != lookup_.end()) return *it->second;
  auto* e = new impl::OperatorEntry(name, *this);
  lookup_.emplace(key, e);
  (operators_tail_ ? operators_tail_->next_ : operators_head_) = e;
  operators_tail_ = e;
  ++num_operators_;
  return *e;
}

Dispatcher::Deregister Dispatcher::registerLibrary(const std::string& ns, std::string debug) {
  std::lock_guard lock(mutex_);
  auto [it, inserted] = libraries_.emplace(ns, debug);
  DSCOPE_CHECK(inserted, "Only a single DSCOPE_LIBRARY can be used to register the namespace " + ns +
                             "; please put all of your definitions in a single DSCOPE_LIBRARY block.  If you were "
                             "trying to specify implementations, consider using DSCOPE_LIBRARY_IMPL (which can be "
                             "duplicated).  If you really intended to define operators for a single namespace in a "
                             "distributed way, you can use DSCOPE_LIBRARY_FRAGMENT to explicitly indicate this.  "
                             "Previous registration of DSCOPE_LIBRARY was " + it->second + "; latest registration was " +
                             debug);
  return [this, ns] {
    std::lock_guard lock(mutex_);
    libraries_.erase(ns);
  };
}

Dispatcher::Deregister Dispatcher::registerDef(FunctionSchema schema, std::string debug) {
  std::lock_guard lock(mutex_);
  auto& op = findOrRegisterName_(schema.op);
  op.registerSchema(std::move(schema), std::move(debug));
  return [this, &op] {
    std::lock_guard lock(mutex_);
    op.deregisterSchema();
  };
}

Dispatcher::Deregister Dispatcher::registerImpl(const OperatorName& name, std::optional<DispatchKey> key,
                                                KernelFunction kernel, std::string debug) {
  std::lock_guard lock(mutex_);
  auto& op = findOrRegisterName_(name);
  auto* handle = op.registerKernel(*this, key, std::move(kernel), std::move(debug));
  return [this, &op, handle] {
    std::lock_guard lock(mutex_);
    op.deregisterKernel(*this, handle);
  };
}

Dispatcher::Deregister Dispatcher::registerFallback(DispatchKey key, KernelFunction kernel, std::string debug) {
  std::lock_guard lock(mutex_);
  DSCOPE_CHECK(!isAliasDispatchKey(key), std::string("registerFallback takes a runtime key, got ") + toString(key));
  int slot = getDispatchTableIndexForDispatchKey(key);
  DSCOPE_CHECK(!backendFallbackKernels_[slot],
               std::string("Tried to register multiple backend fallbacks for the same dispatch key ") + toString(key) +
                   "; previous registration " + backendFallbackKernels_[slot]->debug + ", new registration " + debug);
  // Fallbacks are never unboxed, so they carry no inferred schema. Never freed (see OperatorEntry.h).
  auto* fb = new impl::AnnotatedKernel{std::move(kernel), impl::copyToHeap(debug), nullptr, key, nullptr};
  backendFallbackKernels_[slot] = fb;
  for (auto* e = operators_head_; e; e = e->next_) e->updateFallback(*this, key);
  return [this, key, slot] {
    std::lock_guard lock(mutex_);
    backendFallbackKernels_[slot]->next = retired_fallbacks_;
    retired_fallbacks_ = backendFallbackKernels_[slot];
    backendFallbackKernels_[slot] = nullptr;
    for (auto* e = operators_head_; e; e = e->next_) e->updateFallback(*this, key);
  };
}

// The boxed twin of TypedOperatorHandle::dispatch.
static void dispatchBoxed(dscope_record_kind kind, const OperatorHandle& op, DispatchKeySet ks, Stack* stack) {
  int slot = ks.getDispatchTableIndexForDispatchKeySet();
  const impl::AnnotatedKernel& k = op.entry().lookupSlot(slot);
  debug::RecordScope record(&op.entry(), &k, ks, slot, kind);
  if (uint64_t armed = debug::breakBloom()) [[unlikely]]
    if (armed & op.entry().breakMask())
      debug::checkBreakFilter(op.entry(), ks, op.entry().dispatchKeyExtractor().describeBoxed(kind, stack));
  std::optional<detail::DispatchTraceScope> trace;
  if (detail::show_dispatch_trace) [[unlikely]]
    trace.emplace(kind, op.entry(), ks);
  k.kernel.callBoxed(op, ks, stack);
}

void Dispatcher::callBoxed(const OperatorHandle& op, Stack* stack) const {
  dispatchBoxed(DSCOPE_RECORD_CALL_BOXED, op, op.entry().dispatchKeyExtractor().getDispatchKeySetBoxed(stack), stack);
}

void Dispatcher::redispatchBoxed(const OperatorHandle& op, DispatchKeySet ks, Stack* stack) const {
  dispatchBoxed(DSCOPE_RECORD_REDISPATCH_BOXED, op, ks, stack);
}

}  // namespace dscope
