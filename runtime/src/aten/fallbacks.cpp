// The default backend fallbacks, mirroring PyTorch 2.11's for the subsystems dscope has:
// fallthrough where PyTorch falls through, the boxed autograd fallback at each Autograd<backend>
// key PyTorch covers (one block per key, as in VariableFallbackKernel.cpp), and the Meta fallback.
#include <vector>

#include "dscope/Error.h"
#include "dscope/Library.h"
#include "dscope/LocalDispatchKeySet.h"
#include "dscope/autograd/Autograd.h"

namespace dscope {
namespace {

// ---------------------------------------------------------------- fallthrough keys

DSCOPE_LIBRARY_IMPL(_, BackendSelect, m) { m.fallback(CppFunction::makeFallthrough()); }
DSCOPE_LIBRARY_IMPL(_, ADInplaceOrView, m) { m.fallback(CppFunction::makeFallthrough()); }
DSCOPE_LIBRARY_IMPL(_, AutocastCPU, m) { m.fallback(CppFunction::makeFallthrough()); }
DSCOPE_LIBRARY_IMPL(_, AutocastMTIA, m) { m.fallback(CppFunction::makeFallthrough()); }
DSCOPE_LIBRARY_IMPL(_, AutocastMAIA, m) { m.fallback(CppFunction::makeFallthrough()); }
DSCOPE_LIBRARY_IMPL(_, AutocastXPU, m) { m.fallback(CppFunction::makeFallthrough()); }
DSCOPE_LIBRARY_IMPL(_, AutocastMPS, m) { m.fallback(CppFunction::makeFallthrough()); }
DSCOPE_LIBRARY_IMPL(_, AutocastCUDA, m) { m.fallback(CppFunction::makeFallthrough()); }

// ---------------------------------------------------------------- autograd fallback

// Calls f(tensor) for each tensor among the n values at the top of the stack (lists included).
template <class F>
void forEachTensor(const Stack& stack, size_t n, F&& f) {
  for (size_t i = stack.size() - n; i < stack.size(); ++i) {
    if (stack[i].isTensor()) f(stack[i].toTensor());
    else if (stack[i].isTensorList())
      for (const auto& t : stack[i].toTensorList()) f(t);
  }
}

// PyTorch's VariableFallbackKernel for operators without an autograd kernel: run the op below
// autograd; if an input requires grad, the outputs get a NotImplemented grad_fn whose backward
// reports the missing derivative.
void autogradFallback(const OperatorHandle& op, DispatchKeySet ks, Stack* stack) {
  const auto& schema = op.schema();
  std::vector<Tensor> inputs;
  forEachTensor(*stack, schema.arguments.size(), [&](const Tensor& t) { inputs.push_back(t); });
  bool any_requires_grad = false;
  for (const auto& t : inputs) any_requires_grad |= autograd::compute_requires_grad(t);

  std::shared_ptr<autograd::NotImplemented> grad_fn;
  if (any_requires_grad) {
    grad_fn = std::make_shared<autograd::NotImplemented>(op.operator_name().full());
    grad_fn->set_next_edges(autograd::collect_next_edges(inputs));
  }
  {
    AutoDispatchBelowADInplaceOrView guard;
    op.redispatchBoxed(ks & after_autograd_keyset, stack);
  }
  if (!grad_fn) return;
  forEachTensor(*stack, schema.returns.size(), [&](const Tensor& out) {
    if (!out.defined() || !isFloatingType(out.dtype())) return;
    autograd::check_inplace(out);  // an output that is a leaf requiring grad was modified in place
    autograd::set_history(out, grad_fn);
  });
}

CppFunction autogradFallbackFunction() { return CppFunction::makeFromBoxedFunction(&autogradFallback); }

DSCOPE_LIBRARY_IMPL(_, AutogradOther, m) { m.fallback(autogradFallbackFunction()); }
DSCOPE_LIBRARY_IMPL(_, AutogradCPU, m) { m.fallback(autogradFallbackFunction()); }
DSCOPE_LIBRARY_IMPL(_, AutogradCUDA, m) { m.fallback(autogradFallbackFunction()); }
DSCOPE_LIBRARY_IMPL(_, AutogradXLA, m) { m.fallback(autogradFallbackFunction()); }
DSCOPE_LIBRARY_IMPL(_, AutogradMPS, m) { m.fallback(autogradFallbackFunction()); }
DSCOPE_LIBRARY_IMPL(_, AutogradXPU, m) { m.fallback(autogradFallbackFunction()); }
DSCOPE_LIBRARY_IMPL(_, AutogradHPU, m) { m.fallback(autogradFallbackFunction()); }
DSCOPE_LIBRARY_IMPL(_, AutogradLazy, m) { m.fallback(autogradFallbackFunction()); }
DSCOPE_LIBRARY_IMPL(_, AutogradMTIA, m) { m.fallback(autogradFallbackFunction()); }
DSCOPE_LIBRARY_IMPL(_, AutogradMAIA, m) { m.fallback(autogradFallbackFunction()); }
DSCOPE_LIBRARY_IMPL(_, AutogradPrivateUse1, m) { m.fallback(autogradFallbackFunction()); }
DSCOPE_LIBRARY_IMPL(_, AutogradMeta, m) { m.fallback(autogradFallbackFunction()); }

// ---------------------------------------------------------------- Meta fallback

void metaFallback(const OperatorHandle& op, DispatchKeySet, Stack*) {
  throw NotImplementedError(
      op.operator_name().full() +
      ": attempted to run this operator with Meta tensors, but there was no fake impl or Meta kernel registered. You "
      "may have run into this message while using an operator with PT2 compilation APIs (torch.compile/torch.export); "
      "in order to use this operator with those APIs you'll need to add a fake impl. Please see the following for "
      "next steps:  https://pytorch.org/tutorials/advanced/custom_ops.html");
}

DSCOPE_LIBRARY_IMPL(_, Meta, m) { m.fallback(CppFunction::makeFromBoxedFunction(&metaFallback)); }

}  // namespace
}  // namespace dscope
