// Private to libdscope_cuda: CUDA error checking, the device and stream dscope uses, and cuBLAS.
#pragma once

#include <cublas_v2.h>  // types and declarations only: the functions come through Cublas (dlopen)
#include <cuda_runtime_api.h>

#include <string>

namespace dscope::cuda {

// "cudaErrorInsufficientDriver (35): CUDA driver version is insufficient for CUDA runtime version"
std::string errorText(cudaError_t e);
// Throws dscope::Error("CUDA error: <errorText> (in <what>)"), after clearing CUDA's last error.
[[noreturn]] void throwCudaError(cudaError_t e, const std::string& what);
inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throwCudaError(e, what);
}

// Throws dscope::Error naming the cudaGetDeviceCount error when there is no usable GPU.
void ensureAvailable();

// The stream every kernel, copy and block of the allocator uses: the default stream.
inline cudaStream_t currentStream() { return nullptr; }

// cuBLAS, loaded with dlopen on the first mm: a process that never multiplies on the GPU does
// not map cuBLAS's ~600 MB (nor does a debugger reading that process). The bench links cuBLAS
// directly; dlopen then returns the same library.
using GemmExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                    const void*, const void*, cudaDataType, int, const void*, cudaDataType, int,
                                    const void*, void*, cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
struct Cublas {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasSetStream_v2) setStream = nullptr;
  decltype(&cublasSgemm_v2) sgemm = nullptr;
  decltype(&cublasDgemm_v2) dgemm = nullptr;
  GemmExFn gemmEx = nullptr;
  decltype(&cublasGetStatusName) statusName = nullptr;
};
const Cublas& cublas();  // throws dscope::Error when cuBLAS cannot be loaded
// This thread's handle (created on first use, bound to currentStream(), kept for the process).
cublasHandle_t cublasHandle();
void checkCublas(cublasStatus_t s, const char* what);

}  // namespace dscope::cuda
