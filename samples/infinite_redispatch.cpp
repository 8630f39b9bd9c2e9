// infinite_redispatch: the classic custom-op bug that ends in a stack overflow.
//
// myops::my_add's AutogradCPU kernel should run the op *below* autograd:
//     op.redispatch(ks & after_autograd_keyset, a, b)
// but calls op.call(a, b) instead. call() recomputes the key set from the arguments, which
// still carry AutogradCPU, so the kernel re-enters itself until the 8 MiB stack overflows.
//
// What you should see:
//   * without flags: SIGSEGV after ~tens of thousands of nested dispatches; the crash handler
//     prints "dscope: fatal signal SIGSEGV at dispatch depth N: myops::my_add at AutogradCPU
//     repeats (cycle of 1 dispatch(es) ...)", the first records, the native stack; a core is
//     written (ulimit -c unlimited). `bt` on that core takes ages; `dispatch-trace` does not.
//   * DSCOPE_MAX_DISPATCH_DEPTH=1000: a dscope::Error naming the loop instead of the overflow.
//   * --fixed: the correct kernel; prints the result and exits 0.
#include <cstdio>

#include "dscope/Library.h"
#include "dscope/aten/Functions.h"
#include "sample_util.h"

using namespace dscope;

namespace {

const TypedOperatorHandle<Tensor(const Tensor&, const Tensor&)>& myAdd() {
  static auto op = Dispatcher::singleton().findSchemaOrThrow("myops::my_add", "").typed<Tensor(const Tensor&, const Tensor&)>();
  return op;
}

bool fixed = false;

Tensor my_add_cpu(const Tensor& a, const Tensor& b) { return at::add(a, b); }

Tensor my_add_autograd(DispatchKeySet ks, const Tensor& a, const Tensor& b) {
  if (fixed) {
    AutoDispatchBelowADInplaceOrView guard;
    return myAdd().redispatch(ks & after_autograd_keyset, a, b);  // correct: continue below autograd
  }
  return myAdd().call(a, b);  // BUG: dispatches to AutogradCPU again, forever
}

DSCOPE_LIBRARY(myops, m) { m.def("my_add(Tensor a, Tensor b) -> Tensor"); }
DSCOPE_LIBRARY_IMPL(myops, CPU, m) { m.impl("my_add", &my_add_cpu); }
DSCOPE_LIBRARY_IMPL(myops, AutogradCPU, m) { m.impl("my_add", &my_add_autograd); }

}  // namespace

int main(int argc, char** argv) {
  sample::start(argc, argv);
  fixed = sample::hasFlag(argc, argv, "--fixed");
  Tensor a = at::ones({2, 2}, TensorOptions().requires_grad(true));
  Tensor b = at::ones({2, 2});
  std::printf("calling myops::my_add (%s kernel)\n", fixed ? "fixed" : "buggy");
  try {
    Tensor c = myAdd().call(a, b);
    std::printf("my_add = %s, c[0][0] = %.1f\n", c.toString().c_str(), at::sum(c).item() / 4);
  } catch (const Error& e) {
    std::printf("dscope::Error: %s\n", e.what());
    return 2;
  }
  return 0;
}
