// autocast_missing: a custom op without an Autocast kernel inside an autocast region.
//
// Inside AutocastMode(CPU), aten::mm has an AutocastCPU kernel: it casts float32 inputs to
// bfloat16 and the result is bfloat16. myops::my_mm has kernels for CPU and Autograd only,
// so AutocastCPU falls through (its backend fallback is a fallthrough) and my_mm silently
// runs in float32: the autocast region has no effect on it.
//
// What you should see: "aten::mm -> bfloat16", "myops::my_mm -> float32 (autocast not in
// effect)". With DSCOPE_SHOW_DISPATCH_TRACE=1: aten::mm is dispatched at [AutocastCPU] and
// then again at [AutogradCPU] with bfloat16 inputs; myops::my_mm goes straight to
// [AutogradCPU]. With --core it aborts right after my_mm, for post-mortem inspection.
//
// Built with the CUDA backend and run where a GPU is usable, it then shows the same on the GPU:
// inside AutocastMode(CUDA), aten::mm goes through AutocastCUDA and computes in float16
// (cuBLAS); my_mm has a CUDA kernel but no AutocastCUDA one, so it stays float32 ("cuda: ..."
// lines). Without a usable GPU it prints one line, "cuda: skipped (no usable GPU: ...)".
#include <cstdio>
#include <cstdlib>

#include "dscope/Library.h"
#include "dscope/aten/Autocast.h"
#include "dscope/aten/Functions.h"
#include "sample_util.h"
#if DSCOPE_WITH_CUDA
#include "dscope/cuda/CUDA.h"
#endif

using namespace dscope;

namespace {

// A hand-written kernel, as custom ops usually have: it computes in its inputs' dtype.
Tensor my_mm_cpu(const Tensor& a, const Tensor& b) {
  int64_t n = a.size(0), k = a.size(1), m = b.size(1);
  Tensor out = at::empty({n, m}, TensorOptions(a.dtype()));
  const float *pa = a.data_ptr<float>(), *pb = b.data_ptr<float>();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) {
      float acc = 0;
      for (int64_t p = 0; p < k; ++p) acc += pa[i * a.stride(0) + p * a.stride(1)] * pb[p * b.stride(0) + j * b.stride(1)];
      out.data_ptr<float>()[i * m + j] = acc;
    }
  return out;
}

DSCOPE_LIBRARY(myops, m) { m.def("my_mm(Tensor self, Tensor mat2) -> Tensor"); }
DSCOPE_LIBRARY_IMPL(myops, CPU, m) { m.impl("my_mm", &my_mm_cpu); }
// Missing on purpose: DSCOPE_LIBRARY_IMPL(myops, AutocastCPU, m) { m.impl("my_mm", ...); }

#if DSCOPE_WITH_CUDA
// my_mm's CUDA kernel, hand-written as well: a sample has no device code, so it computes on the
// host and copies back. Like the CPU kernel it computes in its inputs' dtype.
Tensor my_mm_cuda(const Tensor& a, const Tensor& b) {
  const Device cpu("cpu");
  return my_mm_cpu(a.to(cpu), b.to(cpu)).to(a.device());
}
DSCOPE_LIBRARY_IMPL(myops, CUDA, m) { m.impl("my_mm", &my_mm_cuda); }
// Missing on purpose, too: DSCOPE_LIBRARY_IMPL(myops, AutocastCUDA, m) { m.impl("my_mm", ...); }

using MyMm = TypedOperatorHandle<Tensor(const Tensor&, const Tensor&)>;

// The scenario on the GPU: aten::mm has an AutocastCUDA kernel (float16), my_mm does not.
void cudaScenario(const MyMm& my_mm, const Tensor& a, const Tensor& b) {
  if (!cuda::is_available()) {
    std::printf("cuda: skipped (no usable GPU: %s)\n", cuda::unavailable_reason().c_str());
    return;
  }
  const Device gpu("cuda");
  Tensor ga = a.to(gpu), gb = b.to(gpu);
  autocast::AutocastMode autocast(DeviceType::CUDA);  // float16, as torch.autocast("cuda")
  Tensor expected = at::mm(ga, gb);
  Tensor got = my_mm.call(ga, gb);
  std::printf("cuda: aten::mm -> %s\n", toString(expected.dtype()));
  std::printf("cuda: myops::my_mm -> %s%s\n", toString(got.dtype()),
              got.dtype() == expected.dtype() ? "" : " (autocast not in effect)");
}
#endif

}  // namespace

int main(int argc, char** argv) {
  sample::start(argc, argv);
  auto my_mm = Dispatcher::singleton().findSchemaOrThrow("myops::my_mm", "").typed<Tensor(const Tensor&, const Tensor&)>();
  Tensor a = at::randn({4, 4});
  Tensor b = at::randn({4, 4});
  autocast::AutocastMode autocast(DeviceType::CPU);
  Tensor expected = at::mm(a, b);
  Tensor got = my_mm.call(a, b);
  std::printf("aten::mm -> %s\n", toString(expected.dtype()));
  std::printf("myops::my_mm -> %s%s\n", toString(got.dtype()),
              got.dtype() == expected.dtype() ? "" : " (autocast not in effect)");
  sample::sample_checkpoint("after my_mm in the autocast region");
  if (sample::hasFlag(argc, argv, "--core")) std::abort();
#if DSCOPE_WITH_CUDA
  cudaScenario(my_mm, a, b);
#endif
  return 0;
}
