// DispatchKey and BackendComponent: PyTorch 2.11's c10 enums, value for value.
//
// Layout (see shared/reference/c10-2.11-layout.md §1-§3):
//   * BackendComponent: 16 backends, bit i of a DispatchKeySet is BackendComponent(i+1).
//   * Functionality keys 0..47, sentinel EndOfFunctionalityKeys = 48.
//   * For each of the 6 per-backend (PB) functionalities, a StartOf<F>Backends value
//     followed by 16 runtime keys <prefix><Backend>, in BackendComponent order.
//   * Alias keys 151..156 (no bit in a DispatchKeySet).
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string_view>

namespace dscope {

// X(p, name) for every backend, in BackendComponent order (Meta must stay last); p is passed
// through so that one list also spells the runtime keys (p = prefix).
#define DSCOPE_FORALL_BACKENDS(X, p)                                                         \
  X(p, CPU) X(p, CUDA) X(p, HIP) X(p, XLA) X(p, MPS) X(p, IPU) X(p, XPU) X(p, HPU) X(p, VE) \
  X(p, Lazy) X(p, MTIA) X(p, MAIA) X(p, PrivateUse1) X(p, PrivateUse2) X(p, PrivateUse3)    \
  X(p, Meta)

// X(functionality, prefix) for the per-backend functionalities, in enum order.
#define DSCOPE_FORALL_PER_BACKEND_FUNCTIONALITIES(X) \
  X(Dense, ) X(Quantized, Quantized) X(Sparse, Sparse) X(SparseCsr, SparseCsr) \
  X(NestedTensor, NestedTensor) X(AutogradFunctionality, Autograd)

// X(name) for functionality keys 1..47, in enum (= priority) order.
#define DSCOPE_FORALL_FUNCTIONALITY_KEYS(X)                                                  \
  X(Dense) X(FPGA) X(Vulkan) X(Metal) X(Quantized) X(CustomRNGKeyId) X(MkldnnCPU) X(Sparse)   \
  X(SparseCsr) X(NestedTensor) X(BackendSelect) X(Python) X(Fake)                             \
  X(FuncTorchDynamicLayerBackMode) X(Functionalize) X(Named) X(Conjugate) X(Negative)         \
  X(ZeroTensor) X(ADInplaceOrView) X(AutogradOther) X(AutogradFunctionality)                  \
  X(AutogradNestedTensor) X(Tracer) X(AutocastCPU) X(AutocastMTIA) X(AutocastMAIA)            \
  X(AutocastXPU) X(AutocastIPU) X(AutocastHPU) X(AutocastXLA) X(AutocastMPS) X(AutocastCUDA)  \
  X(AutocastPrivateUse1) X(FuncTorchBatched) X(BatchedNestedTensor) X(FuncTorchVmapMode)      \
  X(Batched) X(VmapMode) X(FuncTorchGradWrapper) X(DeferredInit) X(PythonTLSSnapshot)         \
  X(FuncTorchDynamicLayerFrontMode) X(TESTING_ONLY_GenericWrapper) X(TESTING_ONLY_GenericMode) \
  X(PreDispatch) X(PythonDispatcher)

// X(name) for the alias keys, in enum order.
#define DSCOPE_FORALL_ALIAS_KEYS(X)                                                 \
  X(Autograd) X(CompositeImplicitAutograd) X(FuncTorchBatchedDecomposition)        \
  X(CompositeImplicitAutogradNestedTensor) X(CompositeExplicitAutograd)            \
  X(CompositeExplicitAutogradNonFunctional)

enum class BackendComponent : uint8_t {
  InvalidBit = 0,
#define DSCOPE_BACKEND_BIT(_, b) b##Bit,
  DSCOPE_FORALL_BACKENDS(DSCOPE_BACKEND_BIT, _)
#undef DSCOPE_BACKEND_BIT
  EndOfBackendKeys = MetaBit,
};

enum class DispatchKey : uint16_t {
  Undefined = 0,
  CatchAll = Undefined,
#define DSCOPE_FUNCTIONALITY(k) k,
  DSCOPE_FORALL_FUNCTIONALITY_KEYS(DSCOPE_FUNCTIONALITY)
#undef DSCOPE_FUNCTIONALITY
  EndOfFunctionalityKeys,  // 48: a sentinel, but DispatchKeySet(48) sets bit 63

#define DSCOPE_RUNTIME_KEY(prefix, b) prefix##b,
#define DSCOPE_PB_RANGE(f, prefix)                      \
  StartOf##f##Backends,                                 \
  DSCOPE_FORALL_BACKENDS(DSCOPE_RUNTIME_KEY, prefix)    \
  EndOf##f##Backends = prefix##Meta,
  DSCOPE_FORALL_PER_BACKEND_FUNCTIONALITIES(DSCOPE_PB_RANGE)
#undef DSCOPE_PB_RANGE
#undef DSCOPE_RUNTIME_KEY
  EndOfRuntimeBackendKeys = EndOfAutogradFunctionalityBackends,  // 150

#define DSCOPE_ALIAS(k) k,
  DSCOPE_FORALL_ALIAS_KEYS(DSCOPE_ALIAS)
#undef DSCOPE_ALIAS
  StartOfAliasKeys = Autograd,
  EndOfAliasKeys = CompositeExplicitAutogradNonFunctional,

  // Other names c10 keeps for compatibility.
  CPUTensorId = CPU,
  CUDATensorId = CUDA,
  DefaultBackend = CompositeExplicitAutograd,
  PrivateUse1_PreAutograd = AutogradPrivateUse1,
  PrivateUse2_PreAutograd = AutogradPrivateUse2,
  PrivateUse3_PreAutograd = AutogradPrivateUse3,
  Autocast = AutocastCUDA,
};

static_assert(static_cast<uint16_t>(DispatchKey::EndOfFunctionalityKeys) == 48);
static_assert(static_cast<uint16_t>(DispatchKey::CPU) == 50);
static_assert(static_cast<uint16_t>(DispatchKey::AutogradCPU) == 135);
static_assert(static_cast<uint16_t>(DispatchKey::EndOfRuntimeBackendKeys) == 150);
static_assert(static_cast<uint16_t>(DispatchKey::EndOfAliasKeys) == 156);

constexpr DispatchKey kAutograd = DispatchKey::Autograd;
constexpr uint8_t num_backends = static_cast<uint8_t>(BackendComponent::EndOfBackendKeys);  // 16
constexpr uint8_t num_functionality_keys =
    static_cast<uint8_t>(DispatchKey::EndOfFunctionalityKeys);  // 48, counts Undefined
constexpr uint16_t num_all_dispatch_keys = static_cast<uint16_t>(DispatchKey::EndOfAliasKeys) + 1;

constexpr bool isAliasDispatchKey(DispatchKey k) {
  return k >= DispatchKey::StartOfAliasKeys && k <= DispatchKey::EndOfAliasKeys;
}

constexpr bool isPerBackendFunctionalityKey(DispatchKey k) {
  return k == DispatchKey::Dense || k == DispatchKey::Quantized || k == DispatchKey::Sparse ||
         k == DispatchKey::SparseCsr || k == DispatchKey::NestedTensor ||
         k == DispatchKey::AutogradFunctionality;
}

constexpr uint8_t numPerBackendFunctionalityKeys() { return 6; }

// True for the runtime keys of a per-backend functionality (CPU, AutogradMeta, ...).
constexpr bool isRuntimeBackendKey(DispatchKey k) {
  return k > DispatchKey::EndOfFunctionalityKeys && k <= DispatchKey::EndOfRuntimeBackendKeys;
}

// The functionality a key belongs to: itself for functionality keys, F for <F><Backend>.
constexpr DispatchKey toFunctionalityKey(DispatchKey k) {
  using K = DispatchKey;
  if (k <= K::EndOfFunctionalityKeys) return k;
  if (k <= K::EndOfDenseBackends) return K::Dense;
  if (k <= K::EndOfQuantizedBackends) return K::Quantized;
  if (k <= K::EndOfSparseBackends) return K::Sparse;
  if (k <= K::EndOfSparseCsrBackends) return K::SparseCsr;
  if (k <= K::EndOfNestedTensorBackends) return K::NestedTensor;
  if (k <= K::EndOfAutogradFunctionalityBackends) return K::AutogradFunctionality;
  return K::Undefined;
}

// StartOf<F>Backends for a per-backend functionality F.
constexpr DispatchKey startOfBackends(DispatchKey functionality) {
  using K = DispatchKey;
  switch (functionality) {
    case K::Dense: return K::StartOfDenseBackends;
    case K::Quantized: return K::StartOfQuantizedBackends;
    case K::Sparse: return K::StartOfSparseBackends;
    case K::SparseCsr: return K::StartOfSparseCsrBackends;
    case K::NestedTensor: return K::StartOfNestedTensorBackends;
    case K::AutogradFunctionality: return K::StartOfAutogradFunctionalityBackends;
    default: return K::Undefined;
  }
}

// The backend of a runtime key; InvalidBit for anything else.
constexpr BackendComponent toBackendComponent(DispatchKey k) {
  if (!isRuntimeBackendKey(k)) return BackendComponent::InvalidBit;
  return static_cast<BackendComponent>(static_cast<uint16_t>(k) -
                                       static_cast<uint16_t>(startOfBackends(toFunctionalityKey(k))));
}

// The runtime key of functionality F at backend b (F must be per-backend).
constexpr DispatchKey toRuntimePerBackendFunctionalityKey(DispatchKey functionality,
                                                          BackendComponent b) {
  return static_cast<DispatchKey>(static_cast<uint16_t>(startOfBackends(functionality)) +
                                  static_cast<uint8_t>(b));
}

// c10's toString: "CPU", "AutogradMeta", "QuantizedUndefined" for StartOf*, "UnknownUnknown"
// for 48 and anything past the alias keys.
const char* toString(DispatchKey k);
const char* toString(BackendComponent b);
std::ostream& operator<<(std::ostream&, DispatchKey);
std::ostream& operator<<(std::ostream&, BackendComponent);

// c10's parseDispatchKey: a fixed map of names (nullopt where c10 throws). parseDispatchKeyOrThrow
// raises dscope::Error("could not parse dispatch key: <s>").
std::optional<DispatchKey> parseDispatchKey(std::string_view name);
DispatchKey parseDispatchKeyOrThrow(std::string_view name);

}  // namespace dscope
