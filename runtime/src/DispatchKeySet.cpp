#include "dscope/DispatchKeySet.h"

#include <ostream>

namespace dscope {

std::string toString(DispatchKeySet ks) {
  std::string out = "DispatchKeySet(";
  bool first = true;
  for (DispatchKey k : ks) {
    if (!first) out += ", ";
    out += toString(k);
    first = false;
  }
  return out + ")";
}

std::ostream& operator<<(std::ostream& os, DispatchKeySet ks) { return os << toString(ks); }

DispatchKeySet getRuntimeDispatchKeySet(DispatchKey t) {
  switch (t) {
    case DispatchKey::Autograd:
      return autograd_dispatch_keyset | DispatchKeySet(DispatchKeySet::RAW, full_backend_mask);
    case DispatchKey::CompositeImplicitAutograd: return math_dispatch_keyset;
    case DispatchKey::CompositeImplicitAutogradNestedTensor: return nested_dispatch_keyset;
    case DispatchKey::CompositeExplicitAutograd: return backend_dispatch_keyset;
    case DispatchKey::CompositeExplicitAutogradNonFunctional: return non_functional_backend_dispatch_keyset;
    case DispatchKey::FuncTorchBatchedDecomposition: return DispatchKeySet(DispatchKey::FuncTorchBatched);
    default: return DispatchKeySet(t);
  }
}

bool isIncludedInAlias(DispatchKey k, DispatchKey alias) {
  return k != DispatchKey::Undefined && runtimeDispatchKeySetHas(alias, k);
}

bool runtimeDispatchKeySetHas(DispatchKey t, DispatchKey k) {
  switch (t) {
    case DispatchKey::Autograd: return autograd_dispatch_keyset.has(toFunctionalityKey(k));
    case DispatchKey::CompositeImplicitAutograd: return math_dispatch_keyset.has(k);
    case DispatchKey::CompositeImplicitAutogradNestedTensor: return nested_dispatch_keyset.has(k);
    case DispatchKey::CompositeExplicitAutograd:
      return k != DispatchKey::NestedTensor && backend_dispatch_keyset.has(k);
    case DispatchKey::CompositeExplicitAutogradNonFunctional:
      return k != DispatchKey::NestedTensor && non_functional_backend_dispatch_keyset.has(k);
    case DispatchKey::FuncTorchBatchedDecomposition:
      return DispatchKeySet(DispatchKey::FuncTorchBatched).has(k);
    default: return t == k;
  }
}

DispatchKeySet getBackendKeySetFromAutograd(DispatchKey t) {
  using K = DispatchKey;
  switch (t) {
    // AutogradHIP, AutogradVE and AutogradMTIA deliberately map to nothing (as in c10 2.11).
    case K::AutogradHIP: case K::AutogradVE: case K::AutogradMTIA: return {};
    case K::AutogradNestedTensor:
      return DispatchKeySet(K::NestedTensor) | DispatchKeySet(DispatchKeySet::RAW, full_backend_mask);
    case K::AutogradOther: return autogradother_backends;
    default:
      if (toFunctionalityKey(t) == K::AutogradFunctionality && toBackendComponent(t) != BackendComponent::InvalidBit)
        return DispatchKeySet(toRuntimePerBackendFunctionalityKey(K::Dense, toBackendComponent(t)));
      return {};
  }
}

bool isBackendDispatchKey(DispatchKey t) {
  return t != DispatchKey::Undefined && !isAliasDispatchKey(t) && t != DispatchKey::NestedTensor &&
         backend_dispatch_keyset.has(t);
}

DispatchKeySet getAutogradRelatedKeySetFromBackend(BackendComponent b) {
  auto inplace_or_view = DispatchKeySet(DispatchKey::ADInplaceOrView);
  switch (b) {
    case BackendComponent::InvalidBit:
    case BackendComponent::HIPBit:
    case BackendComponent::VEBit:
      return inplace_or_view | DispatchKeySet(DispatchKey::AutogradOther);
    default:
      return inplace_or_view |
             DispatchKeySet(toRuntimePerBackendFunctionalityKey(DispatchKey::AutogradFunctionality, b));
  }
}

DispatchKey getAutogradKeyFromBackend(BackendComponent b) {
  return getAutogradRelatedKeySetFromBackend(b).highestPriorityTypeId();
}

DispatchKeySet getAutocastRelatedKeySetFromBackend(BackendComponent b) {
  using B = BackendComponent;
  using K = DispatchKey;
  switch (b) {
    case B::CPUBit: return DispatchKeySet(K::AutocastCPU);
    case B::MTIABit: return DispatchKeySet(K::AutocastMTIA);
    case B::MAIABit: return DispatchKeySet(K::AutocastMAIA);
    case B::XPUBit: return DispatchKeySet(K::AutocastXPU);
    case B::IPUBit: return DispatchKeySet(K::AutocastIPU);
    case B::HPUBit: return DispatchKeySet(K::AutocastHPU);
    case B::CUDABit: return DispatchKeySet(K::AutocastCUDA);
    case B::XLABit: return DispatchKeySet(K::AutocastXLA);
    case B::PrivateUse1Bit: return DispatchKeySet(K::AutocastPrivateUse1);
    case B::MPSBit: return DispatchKeySet(K::AutocastMPS);
    default: return {};
  }
}

}  // namespace dscope
