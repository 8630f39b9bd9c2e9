// Infinite re-dispatch on real PyTorch (Debian's libtorch-dev 1.13), three ways; each overflows
// the stack and leaves a kernel core, and dispatch-trace must name the loop's operator(s), key,
// kernel(s) and the fix:
//   torch_loop self    myops::loop's AutogradCPU kernel calls the operator again (op.call)
//   torch_loop mutual  myops::ping's AutogradCPU kernel calls myops::pong, whose kernel calls ping
//   torch_loop mm      an AutogradCPU override of aten::mm that calls at::mm
//   torch_loop matmul  a CPU override of aten::mm that calls at::matmul, whose own kernel (inside
//                      libtorch, no symbol) calls aten::mm again
// The kernels call through the dispatcher instead of going on below autograd: the call recomputes
// the key set, which still selects AutogradCPU (nothing excluded autograd).
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <cstdio>
#include <cstring>

namespace {

using Unary = at::Tensor(const at::Tensor&);

c10::TypedOperatorHandle<Unary> myop(const char* name) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, "").typed<Unary>();
}

}  // namespace

at::Tensor loop_cpu(const at::Tensor& x) { return x.clone(); }

at::Tensor loop_autograd(c10::DispatchKeySet, const at::Tensor& x) {
  static const auto op = myop("myops::loop");
  return op.call(x);
}

at::Tensor ping_autograd(c10::DispatchKeySet, const at::Tensor& x) {
  static const auto op = myop("myops::pong");
  return op.call(x);
}

at::Tensor pong_autograd(c10::DispatchKeySet, const at::Tensor& x) {
  static const auto op = myop("myops::ping");
  return op.call(x);
}

at::Tensor mm_autograd(c10::DispatchKeySet, const at::Tensor& a, const at::Tensor& b) { return at::mm(a, b); }

at::Tensor mm_cpu(const at::Tensor& a, const at::Tensor& b) { return at::matmul(a, b); }

TORCH_LIBRARY(myops, m) {
  m.def("loop(Tensor x) -> Tensor");
  m.def("ping(Tensor x) -> Tensor");
  m.def("pong(Tensor x) -> Tensor");
}
TORCH_LIBRARY_IMPL(myops, CPU, m) {
  m.impl("loop", TORCH_FN(loop_cpu));
  m.impl("ping", TORCH_FN(loop_cpu));
  m.impl("pong", TORCH_FN(loop_cpu));
}
TORCH_LIBRARY_IMPL(myops, AutogradCPU, m) {
  m.impl("loop", TORCH_FN(loop_autograd));
  m.impl("ping", TORCH_FN(ping_autograd));
  m.impl("pong", TORCH_FN(pong_autograd));
}

int main(int argc, char** argv) {
  const char* scenario = argc > 1 ? argv[1] : "self";
  const at::Tensor x = at::randn({4, 4}).set_requires_grad(true);
  std::printf("%s: keys %s\n", scenario, c10::toString(x.key_set()).c_str());
  std::fflush(stdout);
  if (std::strcmp(scenario, "matmul") == 0) {
    static auto library =
        std::make_unique<torch::Library>(torch::Library::IMPL, "aten", c10::DispatchKey::CPU, __FILE__, __LINE__);
    library->impl("mm", TORCH_FN(mm_cpu));
    const at::Tensor plain = at::randn({4, 4});
    return static_cast<int>(at::mm(plain, plain).numel());
  }
  if (std::strcmp(scenario, "mm") == 0) {
    static auto library =
        std::make_unique<torch::Library>(torch::Library::IMPL, "aten", c10::DispatchKey::AutogradCPU, __FILE__, __LINE__);
    library->impl("mm", TORCH_FN(mm_autograd));
    return static_cast<int>(at::mm(x, x).numel());
  }
  const auto op = myop(std::strcmp(scenario, "mutual") == 0 ? "myops::ping" : "myops::loop");
  return static_cast<int>(op.call(x).numel());
}
