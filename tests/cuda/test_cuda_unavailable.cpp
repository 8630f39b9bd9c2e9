// Without a usable GPU (no driver: cudaErrorInsufficientDriver; no device, e.g.
// CUDA_VISIBLE_DEVICES=-1: cudaErrorNoDevice) the CUDA backend still loads, says why CUDA is not
// available, and every way of making a CUDA tensor throws dscope::Error naming the CUDA error.
// Test suite "no-gpu" (main.cpp skips it where a GPU is usable).
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <string>

#include "dscope/DispatchKey.h"
#include "dscope/Dispatcher.h"
#include "dscope/aten/Functions.h"
#include "dscope/cuda/CUDA.h"

using namespace dscope;

namespace {
// The error this process gets, asked of the CUDA runtime directly.
cudaError_t deviceCountError() {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  return e == cudaSuccess && n == 0 ? cudaErrorNoDevice : e;
}
const std::string kErrorName = cudaGetErrorName(deviceCountError());
}  // namespace

TEST_SUITE_BEGIN("no-gpu");

TEST_CASE("is_available is false and the reason names the CUDA error") {
  CHECK_FALSE(cuda::is_available());
  CHECK(cuda::device_count() == 0);
  CHECK(cuda::unavailable_reason().rfind(kErrorName + " (", 0) == 0);
}

TEST_CASE("at::empty on cuda throws dscope::Error naming the CUDA error") {
  const std::string expected = "CUDA is not available: no usable GPU (cudaGetDeviceCount: " + kErrorName + " (";
  CHECK_THROWS_WITH_AS(at::empty({2}, TensorOptions(Device("cuda"))), doctest::Contains(expected.c_str()), Error);
  CHECK_THROWS_WITH_AS(at::zeros({2}, TensorOptions(Device("cuda"))), doctest::Contains(expected.c_str()), Error);
}

TEST_CASE("to(cuda) throws the same error and leaves the CPU tensor usable") {
  Tensor x = at::ones({2, 2});
  CHECK_THROWS_WITH_AS(x.to(Device("cuda")), doctest::Contains(kErrorName.c_str()), Error);
  CHECK(at::sum(x).item() == 4.0);
}

TEST_CASE("the kernels are registered anyway (they are loaded, not probed)") {
  auto mm = Dispatcher::singleton().findSchemaOrThrow("aten::mm", "");
  CHECK(mm.entry().hasKernelForDispatchKey(DispatchKey::CUDA));
  CHECK(mm.entry().hasKernelForDispatchKey(DispatchKey::AutocastCUDA));
}

TEST_CASE("the allocator calls that need no GPU are harmless") {
  cuda::empty_cache();
  CHECK(cuda::memory_stats().allocated_bytes == 0);
  CHECK_THROWS_WITH_AS(cuda::synchronize(), doctest::Contains(kErrorName.c_str()), Error);
}

TEST_SUITE_END();
