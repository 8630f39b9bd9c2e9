// Infinite re-dispatch on real PyTorch (Debian's libtorch-dev 1.13): myops::loop's AutogradCPU
// kernel calls the operator again through the dispatcher (op.call) instead of going on below
// autograd, so it re-enters itself until the stack overflows; the kernel writes a core.
// dispatch-trace on that core must name the operator, the key, the kernel and the fix.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <cstdio>

at::Tensor loop_cpu(const at::Tensor& x) { return x.clone(); }

// The bug: op.call() recomputes the key set from the arguments and the thread's sets, which still
// select AutogradCPU (nothing excluded autograd), so this kernel runs again.
at::Tensor loop_autograd(c10::DispatchKeySet, const at::Tensor& x) {
  static const auto op =
      c10::Dispatcher::singleton().findSchemaOrThrow("myops::loop", "").typed<at::Tensor(const at::Tensor&)>();
  return op.call(x);
}

TORCH_LIBRARY(myops, m) { m.def("loop(Tensor x) -> Tensor"); }
TORCH_LIBRARY_IMPL(myops, CPU, m) { m.impl("loop", TORCH_FN(loop_cpu)); }
TORCH_LIBRARY_IMPL(myops, AutogradCPU, m) { m.impl("loop", TORCH_FN(loop_autograd)); }

int main() {
  const at::Tensor x = at::randn({4}).set_requires_grad(true);
  std::printf("keys: %s\n", c10::toString(x.key_set()).c_str());
  std::fflush(stdout);
  static const auto op =
      c10::Dispatcher::singleton().findSchemaOrThrow("myops::loop", "").typed<at::Tensor(const at::Tensor&)>();
  return static_cast<int>(op.call(x).numel());
}
