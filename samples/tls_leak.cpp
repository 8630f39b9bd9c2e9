// tls_leak: a thread-local exclude set changed by hand and never restored.
//
// A helper excludes AutogradCPU "for a moment" with tls_set_dispatch_key_excluded and forgets
// to restore it (an RAII ExcludeDispatchKeyGuard would have). Every later dispatch on this
// thread skips autograd silently: results have no grad_fn and backward() cannot reach a.
// Excluding AutogradCPU clears the AutogradFunctionality bit, so *every* Autograd<backend>
// is skipped, and the CPU backend bit stays behind in the raw TLS word (as in c10).
//
// What you should see: "before: grad_fn=MmBackward0", "after: grad_fn=(none)", and the TLS
// exclude set printed as DispatchKeySet(AutogradCPU, AutocastCPU, ...) = 0x3ff2000000001
// (the TLS word itself holds it XOR the default: 0x2000000001). With --core the process aborts right after the wrong dispatch, so a
// debugger can show the thread's TLS (`keyset --tls`) in the core.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "dscope/LocalDispatchKeySet.h"
#include "dscope/aten/Functions.h"
#include "dscope/autograd/Autograd.h"
#include "sample_util.h"

using namespace dscope;

namespace {

// The bug: a manual exclude with no matching restore.
void fast_path_without_autograd() { impl::tls_set_dispatch_key_excluded(DispatchKey::AutogradCPU, true); }

std::string gradFnName(const Tensor& t) { return t.grad_fn() ? t.grad_fn()->name() : "(none)"; }

}  // namespace

int main(int argc, char** argv) {
  sample::start(argc, argv);
  Tensor a = at::randn({2, 2}, TensorOptions().requires_grad(true));
  Tensor before = at::mm(a, a);
  std::printf("before: grad_fn=%s\n", gradFnName(before).c_str());

  fast_path_without_autograd();
  Tensor after = at::mm(a, a);
  std::printf("after: grad_fn=%s (autograd was skipped)\n", gradFnName(after).c_str());
  std::printf("tls exclude set: %s = 0x%llx\n", toString(tls_local_exclude_set()).c_str(),
              static_cast<unsigned long long>(tls_local_exclude_set().raw_repr()));
  sample::sample_checkpoint("after the leaked exclude");
  if (sample::hasFlag(argc, argv, "--core")) std::abort();
  return 0;
}
