// printers_program: values for the GDB pretty-printer and convenience-function tests
// (tests/e2e/gdb_printers.cmake). Built -O0 -g so every local below is readable at the stop.
//
// Scenario (what the tests expect, and why):
//   * x: a 2x3 float32 CPU tensor that requires grad; its key set is the one PyTorch gives a
//     CPU tensor: DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU).
//   * printers::probe: one operator with a CPU kernel (probe_cpu), a fallthrough at Meta and a
//     boxed kernel at PrivateUse1 (probe_boxed); nothing at CUDA (missing).
//   * the last dispatch before stop_here() is mm(x, y) through a typed handle: its record at
//     depth 0 is [call] op=[aten::mm], key=[AutogradCPU].
//   * c = mm(x, y) records autograd history: its grad_fn is an MmBackward0 node.
//   * corrupt_impl (rank 200) and dangling (an OperatorHandle on address 16) must print as one
//     "<error: ...>" each.
//   * then, below autograd (one dispatch per call, straight to CPU): mm twice and mul.Tensor
//     three times, all through one C++ signature, so a breakpoint on that signature's
//     TypedOperatorHandle::dispatch with $dispatch_op_is("aten::mm") stops exactly twice.
#include <cstdio>
#include <string_view>

#include "dscope/Dispatcher.h"
#include "dscope/Library.h"
#include "dscope/LocalDispatchKeySet.h"
#include "dscope/aten/Functions.h"

using namespace dscope;

static Tensor probe_cpu(const Tensor& x) { return x; }
static void probe_boxed(const OperatorHandle&, Stack*) {}

DSCOPE_LIBRARY(printers, m) { m.def("probe(Tensor x) -> Tensor"); }
DSCOPE_LIBRARY_IMPL(printers, CPU, m) { m.impl("probe", &probe_cpu); }
DSCOPE_LIBRARY_IMPL(printers, Meta, m) { m.impl("probe", CppFunction::makeFallthrough()); }
DSCOPE_LIBRARY_IMPL(printers, PrivateUse1, m) { m.impl("probe", CppFunction::makeFromBoxedFunction(&probe_boxed)); }

// The printer tests stop here and look at main's locals (`up`).
[[gnu::noinline]] void stop_here() { asm volatile(""); }

using BinarySig = Tensor(const Tensor&, const Tensor&);

int main(int argc, char** argv) {
  // --below-autograd: only the second part (the breakpoint-condition tests count its dispatches).
  const bool below_autograd_only = argc > 1 && std::string_view(argv[1]) == "--below-autograd";
  TypedOperatorHandle<BinarySig> mm = Dispatcher::singleton().findSchemaOrThrow("aten::mm", "").typed<BinarySig>();

  if (!below_autograd_only) {
    Tensor x = at::randn({2, 3}, TensorOptions().requires_grad(true));
    Tensor y = at::randn({3, 4});
    Tensor undefined;
    DispatchKeySet ks = x.key_set();
    DispatchKey key = DispatchKey::AutogradCPU;
    BackendComponent backend = BackendComponent::CPUBit;

    OperatorHandle probe = Dispatcher::singleton().findSchemaOrThrow("printers::probe", "");
    const impl::OperatorEntry& probe_entry = probe.entry();
    OperatorName add_name = Dispatcher::singleton().findSchemaOrThrow("aten::add", "Tensor").operator_name();
    const KernelFunction& cpu_kernel = probe_entry.lookup(DispatchKeySet(DispatchKey::CPU)).kernel;
    const KernelFunction& meta_kernel = probe_entry.lookup(DispatchKeySet(DispatchKey::Meta)).kernel;
    const KernelFunction& boxed_kernel = probe_entry.lookup(DispatchKeySet(DispatchKey::PrivateUse1)).kernel;
    const KernelFunction& cuda_kernel = probe_entry.lookup(DispatchKeySet(DispatchKey::CUDA)).kernel;
    const impl::PODLocalDispatchKeySet& tls = impl::raw_local_dispatch_key_set;
    // Values a printer must refuse in one line: a rank past TensorImpl::kMaxDim, a handle whose
    // entry pointer points nowhere.
    TensorImpl corrupt_impl;
    corrupt_impl.dim = 200;
    OperatorHandle dangling(reinterpret_cast<impl::OperatorEntry*>(16));

    Tensor c = mm.call(x, y);  // the last dispatch before the stop
    std::printf("c: %s keys=%s\n", c.toString().c_str(), toString(c.key_set()).c_str());
    stop_here();
    (void)undefined, (void)ks, (void)key, (void)backend, (void)add_name, (void)cpu_kernel, (void)meta_kernel,
        (void)boxed_kernel, (void)cuda_kernel, (void)tls, (void)dangling;
  }

  {
    AutoDispatchBelowADInplaceOrView below_autograd;
    TypedOperatorHandle<BinarySig> mul =
        Dispatcher::singleton().findSchemaOrThrow("aten::mul", "Tensor").typed<BinarySig>();
    Tensor p = at::randn({2, 2});
    Tensor q = mm.call(p, p);
    q = mul.call(q, p);
    q = mul.call(q, p);
    q = mm.call(q, p);
    q = mul.call(q, p);
    std::printf("below autograd: %s\n", q.toString().c_str());
  }
  return 0;
}
