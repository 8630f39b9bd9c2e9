// private_backend: a PrivateUse1 "virtual device", the way an out-of-tree backend plugs in.
//
// The device is renamed "vdev" (torch.utils.rename_privateuse1_backend), has its own
// allocator (host memory, with statistics) and its own kernels at the PrivateUse1 key for
// empty, fill_, add and mm. Everything else comes from the runtime: BackendSelect routes
// factories to PrivateUse1, the Autograd alias kernels record MmBackward0 at
// AutogradPrivateUse1, copy_ moves data to and from the CPU.
//
// What you should see: the tensor's key set DispatchKeySet(PrivateUse1, ADInplaceOrView,
// AutogradPrivateUse1, AutocastPrivateUse1); mm + add on vdev matching the CPU; the allocator's
// byte counts; "vdev kernels ran: N". With DSCOPE_SHOW_DISPATCH_TRACE=1 the trace shows
// [call] op=[aten::mm], key=[AutogradPrivateUse1] then [redispatch] ... key=[PrivateUse1].
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "dscope/Library.h"
#include "dscope/aten/Functions.h"
#include "dscope/autograd/Autograd.h"
#include "sample_util.h"

using namespace dscope;

namespace {

struct VdevAllocator final : Allocator {
  std::atomic<size_t> allocated{0}, live{0};
  void* allocate(size_t n) override {
    allocated += n;
    live += n;
    auto* p = static_cast<size_t*>(std::malloc(n + sizeof(size_t)));
    *p = n;
    return p + 1;
  }
  void deallocate(void* ptr) override {
    auto* p = static_cast<size_t*>(ptr) - 1;
    live -= *p;
    std::free(p);
  }
};
VdevAllocator vdev_allocator;
std::atomic<int> vdev_kernel_calls{0};

float* data(const Tensor& t) { return t.data_ptr<float>(); }

void checkVdevFloat(const Tensor& t) {
  DSCOPE_CHECK(t.dtype() == ScalarType::Float && t.is_contiguous(), "vdev kernels take contiguous float32 tensors");
}

Tensor vdev_empty(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Device> device) {
  ++vdev_kernel_calls;
  return make_tensor(size, dtype.value_or(ScalarType::Float), device.value_or(Device(DeviceType::PrivateUse1)));
}

Tensor vdev_fill(const Tensor& self, const Scalar& value) {
  ++vdev_kernel_calls;
  checkVdevFloat(self);
  for (int64_t i = 0; i < self.numel(); ++i) data(self)[i] = value.to<float>();
  return self;
}

Tensor vdev_add(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  ++vdev_kernel_calls;
  checkVdevFloat(a);
  checkVdevFloat(b);
  Tensor out = vdev_empty(a.sizes(), ScalarType::Float, a.device());
  for (int64_t i = 0; i < a.numel(); ++i) data(out)[i] = data(a)[i] + alpha.to<float>() * data(b)[i];
  return out;
}

Tensor vdev_mm(const Tensor& a, const Tensor& b) {
  ++vdev_kernel_calls;
  checkVdevFloat(a);
  checkVdevFloat(b);
  int64_t n = a.size(0), k = a.size(1), m = b.size(1);
  DSCOPE_CHECK(b.size(0) == k, "vdev mm: shapes do not match");
  Tensor out = vdev_empty(std::vector<int64_t>{n, m}, ScalarType::Float, a.device());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) {
      float acc = 0;
      for (int64_t p = 0; p < k; ++p) acc += data(a)[i * k + p] * data(b)[p * m + j];
      data(out)[i * m + j] = acc;
    }
  return out;
}

DSCOPE_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", &vdev_empty);
  m.impl("fill_.Scalar", &vdev_fill);
  m.impl("add.Tensor", &vdev_add);
  m.impl("mm", &vdev_mm);
}

}  // namespace

int main(int argc, char** argv) {
  sample::start(argc, argv);
  rename_privateuse1_backend("vdev");
  setAllocator(DeviceType::PrivateUse1, &vdev_allocator);
  Device vdev("vdev");

  Tensor a_cpu = at::randn({3, 4});
  Tensor b_cpu = at::randn({4, 2});
  Tensor a = a_cpu.to(vdev);
  Tensor b = b_cpu.to(vdev);
  std::printf("a: %s keys=%s\n", a.toString().c_str(), toString(a.key_set()).c_str());

  Tensor c = at::add(at::mm(a, b), at::ones({3, 2}, TensorOptions(vdev)));
  Tensor expected = at::add(at::mm(a_cpu, b_cpu), at::ones({3, 2}));
  Tensor back = c.to(Device(DeviceType::CPU));
  double worst = 0;
  for (int64_t i = 0; i < 6; ++i) worst = std::max(worst, double(std::fabs(back.data_ptr<float>()[i] - expected.data_ptr<float>()[i])));
  std::printf("mm+add on vdev vs cpu: max |difference| = %.2e\n", worst);

  Tensor w = at::randn({4, 2}).to(vdev);  // vdev has no normal_ kernel: draw on the CPU
  w.set_requires_grad(true);
  Tensor y = at::mm(a, w);
  std::printf("autograd on vdev: y.grad_fn=%s\n", y.grad_fn() ? y.grad_fn()->name().c_str() : "(none)");
  std::printf("vdev allocator: %zu bytes allocated, %zu live; vdev kernels ran: %d\n", vdev_allocator.allocated.load(),
              vdev_allocator.live.load(), vdev_kernel_calls.load());
  sample::sample_checkpoint("after vdev work");
  return worst < 1e-4 ? 0 : 1;
}
