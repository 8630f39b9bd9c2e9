// An uncaught "Could not run 'OP' with arguments from the 'KEY' backend" on real PyTorch (Debian's
// libtorch-dev 1.13): a call reaches a key where its operator has no kernel, c10 throws, nothing
// catches it, std::terminate aborts without unwinding and the kernel writes a core;
// dispatch-summary must sign it `missing-kernel OP KEY`, with OP and KEY as the message libstdc++
// prints on stderr ("what():  Could not run ...") names them (tests/torch/torch_missing_test.py).
//   torch_missing plain  missing::cpu_less (a CUDA kernel only) called on a CPU tensor
//   torch_missing below  missing::meta_less (a CPU kernel only) called on a Meta tensor under an
//                        at::AutoDispatchBelowADInplaceOrView guard, still in scope when it aborts
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <cstdio>
#include <cstring>

namespace {

using Unary = at::Tensor(const at::Tensor&);

at::Tensor clone_kernel(const at::Tensor& x) { return x.clone(); }

c10::TypedOperatorHandle<Unary> op(const char* name) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, "").typed<Unary>();
}

}  // namespace

TORCH_LIBRARY(missing, m) {
  m.def("cpu_less(Tensor x) -> Tensor");
  m.def("meta_less(Tensor x) -> Tensor");
}
TORCH_LIBRARY_IMPL(missing, CUDA, m) { m.impl("cpu_less", TORCH_FN(clone_kernel)); }
TORCH_LIBRARY_IMPL(missing, CPU, m) { m.impl("meta_less", TORCH_FN(clone_kernel)); }

int main(int argc, char** argv) {
  const char* scenario = argc > 1 ? argv[1] : "plain";
  std::printf("%s\n", scenario);
  std::fflush(stdout);
  if (std::strcmp(scenario, "below") == 0) {
    const at::Tensor meta = at::empty({4, 4}, at::TensorOptions().device(at::kMeta));
    at::AutoDispatchBelowADInplaceOrView guard;
    return static_cast<int>(op("missing::meta_less").call(meta).numel());
  }
  return static_cast<int>(op("missing::cpu_less").call(at::randn({4, 4})).numel());
}
