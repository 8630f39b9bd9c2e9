#include "dscope/OperatorEntry.h"
#include "dscope/TableRules.h"

#include <algorithm>
#include <cstring>

#include "dscope/DebugInterface.h"
#include "dscope/Device.h"
#include "dscope/Dispatcher.h"

namespace dscope::impl {

namespace {

// Sentinels every table slot can point at; never freed.
const AnnotatedKernel& missingKernel() {
  static const AnnotatedKernel k{KernelFunction::makeMissing(), "", nullptr, DispatchKey::Undefined, nullptr};
  return k;
}
const AnnotatedKernel& ambiguousAutogradOtherKernel() {
  static const AnnotatedKernel k{KernelFunction::makeAmbiguousAutogradOther(), "ambiguous_autogradother", nullptr,
                                 DispatchKey::Undefined, nullptr};
  return k;
}

// Undefined, then the 137 runtime keys in slot order.
template <class F>
void forEachRuntimeKey(F&& f) {
  f(DispatchKey::Undefined);
  for (DispatchKey k : DispatchKeySet(DispatchKeySet::FULL)) f(k);
}

// A boxed argument's key set (a tensor's, or the union of a tensor list's; none for anything else),
// and how many tensors it holds.
DispatchKeySet keySetOfValue(const IValue& v, uint32_t* tensors = nullptr) {
  DispatchKeySet ks;
  uint32_t n = 0;
  if (v.isTensor()) ks = v.toTensor().key_set(), n = 1;
  else if (v.isTensorList())
    for (const auto& t : v.toTensorList()) ks = ks | t.key_set(), ++n;
  if (tensors) *tensors = n;
  return ks;
}

}  // namespace

const char* copyToHeap(std::string_view s) {
  char* p = new char[s.size() + 1];
  std::memcpy(p, s.data(), s.size());
  p[s.size()] = '\0';
  return p;
}

// ---------------------------------------------------------------- DispatchKeyExtractor

DispatchKeyExtractor::DispatchKeyExtractor() : nonFallthroughKeys_(DispatchKeySet(DispatchKeySet::FULL).raw_repr()) {
  for (auto& m : nonFallthroughKeysPerBackend_) m.store(DispatchKeySet(DispatchKeySet::FULL).raw_repr());
}

void DispatchKeyExtractor::registerSchema(const FunctionSchema& schema) {
  DSCOPE_CHECK(schema.arguments.size() <= 64, "operator " + schema.op.full() + " has more than 64 arguments");
  uint64_t bits = 0;
  size_t n = schema.arguments.size();
  for (size_t i = 0; i < n; ++i)
    if (schema.arguments[i].isTensorLike()) bits |= 1ULL << (n - 1 - i);
  dispatch_arg_indices_reverse_ = bits;
}

DispatchKeySet DispatchKeyExtractor::getDispatchKeySetBoxed(const Stack* stack) const {
  DispatchKeySet ks;
  for (uint64_t bits = dispatch_arg_indices_reverse_; bits; bits &= bits - 1) {
    size_t from_end = std::countr_zero(bits);
    DSCOPE_CHECK(from_end < stack->size(), "boxed call: the stack holds fewer arguments than the schema");
    ks = ks | keySetOfValue((*stack)[stack->size() - 1 - from_end]);
  }
  return computeDispatchKeySet(ks);
}

dscope_break_dispatch DispatchKeyExtractor::describeBoxed(dscope_record_kind kind, const Stack* stack) const {
  dscope_break_dispatch d{};
  DispatchKeySet all;
  // From the first argument on (the highest bit): the order the schema lists them in.
  for (uint64_t bits = dispatch_arg_indices_reverse_; bits && d.argument_count < DSCOPE_BREAK_MAX_ARGUMENTS;
       bits &= ~(uint64_t{1} << (63 - std::countl_zero(bits)))) {
    const auto from_end = static_cast<uint32_t>(63 - std::countl_zero(bits));
    if (from_end >= stack->size()) break;
    uint32_t tensors = 0;
    const DispatchKeySet ks = keySetOfValue((*stack)[stack->size() - 1 - from_end], &tensors);
    all = all | ks;
    d.arguments[d.argument_count++] = {from_end, tensors, ks.raw_repr()};
  }
  return described(d, kind, all);
}

dscope_break_dispatch DispatchKeyExtractor::described(dscope_break_dispatch d, dscope_record_kind kind,
                                                      DispatchKeySet arguments) const {
  const auto& tls = raw_local_dispatch_key_set;
  d.kind = kind;
  d.tls_included = tls.included().raw_repr();
  d.tls_excluded = tls.excluded().raw_repr();
  d.non_fallthrough = nonFallthroughMask((arguments | tls.included()) - tls.excluded());
  return d;
}

void DispatchKeyExtractor::setOperatorHasFallthroughForKey(DispatchKey k, bool has_fallthrough) {
  auto update = [&](std::atomic<uint64_t>& word) {
    auto ks = DispatchKeySet(DispatchKeySet::RAW, word.load(std::memory_order_relaxed));
    word.store((has_fallthrough ? ks.remove(k) : ks.add(k)).raw_repr(), std::memory_order_relaxed);
  };
  update(nonFallthroughKeys_);
  if (isPerBackendFunctionalityKey(toFunctionalityKey(k))) {
    // Only this backend's mask changes; per-backend masks are consulted only when they differ.
    update(nonFallthroughKeysPerBackend_[static_cast<uint8_t>(toBackendComponent(k)) - 1]);
    bool differ = false;
    for (size_t i = 0; i + 1 < num_backends; ++i)
      differ |= nonFallthroughKeysPerBackend_[i].load(std::memory_order_relaxed) !=
                nonFallthroughKeysPerBackend_[i + 1].load(std::memory_order_relaxed);
    requiresBitsetPerBackend_.store(differ, std::memory_order_relaxed);
  } else {
    for (auto& word : nonFallthroughKeysPerBackend_) update(word);
  }
}

std::string DispatchKeyExtractor::dumpState() const {
  std::string out;
  for (int i = 0; i < 64; ++i) out += (dispatch_arg_indices_reverse_ >> i) & 1 ? '1' : '0';
  return out + " " + toString(nonFallthroughKeys()) + "\n";
}

// ---------------------------------------------------------------- OperatorEntry

OperatorEntry::OperatorEntry(OperatorName name, const Dispatcher& d)
    : name_(std::move(name)),
      full_name_(copyToHeap(name_.full())),
      name_hash_(dscope_fnv1a64(full_name_)),
      base_name_hash_(dscope_fnv1a64(name_.name.c_str())),
      break_mask_(dscope_break_bloom_bit(name_hash_) | dscope_break_bloom_bit(base_name_hash_)) {
  for (auto& slot : dispatchTable_) slot.store(&missingKernel(), std::memory_order_relaxed);
  // Pick up the backend fallbacks registered before this operator existed.
  updateDispatchTableFull_(d);
}

const FunctionSchema& OperatorEntry::schema() const {
  DSCOPE_CHECK(schema_, "operator " + name_.full() + " has no schema (no def() registered it)");
  return schema_->schema;
}

void OperatorEntry::registerSchema(FunctionSchema schema, std::string debug) {
  DSCOPE_CHECK(!schema_, "Tried to register an operator (" + schema.text +
                             ") with the same name and overload name multiple times. Each overload's schema should "
                             "only be registered with a single call to def(). Duplicate registration: " + debug +
                             ". Original registration: " + std::string(schema_ ? schema_->debug : ""));
  for (auto* k = kernels_; k; k = k->next)
    if (k->inferred_schema) checkSchemaMatches(schema, k->inferred_schema, k->debug);
  extractor_.registerSchema(schema);
  const char* text = copyToHeap(schema.text);
  schema_ = new RegisteredSchema{std::move(schema), text, copyToHeap(debug)};
}

void OperatorEntry::deregisterSchema() {
  schema_->next_retired = retired_schemas_;
  retired_schemas_ = schema_;
  schema_ = nullptr;
}

void OperatorEntry::checkSchemaMatches(const FunctionSchema& expected, std::string_view inferred,
                                       std::string_view debug) const {
  // Compare argument and return counts: the inferred schema lists one "_i" per C++ parameter.
  auto count = [](std::string_view s) {
    if (s.find('_') == std::string_view::npos) return size_t{0};
    size_t n = 1;
    for (char c : s) n += c == ',';
    return n;
  };
  auto arrow = inferred.find(") -> ");
  size_t args = count(inferred.substr(0, arrow));
  size_t rets = count(inferred.substr(arrow + 5));
  DSCOPE_CHECK(args == expected.arguments.size() && rets == expected.returns.size(),
               "Inferred operator schema for a C++ kernel function doesn't match the expected function schema.\n"
               "  operator: " + name_.full() + "\n  expected schema: " + expected.text +
                   "\n  inferred schema: " + std::string(inferred) + "\n  kernel " + std::string(debug));
}

void OperatorEntry::assertSignatureIsCorrect(const CppSignature& call_signature) const {
  if (!cpp_signature_) return;  // no unboxed kernel yet: any caller signature is fine for boxed kernels
  DSCOPE_CHECK(*cpp_signature_ == call_signature,
               "\nTried to access or call an operator with a wrong signature.\n  operator: " + name_.full() +
                   "\n  correct signature:  " + cpp_signature_->name() + "\n    " + cpp_signature_debug_ +
                   "\n  accessed/called as: " + call_signature.name());
}

AnnotatedKernel* OperatorEntry::registerKernel(const Dispatcher& d, std::optional<DispatchKey> key, KernelFunction kernel,
                                               std::string debug) {
  // Check everything before changing anything, so a rejected kernel leaves no trace.
  if (schema_ && kernel.inferred_schema_) checkSchemaMatches(schema_->schema, *kernel.inferred_schema_, debug);
  if (kernel.signature_) {
    if (cpp_signature_) {
      DSCOPE_CHECK(*cpp_signature_ == *kernel.signature_,
                   "\nMismatch in kernel C++ signatures\n  operator: " + name_.full() + "\n    " + cpp_signature_debug_ +
                       "\n  kernel 1: " + cpp_signature_->name() + "\n  kernel 2: " + kernel.signature_->name() +
                       "\n    " + debug + "\n");
    } else {
      cpp_signature_ = kernel.signature_;
      cpp_signature_debug_ = debug;
    }
  }
  // A catch-all kernel (no key) is a CompositeImplicitAutograd kernel, as in c10.
  DispatchKey k = key.value_or(DispatchKey::CompositeImplicitAutograd);
  auto* a = new AnnotatedKernel{std::move(kernel), copyToHeap(debug), nullptr, k, kernels_};
  if (a->kernel.inferred_schema_) a->inferred_schema = copyToHeap(*a->kernel.inferred_schema_);
  kernels_ = a;
  ++num_kernels_;
  if (key) updateDispatchTable_(d, k);
  else updateDispatchTableFull_(d);
  return a;
}

void OperatorEntry::deregisterKernel(const Dispatcher& d, AnnotatedKernel* a) {
  for (AnnotatedKernel** p = &kernels_; *p; p = &(*p)->next) {
    if (*p != a) continue;
    *p = a->next;
    --num_kernels_;
    a->next = retired_;
    retired_ = a;
    break;
  }
  updateDispatchTable_(d, a->key);
}

void OperatorEntry::updateFallback(const Dispatcher& d, DispatchKey k) {
  for (DispatchKey rk : getRuntimeDispatchKeySet(k)) updateDispatchTableEntry_(d, rk);
}

void OperatorEntry::updateDispatchTable_(const Dispatcher& d, DispatchKey k) {
  if (k == DispatchKey::Undefined) {
    updateDispatchTableEntry_(d, k);
    return;
  }
  for (DispatchKey rk : getRuntimeDispatchKeySet(k)) updateDispatchTableEntry_(d, rk);
  if (k == DispatchKey::CompositeImplicitAutograd || k == DispatchKey::CompositeExplicitAutograd ||
      k == DispatchKey::CompositeExplicitAutogradNonFunctional)
    updateDispatchTableEntry_(d, DispatchKey::Undefined);
  // A backend kernel changes what its autograd key resolves to (has_backend); backend-less
  // keys such as FPGA or MkldnnCPU map to AutogradOther.
  if (isBackendDispatchKey(k)) updateDispatchTableEntry_(d, getAutogradKeyFromBackend(toBackendComponent(k)));
}

void OperatorEntry::updateDispatchTableEntry_(const Dispatcher& d, DispatchKey k) {
  int slot = getDispatchTableIndexForDispatchKey(k);
  auto [kernel, source] = computeDispatchTableEntry(d, k);
  dispatchTableSource_[slot] = source;
  dispatchTable_[slot].store(kernel, std::memory_order_release);
  extractor_.setOperatorHasFallthroughForKey(k, kernel->kernel.isFallthrough());
}

void OperatorEntry::updateDispatchTableFull_(const Dispatcher& d) {
  forEachRuntimeKey([&](DispatchKey k) { updateDispatchTableEntry_(d, k); });
}

const AnnotatedKernel* OperatorEntry::newestKernelAt(DispatchKey k) const {
  for (auto* a = kernels_; a; a = a->next)
    if (a->key == k) return a;
  return nullptr;
}

bool OperatorEntry::hasKernelForAnyDispatchKey(DispatchKeySet ks) const {
  for (auto* a = kernels_; a; a = a->next)
    if (!isAliasDispatchKey(a->key) && ks.has(a->key)) return true;
  return false;
}

// The table rules' questions (dscope/TableRules.h) about key k, answered from this entry's kernels
// and the dispatcher's fallbacks.
struct OperatorEntry::TableQuery {
  using K = DispatchKey;
  const OperatorEntry& e;
  const Dispatcher& d;
  K k;
  static K key(TableAlias a) {
    switch (a) {
      case TableAlias::CompositeExplicitAutogradNonFunctional: return K::CompositeExplicitAutogradNonFunctional;
      case TableAlias::CompositeExplicitAutograd: return K::CompositeExplicitAutograd;
      case TableAlias::CompositeImplicitAutogradNestedTensor: return K::CompositeImplicitAutogradNestedTensor;
      case TableAlias::CompositeImplicitAutograd: return K::CompositeImplicitAutograd;
      case TableAlias::Autograd: return K::Autograd;
      case TableAlias::FuncTorchBatchedDecomposition: return K::FuncTorchBatchedDecomposition;
    }
    return K::Undefined;
  }
  bool undefined() const { return k == K::Undefined; }
  const AnnotatedKernel* direct() const { return e.newestKernelAt(k); }
  bool covers(TableAlias a) const { return isIncludedInAlias(k, key(a)); }
  const AnnotatedKernel* at(TableAlias a) const { return e.newestKernelAt(key(a)); }
  bool backendKernel() const { return e.hasKernelForAnyDispatchKey(getBackendKeySetFromAutograd(k)); }
  bool ambiguousAutogradOther() const { return k == K::AutogradOther && e.hasKernelForAnyDispatchKey(autogradother_backends); }
  const AnnotatedKernel* ambiguous() const { return &ambiguousAutogradOtherKernel(); }
  const AnnotatedKernel* fallback() const { return d.backendFallbackKernel(getDispatchTableIndexForDispatchKey(k)); }
};

// c10's computeDispatchTableEntryWithDebug, written once in dscope/TableRules.h.
std::pair<const AnnotatedKernel*, TableEntrySource> OperatorEntry::computeDispatchTableEntry(const Dispatcher& d,
                                                                                            DispatchKey k) const {
  const auto choice = chooseTableEntry(TableQuery{*this, d, k});
  return {choice.kernel ? choice.kernel : &missingKernel(), choice.source};
}

bool OperatorEntry::hasKernelForDispatchKey(DispatchKey k) const { return newestKernelAt(k) != nullptr; }

bool OperatorEntry::hasComputedKernelForDispatchKey(DispatchKey k) const {
  DSCOPE_CHECK(!isAliasDispatchKey(k), std::string("expected a runtime dispatch key, got alias key ") + toString(k));
  return !lookup(DispatchKeySet(k)).kernel.isMissing();  // Undefined reads slot 0
}

format::OperatorSnapshot OperatorEntry::snapshot() const {
  format::OperatorSnapshot s;
  s.name = full_name_;
  if (schema_) {
    s.has_schema = true;
    s.schema = schema_->text;
    s.debug = schema_->debug;
    s.alias_analysis = toString(schema_->schema.alias_analysis);
  }
  // The list is newest first; a stable sort by key keeps that order within a key.
  std::vector<const AnnotatedKernel*> kernels;
  for (auto* a = kernels_; a; a = a->next) kernels.push_back(a);
  std::stable_sort(kernels.begin(), kernels.end(), [](auto* a, auto* b) { return a->key < b->key; });
  for (const AnnotatedKernel* a : kernels)
    s.kernels.push_back({toString(a->key), isAliasDispatchKey(a->key), a->debug, a->inferred_schema ? a->inferred_schema : "",
                         a->kernel.isFallthrough(), a->kernel.hasBoxed(), a->kernel.hasUnboxed()});
  forEachRuntimeKey([&](DispatchKey k) {
    int slot = getDispatchTableIndexForDispatchKey(k);
    const AnnotatedKernel* a = dispatchTable_[slot].load(std::memory_order_acquire);
    if (a->kernel.isMissing()) return;
    s.table.push_back({toString(k), a->debug, toString(dispatchTableSource_[slot]), a->kernel.isFallthrough()});
  });
  return s;
}

std::string OperatorEntry::dumpState() const { return format::dumpState(snapshot()); }
std::string OperatorEntry::dumpComputedTable() const { return format::dumpComputedTable(snapshot()); }
std::string OperatorEntry::listAllDispatchKeys() const { return format::listAllDispatchKeys(snapshot()); }

void OperatorEntry::checkInvariants() const {
  forEachRuntimeKey([&](DispatchKey k) {
    int slot = getDispatchTableIndexForDispatchKey(k);
    auto expected = computeDispatchTableEntry(Dispatcher::singleton(), k).first;
    DSCOPE_CHECK(dispatchTable_[slot].load() == expected,
                 "Canonical state\n~~~~~~~~~~~\n" + dumpState() + "\n\nComputed table:\n~~~~~~~~~~~\n" +
                     dumpComputedTable() + "\nthe table entry for " + toString(k) + " is out of date");
  });
}

void OperatorEntry::reportError(DispatchKey k) const {
  throw NotImplementedError(format::missingKernelMessage(snapshot(), toString(k), get_privateuse1_backend()));
}

}  // namespace dscope::impl
