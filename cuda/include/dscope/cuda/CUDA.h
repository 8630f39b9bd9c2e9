// The CUDA backend (libdscope_cuda.so, libtorch_cuda's role): linking it registers the CUDA and
// AutocastCUDA kernels of the aten operators and the CUDA caching allocator, at load time. This
// header needs no CUDA headers.
//
//   if (dscope::cuda::is_available()) {
//     Tensor a = at::randn({64, 64}).to(Device("cuda"));   // cuda:0
//     Tensor c = at::mm(a, a).to(Device("cpu"));           // cuBLAS
//   }
//
// Without a usable GPU (no driver, no device: any cudaGetDeviceCount error) everything still
// loads; is_available() is false and creating a CUDA tensor throws dscope::Error naming the
// CUDA error. dscope uses one GPU (cuda:0) and the default stream.
#pragma once

#include <string>

#include "dscope/cuda/CachingAllocator.h"

namespace dscope::cuda {

// True when cudaGetDeviceCount succeeds with at least one device (checked once per process).
bool is_available();
int device_count();
// Why CUDA is not available, e.g. "cudaErrorInsufficientDriver (35): CUDA driver version is
// insufficient for CUDA runtime version"; empty when it is.
std::string unavailable_reason();

// Waits for all work queued on the GPU (cudaDeviceSynchronize); throws dscope::Error on a CUDA error.
void synchronize();

// The caching allocator behind CUDA tensors (torch.cuda.memory_stats / empty_cache).
MemoryStats memory_stats();
void reset_peak_memory_stats();
void empty_cache();

}  // namespace dscope::cuda
