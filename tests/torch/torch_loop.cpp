// Infinite re-dispatch on real PyTorch (Debian's libtorch-dev 1.13), three ways; each overflows
// the stack and leaves a kernel core, and dispatch-trace must name the loop's operator(s), key,
// kernel(s) and the fix:
//   torch_loop self    myops::loop's AutogradCPU kernel calls the operator again (op.call)
//   torch_loop mutual  myops::ping's AutogradCPU kernel calls myops::pong, whose kernel calls ping
//   torch_loop mm      an AutogradCPU override of aten::mm that calls at::mm
//   torch_loop matmul  a CPU override of aten::mm that calls at::matmul, whose own kernel (inside
//                      libtorch, no symbol) calls aten::mm again
//   torch_loop alias   myops::aloop's kernel, registered at the Autograd alias key (as PyTorch's
//                      custom-op tutorial does), calls the operator again
//   torch_loop shared  on a worker thread, myops::tick's and myops::tock's AutogradCPU kernels,
//                      plain function pointers of one C++ signature (both run through one runtime-
//                      functor trampoline), call each other
//   torch_loop boxed   myops::bloop's AutogradCPU kernel, a boxed function, calls op.callBoxed(stack)
//                      again; at -O2 it is tail-called away and only Dispatcher::callBoxed's frames remain
// The kernels call through the dispatcher instead of going on below autograd: the call recomputes
// the key set, which still selects AutogradCPU (nothing excluded autograd).
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/library.h>

#include <cstdio>
#include <cstring>
#include <thread>

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

at::Tensor aloop_autograd(c10::DispatchKeySet, const at::Tensor& x) {
  static const auto op = myop("myops::aloop");
  return op.call(x);
}

at::Tensor tick_autograd(c10::DispatchKeySet, const at::Tensor& x) {
  static const auto op = myop("myops::tock");
  return op.call(x);
}

at::Tensor tock_autograd(c10::DispatchKeySet, const at::Tensor& x) {
  static const auto op = myop("myops::tick");
  return op.call(x);
}

void bloop_boxed(const c10::OperatorHandle& op, c10::DispatchKeySet, torch::jit::Stack* stack) { op.callBoxed(stack); }

at::Tensor mm_autograd(c10::DispatchKeySet, const at::Tensor& a, const at::Tensor& b) { return at::mm(a, b); }

at::Tensor mm_cpu(const at::Tensor& a, const at::Tensor& b) { return at::matmul(a, b); }

TORCH_LIBRARY(myops, m) {
  m.def("loop(Tensor x) -> Tensor");
  m.def("ping(Tensor x) -> Tensor");
  m.def("pong(Tensor x) -> Tensor");
  m.def("aloop(Tensor x) -> Tensor");
  m.def("tick(Tensor x) -> Tensor");
  m.def("tock(Tensor x) -> Tensor");
  m.def("bloop(Tensor x) -> Tensor");
}
TORCH_LIBRARY_IMPL(myops, CPU, m) {
  m.impl("loop", TORCH_FN(loop_cpu));
  m.impl("ping", TORCH_FN(loop_cpu));
  m.impl("pong", TORCH_FN(loop_cpu));
  m.impl("aloop", TORCH_FN(loop_cpu));
  m.impl("tick", TORCH_FN(loop_cpu));
  m.impl("tock", TORCH_FN(loop_cpu));
  m.impl("bloop", TORCH_FN(loop_cpu));
}
TORCH_LIBRARY_IMPL(myops, AutogradCPU, m) {
  m.impl("loop", TORCH_FN(loop_autograd));
  m.impl("ping", TORCH_FN(ping_autograd));
  m.impl("pong", TORCH_FN(pong_autograd));
  // Plain function pointers (no TORCH_FN): runtime functors, one trampoline for both.
  m.impl("tick", &tick_autograd);
  m.impl("tock", &tock_autograd);
  m.impl("bloop", torch::CppFunction::makeFromBoxedFunction<&bloop_boxed>());
}
TORCH_LIBRARY_IMPL(myops, Autograd, m) {
  m.impl("aloop", TORCH_FN(aloop_autograd));
}

int main(int argc, char** argv) {
  const char* scenario = argc > 1 ? argv[1] : "self";
  const at::Tensor x = at::randn({4, 4}).set_requires_grad(true);
  // The thread's sets, as dispatch-trace's TLS line must print them (no kernel changes them).
  const c10::impl::LocalDispatchKeySet tls = c10::impl::tls_local_dispatch_key_set();
  std::printf("%s: keys %s\n", scenario, c10::toString(x.key_set()).c_str());
  std::printf("TLS: included %s, excluded %s\n", c10::toString(tls.included_).c_str(), c10::toString(tls.excluded_).c_str());
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
  if (std::strcmp(scenario, "shared") == 0) {
    int64_t numel = 0;
    std::thread worker([&] { numel = myop("myops::tick").call(x).numel(); });
    worker.join();
    return static_cast<int>(numel);
  }
  if (std::strcmp(scenario, "boxed") == 0) {
    torch::jit::Stack stack{x};
    c10::Dispatcher::singleton().findSchemaOrThrow("myops::bloop", "").callBoxed(stack);
    return static_cast<int>(stack.size());
  }
  const auto op = myop(std::strcmp(scenario, "mutual") == 0 ? "myops::ping"
                       : std::strcmp(scenario, "alias") == 0 ? "myops::aloop"
                                                             : "myops::loop");
  return static_cast<int>(op.call(x).numel());
}
