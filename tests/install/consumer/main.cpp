// Defines an operator in its own namespace, with a CPU kernel, and calls it through the
// installed runtime's dispatcher.
#include <dscope/Library.h>

#include <cstdio>

#if DSCOPE_WITH_CUDA
#include <dscope/cuda/CUDA.h>
#endif

using namespace dscope;

static int64_t twice(const Tensor& t) { return 2 * t.numel(); }

DSCOPE_LIBRARY(consumer, m) { m.def("twice(Tensor x) -> int"); }
DSCOPE_LIBRARY_IMPL(consumer, CPU, m) { m.impl("twice", &twice); }

int main() {
  auto op = Dispatcher::singleton().findSchemaOrThrow("consumer::twice", "").typed<int64_t(const Tensor&)>();
  Tensor t = make_tensor(std::vector<int64_t>{3, 2}, ScalarType::Float, Device(DeviceType::CPU));
  std::printf("consumer::twice=%lld keys=%s\n", static_cast<long long>(op.call(t)), toString(t.key_set()).c_str());
#if DSCOPE_WITH_CUDA
  std::printf("consumer: dscope::cuda linked, %s\n",
              cuda::is_available() ? "GPU usable" : ("no usable GPU: " + cuda::unavailable_reason()).c_str());
#endif
  return 0;
}
