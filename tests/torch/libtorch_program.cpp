// A C++ libtorch process for DispatchScope's tests, and its own account of its dispatcher: the
// C++ counterpart of oracle_program.py, built against Debian's libtorch-dev (PyTorch 1.13).
//
//   libtorch_program ORACLE_FILE
//
// Defines dscope_cpp::twice and dscope_cpp::combine (a CPU kernel from a function pointer, one
// from a runtime functor, an AutogradCPU kernel that redispatches below autograd, and a per-op
// fallthrough for AutocastCPU), runs them and aten::mm / aten::add on tensors that require grad,
// holds an exclude guard for AutogradCPU, writes what the dispatcher says about every operator,
// a few tensors and the thread's TLS sets to ORACLE_FILE (oracle_program.py's format), then
// aborts with the guard still held so the kernel writes a core (tests/torch/libtorch_core_test.py).
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/library.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace {

at::Tensor twice_cpu(const at::Tensor& x) { return x * 2; }

// Autograd for twice: no graph of its own, it only goes on below autograd (as a kernel must;
// calling the operator again from here would come back to this kernel forever).
at::Tensor twice_autograd(c10::DispatchKeySet ks, const at::Tensor& x) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("dscope_cpp::twice", "")
                             .typed<at::Tensor(const at::Tensor&)>();
  at::AutoDispatchBelowADInplaceOrView guard;
  return op.redispatch(ks & c10::after_ADInplaceOrView_keyset, x);
}

std::string hex(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(p)));
  return buf;
}

std::string fullName(const c10::OperatorName& name) {
  return name.overload_name.empty() ? name.name : name.name + "." + name.overload_name;
}

}  // namespace

// The frame the core stops in, with a tensor and a key set as parameters: what the value printers
// show for c10's and ATen's types where the user's code has DWARF (both debuggers see a
// non-inlined, unoptimized function's parameters; main's variables may sit in a cold part LLDB
// cannot read, and an optimized reference parameter is a DW_OP_entry_value LLDB cannot evaluate).
#if defined(__clang__)
#define DSCOPE_UNOPTIMIZED __attribute__((noinline, optnone))
#else
#define DSCOPE_UNOPTIMIZED __attribute__((noinline, optimize("O0")))
#endif
DSCOPE_UNOPTIMIZED void abortHolding(const at::Tensor& tensor, c10::DispatchKeySet keys) {
  asm volatile("" : : "r"(&tensor), "r"(&keys) : "memory");
  std::abort();
}

TORCH_LIBRARY(dscope_cpp, m) {
  m.def("twice(Tensor x) -> Tensor");
  m.def("combine(Tensor a, Tensor b, float alpha=1.0) -> Tensor");
}

TORCH_LIBRARY_IMPL(dscope_cpp, CPU, m) {
  m.impl("twice", TORCH_FN(twice_cpu));
  const double bias = 0.0;  // a capture: the kernel is a runtime functor object, not a function
  m.impl("combine", [bias](const at::Tensor& a, const at::Tensor& b, double alpha) { return a + b * alpha + bias; });
}

TORCH_LIBRARY_IMPL(dscope_cpp, AutogradCPU, m) {
  m.impl("twice", TORCH_FN(twice_autograd));
}

TORCH_LIBRARY_IMPL(dscope_cpp, AutocastCPU, m) {
  m.impl("combine", torch::CppFunction::makeFallthrough());
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s ORACLE_FILE\n", argv[0]);
    return 2;
  }
  auto& dispatcher = c10::Dispatcher::singleton();
  const auto twice = dispatcher.findSchemaOrThrow("dscope_cpp::twice", "").typed<at::Tensor(const at::Tensor&)>();
  const auto combine = dispatcher.findSchemaOrThrow("dscope_cpp::combine", "")
                           .typed<at::Tensor(const at::Tensor&, const at::Tensor&, double)>();

  at::Tensor a = at::randn({3, 3});
  a.set_requires_grad(true);
  at::Tensor b = at::randn({3, 3});
  b.set_requires_grad(true);
  at::Tensor product = at::mm(a, b);
  at::Tensor total = at::add(a, b);
  at::Tensor plain = at::ones({2});
  at::Tensor meta = at::empty({2, 2}, at::TensorOptions().device(at::kMeta));
  at::Tensor doubled = twice.call(a);
  at::Tensor combined = combine.call(plain, plain, 0.5);

  c10::impl::ExcludeDispatchKeyGuard guard(c10::DispatchKey::AutogradCPU);

  std::ofstream out(argv[1]);
  const std::pair<const char*, const at::Tensor*> tensors[] = {
      {"a", &a},       {"product", &product}, {"total", &total},       {"plain", &plain},
      {"meta", &meta}, {"doubled", &doubled}, {"combined", &combined}};
  for (const auto& [name, t] : tensors) {
    const std::string impl = hex(t->unsafeGetTensorImpl());
    out << "tensor " << name << " id=" << impl << " impl=" << impl << " " << c10::toString(t->key_set()) << "\n";
  }
  const c10::impl::LocalDispatchKeySet tls = c10::impl::tls_local_dispatch_key_set();
  out << "tls included " << c10::toString(tls.included_) << "\n";
  out << "tls excluded " << c10::toString(tls.excluded_) << "\n";

  std::vector<std::pair<std::string, c10::OperatorName>> ops;
  for (auto& name : dispatcher.getRegistrationsForDispatchKey(c10::nullopt)) {
    std::string full = fullName(name);
    ops.emplace_back(std::move(full), std::move(name));
  }
  // Byte order, as Python's sorted() orders these ASCII names.
  std::sort(ops.begin(), ops.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  out << "operators " << ops.size() << "\n";
  for (const auto& [full, name] : ops) {
    const auto op = dispatcher.findOp(name);
    out << "== registered " << full << "\n" << (op ? op->dumpState() : std::string()) << "== computed " << full
        << "\n" << (op ? op->dumpComputedTable() : std::string());
  }
  out.close();
  if (!out) {
    std::fprintf(stderr, "cannot write %s\n", argv[1]);
    return 1;
  }
  std::printf("wrote %s: %zu operators; aborting with AutogradCPU excluded\n", argv[1], ops.size());
  std::fflush(stdout);
  abortHolding(a, a.key_set());  // the guard is still held: the core's TLS shows AutogradCPU excluded
}
