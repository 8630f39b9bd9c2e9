// dap_program: the IDE scenario of the DAP test (tests/e2e/dap_tests.cmake). Built -O0 -g so the
// kernel's arguments are readable at its first line.
//
// dap::probe has an AutogradCPU kernel that takes the dispatch key set (`DispatchKeySet ks`) and
// redispatches below autograd, like PyTorch's VariableType kernels. main calls it on a 2x3
// float32 CPU tensor that requires grad, so the kernel runs at AutogradCPU with
// ks = DispatchKeySet(CPU, AutogradCPU): the tensor's keys (CPU, ADInplaceOrView, AutogradCPU,
// AutocastCPU) with the default TLS (autocast excluded) and without the keys whose kernels are
// fallthroughs for this operator (ADInplaceOrView; BackendSelect from the TLS include set).
#include <cstdio>

#include "dscope/Library.h"
#include "dscope/aten/Functions.h"

using namespace dscope;

namespace {

using Unary = Tensor(const Tensor&);

Tensor probe_cpu(const Tensor& x) { return x; }

Tensor probe_autograd(DispatchKeySet ks, const Tensor& x) {
  static const auto op = Dispatcher::singleton().findSchemaOrThrow("dap::probe", "").typed<Unary>();
  AutoDispatchBelowADInplaceOrView below;
  return op.redispatch(ks & after_autograd_keyset, x);  // the DAP test stops on this line
}

DSCOPE_LIBRARY(dap, m) { m.def("probe(Tensor x) -> Tensor"); }
DSCOPE_LIBRARY_IMPL(dap, CPU, m) { m.impl("probe", &probe_cpu); }
DSCOPE_LIBRARY_IMPL(dap, AutogradCPU, m) { m.impl("probe", &probe_autograd); }

}  // namespace

int main() {
  Tensor x = at::randn({2, 3}, TensorOptions().requires_grad(true));
  Tensor y = Dispatcher::singleton().findSchemaOrThrow("dap::probe", "").typed<Unary>().call(x);
  std::printf("dap::probe -> %s\n", y.toString().c_str());
  return 0;
}
