// cuda_bench: what the dispatcher costs on the GPU, measured side by side in one run.
//  1. mm 4096 x 4096, float32 and bfloat16: at::mm (dispatch, allocation, cuBLAS) against the same
//     cuBLAS call made directly on preallocated memory. Goal: within 2%.
//  2. a 1-element float add: per-call time of at::add, of our add launcher called directly (no
//     dispatch, no allocation), and of a minimal hand-written kernel launch; both pipelined
//     (back-to-back calls, one synchronize at the end) and synchronous (synchronize after each).
// Rounds alternate between the variants; each figure is the median over the rounds.
// Without a usable GPU it prints one line and exits 0.
//
//   cuda_bench [--rounds N]
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "Kernels.h"  // cuda/src: the launcher at::add's CUDA kernel calls
#include "dscope/aten/Functions.h"
#include "dscope/cuda/CUDA.h"

cudaError_t launchAddOne(const float* a, const float* b, float* c, cudaStream_t stream);  // cuda_bench_kernels.cu

using namespace dscope;

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(std::string(what) + ": " + cudaGetErrorName(e));
}
void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw Error(std::string(what) + ": " + cublasGetStatusName(s));
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// GPU time per call (ms) of `iters` back-to-back calls of f on the default stream.
template <class F>
double gpuMsPerCall(int iters, F&& f) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  check(cudaEventRecord(start), "cudaEventRecord");
  for (int i = 0; i < iters; ++i) f();
  check(cudaEventRecord(stop), "cudaEventRecord");
  check(cudaEventSynchronize(stop), "cudaEventSynchronize");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms / iters;
}

// Wall time per call (us) of `iters` calls of f, with a synchronize after each or only at the end.
template <class F>
double wallUsPerCall(int iters, bool sync_each, F&& f) {
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) {
    f();
    if (sync_each) check(cudaStreamSynchronize(nullptr), "cudaStreamSynchronize");
  }
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / iters;
}

double maxAbsDiff(const Tensor& a, const Tensor& b) {
  Tensor x = at::empty(a.sizes(), TensorOptions(ScalarType::Double)), y = at::empty(b.sizes(), TensorOptions(ScalarType::Double));
  x.copy_(a);
  y.copy_(b);
  double worst = 0;
  for (int64_t i = 0; i < x.numel(); ++i)
    worst = std::max(worst, std::abs(x.data_ptr<double>()[i] - y.data_ptr<double>()[i]));
  return worst;
}

void benchMm(ScalarType dtype, int rounds, cublasHandle_t handle) {
  constexpr int n = 4096;
  const int iters = dtype == ScalarType::Float ? 20 : 100;
  const Device gpu("cuda");
  at::manual_seed(0);
  Tensor a = at::randn({n, n}).to(gpu, dtype), b = at::randn({n, n}).to(gpu, dtype);
  Tensor direct_out = at::empty({n, n}, TensorOptions(dtype).device(gpu));
  const float alpha = 1, beta = 0;
  // Row-major C = A B as cuBLAS (column-major) computes it: C^T = B^T A^T, exactly our kernel's call.
  auto direct = [&] {
    if (dtype == ScalarType::Float)
      check(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, b.data_ptr<float>(), n, a.data_ptr<float>(),
                        n, &beta, direct_out.data_ptr<float>(), n),
            "cublasSgemm");
    else
      check(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, b.data_ptr(), CUDA_R_16BF, n, a.data_ptr(),
                         CUDA_R_16BF, n, &beta, direct_out.data_ptr(), CUDA_R_16BF, n, CUBLAS_COMPUTE_32F,
                         CUBLAS_GEMM_DEFAULT),
            "cublasGemmEx");
  };
  Tensor ours_out;
  auto ours = [&] { ours_out = at::mm(a, b); };
  for (int i = 0; i < 3; ++i) {  // warm up: cuBLAS heuristics, the allocator's cache
    direct();
    ours();
  }
  std::vector<double> d, o;
  for (int r = 0; r < rounds; ++r) {
    d.push_back(gpuMsPerCall(iters, direct));
    o.push_back(gpuMsPerCall(iters, ours));
  }
  const double dm = median(d), om = median(o);
  const double tflops = 2.0 * n * n * n / (dm * 1e-3) / 1e12;
  std::printf("mm %dx%d %-8s  at::mm %.4f ms  cuBLAS direct %.4f ms (%.1f TFLOP/s)  ratio %.4f (goal <= 1.02)  "
              "max |at::mm - cuBLAS| = %.3g\n",
              n, n, toString(dtype), om, dm, tflops, om / dm, maxAbsDiff(ours_out, direct_out));
}

void benchAdd(int rounds) {
  const Device gpu("cuda");
  Tensor x = at::full({1}, 1.5).to(gpu), y = at::full({1}, 2.0).to(gpu);
  Tensor out = at::empty({1}, TensorOptions(gpu));
  cuda::kernels::Shape shape;
  shape.dim = 1;
  shape.sizes[0] = 1;
  shape.numel = 1;
  auto operand = [](const Tensor& t) {
    cuda::kernels::Operand o;
    o.data = t.data_ptr();
    o.dtype = cuda::kernels::Dtype::Float;
    o.strides[0] = 1;
    return o;
  };
  const auto ox = operand(x), oy = operand(y), oo = operand(out);
  Tensor result;
  auto dispatched = [&] { result = at::add(x, y); };
  auto launcher = [&] {
    check(cuda::kernels::binary(cuda::kernels::BinaryOp::Add, shape, oo, ox, oy, {1.0, 1}, nullptr), "binary");
  };
  auto direct = [&] { check(launchAddOne(x.data_ptr<float>(), y.data_ptr<float>(), out.data_ptr<float>(), nullptr), "addOne"); };
  for (bool sync_each : {false, true}) {
    const int iters = sync_each ? 2000 : 20000;
    for (int i = 0; i < 100; ++i) {
      dispatched();
      launcher();
      direct();
    }
    std::vector<double> t[3];
    for (int r = 0; r < rounds; ++r) {
      t[0].push_back(wallUsPerCall(iters, sync_each, dispatched));
      t[1].push_back(wallUsPerCall(iters, sync_each, launcher));
      t[2].push_back(wallUsPerCall(iters, sync_each, direct));
    }
    const double a = median(t[0]), l = median(t[1]), d = median(t[2]);
    std::printf("add 1 element, %-11s  at::add %.2f us/call  launcher %.2f us  direct <<<1,1>>> %.2f us  "
                "ratio at::add/direct %.2f (dispatch + allocation %.2f us)\n",
                sync_each ? "synchronous" : "pipelined", a, l, d, a / d, a - l);
  }
  Tensor host = result.to(Device("cpu"));
  if (host.item() != 3.5) throw Error("at::add on CUDA gave " + std::to_string(host.item()) + ", expected 3.5");
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 7;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--rounds") == 0) rounds = std::max(1, std::atoi(argv[i + 1]));
  if (!cuda::is_available()) {
    std::printf("cuda_bench: skipped (no usable GPU: %s)\n", cuda::unavailable_reason().c_str());
    return 0;
  }
  try {
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    int runtime = 0;
    check(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");
    std::printf("cuda_bench on %s (sm_%d%d), CUDA runtime %d, median of %d rounds\n", prop.name, prop.major,
                prop.minor, runtime, rounds);
    cublasHandle_t handle = nullptr;
    check(cublasCreate(&handle), "cublasCreate");
    benchMm(ScalarType::Float, rounds, handle);
    benchMm(ScalarType::BFloat16, rounds, handle);
    benchAdd(rounds);
    cublasDestroy(handle);
  } catch (const std::exception& e) {
    std::printf("cuda_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
