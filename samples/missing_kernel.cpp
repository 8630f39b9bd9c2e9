// missing_kernel: a custom op with only a CPU kernel, called on a tensor of another backend.
//
// What you should see:
//   * default: the op is called on a Meta tensor. PyTorch 2.11 has a Meta backend fallback, so
//     the error is its real text: "myops::only_cpu: attempted to run this operator with Meta
//     tensors, but there was no fake impl or Meta kernel registered. ..." The error is not
//     caught: the process aborts (SIGABRT, core), with the dispatch still on the records:
//     [call] op=[myops::only_cpu], key=[Meta].
//   * --privateuse1: the same call on a PrivateUse1 tensor reaches a slot with no kernel and
//     no fallback: c10's "Could not run 'myops::only_cpu' with arguments from the
//     'PrivateUse1' backend. ... 'myops::only_cpu' is only available for these backends:
//     [CPU, Meta, BackendSelect, ...]" followed by the computed dispatch table.
//   * --catch: print the message and exit 1 instead of aborting.
#include <cstdio>
#include <cstdlib>

#include "dscope/Library.h"
#include "dscope/aten/Functions.h"
#include "sample_util.h"

using namespace dscope;

namespace {

Tensor only_cpu_kernel(const Tensor& x) { return at::relu(x); }

DSCOPE_LIBRARY(myops, m) { m.def("only_cpu(Tensor x) -> Tensor"); }
DSCOPE_LIBRARY_IMPL(myops, CPU, m) { m.impl("only_cpu", &only_cpu_kernel); }

// A PrivateUse1 device whose memory is plain host memory (enough to build a tensor there).
struct HostAllocator final : Allocator {
  void* allocate(size_t n) override { return std::malloc(n ? n : 1); }
  void deallocate(void* p) override { std::free(p); }
};

}  // namespace

int main(int argc, char** argv) {
  sample::start(argc, argv);
  static HostAllocator host;
  setAllocator(DeviceType::PrivateUse1, &host);
  bool privateuse1 = sample::hasFlag(argc, argv, "--privateuse1");
  Device device = privateuse1 ? Device(DeviceType::PrivateUse1) : Device(DeviceType::Meta);
  Tensor x = make_tensor(std::vector<int64_t>{4}, ScalarType::Float, device);
  auto op = Dispatcher::singleton().findSchemaOrThrow("myops::only_cpu", "").typed<Tensor(const Tensor&)>();
  std::printf("calling myops::only_cpu on %s, keys %s\n", x.toString().c_str(), toString(x.key_set()).c_str());
  if (!sample::hasFlag(argc, argv, "--catch")) {
    op.call(x);  // uncaught: std::terminate -> SIGABRT with the dispatch still recorded
    return 0;
  }
  try {
    op.call(x);
  } catch (const NotImplementedError& e) {
    std::printf("NotImplementedError: %s\n", e.what());
    return 1;
  }
  return 0;
}
