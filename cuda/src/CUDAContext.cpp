// CUDA errors, GPU availability, the caching allocator over cudaMalloc, and cuBLAS loading.
#include "CUDAContext.h"

#include <dlfcn.h>

#include <cstdio>
#include <type_traits>

#include "dscope/Error.h"
#include "dscope/Tensor.h"
#include "dscope/cuda/CUDA.h"

namespace dscope::cuda {

// ---------------------------------------------------------------- errors and availability

std::string errorText(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + " (" + std::to_string(static_cast<int>(e)) + "): " + cudaGetErrorString(e);
}

void throwCudaError(cudaError_t e, const std::string& what) {
  cudaGetLastError();  // a non-sticky error must not be reported again by the next launch check
  throw Error("CUDA error: " + errorText(e) + " (in " + what + ")");
}

namespace {

struct Availability {
  cudaError_t error = cudaSuccess;
  int count = 0;
};

// Asked once: the answer does not change within a process.
const Availability& availability() {
  static const Availability a = [] {
    Availability r;
    r.error = cudaGetDeviceCount(&r.count);
    if (r.error != cudaSuccess) {
      cudaGetLastError();
      r.count = 0;
    } else if (r.count == 0) {
      r.error = cudaErrorNoDevice;
    }
    return r;
  }();
  return a;
}

}  // namespace

bool is_available() { return availability().error == cudaSuccess; }
int device_count() { return availability().count; }
std::string unavailable_reason() { return is_available() ? "" : errorText(availability().error); }

void ensureAvailable() {
  if (!is_available())
    throw Error("CUDA is not available: no usable GPU (cudaGetDeviceCount: " + unavailable_reason() + ")");
}

void synchronize() {
  ensureAvailable();
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

// ---------------------------------------------------------------- the allocator

namespace {

struct CudaMemorySource final : RawMemorySource {
  void* allocate(size_t nbytes) override {
    void* ptr = nullptr;
    cudaError_t e = cudaMalloc(&ptr, nbytes);
    if (e == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      throw OutOfMemoryError("CUDA out of memory: " + errorText(e) + " (in cudaMalloc)");
    }
    check(e, "cudaMalloc");
    return ptr;
  }
  void free(void* ptr) override { check(cudaFree(ptr), "cudaFree"); }
  void synchronize() override { check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }
};

// Never destroyed: tensors in static storage of other libraries may be freed after our statics.
CachingAllocator& pool() {
  static CachingAllocator* p = new CachingAllocator(*new CudaMemorySource());
  return *p;
}

// What make_tensor calls for DeviceType::CUDA.
struct CUDAAllocator final : Allocator {
  void* allocate(size_t nbytes) override {
    if (nbytes == 0) return nullptr;
    ensureAvailable();
    return pool().allocate(nbytes, reinterpret_cast<StreamId>(currentStream()));
  }
  // Called from StorageImpl's destructor: report, never throw.
  void deallocate(void* ptr) override {
    try {
      pool().free(ptr);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "dscope: %s\n", e.what());
    }
  }
};

// Installed when libdscope_cuda is loaded, like the CUDA kernels.
[[maybe_unused]] const bool allocator_installed = [] {
  static CUDAAllocator allocator;
  setAllocator(DeviceType::CUDA, &allocator);
  return true;
}();

}  // namespace

MemoryStats memory_stats() { return pool().stats(); }
void reset_peak_memory_stats() { pool().resetPeakStats(); }

void empty_cache() {
  if (is_available()) pool().emptyCache();  // without a GPU nothing was ever allocated
}

// ---------------------------------------------------------------- cuBLAS

// The function-pointer type must match cuBLAS's own declaration (unevaluated: no link dependency).
static_assert(std::is_same_v<decltype(static_cast<GemmExFn>(&cublasGemmEx)), GemmExFn>);

namespace {

Cublas loadCublas() {
  void* lib = dlopen(DSCOPE_CUBLAS_PATH, RTLD_NOW | RTLD_LOCAL);
  std::string why;
  if (!lib) {
    why = dlerror();
    lib = dlopen(DSCOPE_CUBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);  // wherever the loader finds it
  }
  if (!lib) throw Error(std::string("cannot load cuBLAS: ") + why + "; " + dlerror());
  auto symbol = [&](const char* name) {
    void* s = dlsym(lib, name);
    DSCOPE_CHECK(s, std::string("cuBLAS (") + DSCOPE_CUBLAS_SONAME + ") has no symbol " + name);
    return s;
  };
  Cublas api;
  api.create = reinterpret_cast<decltype(api.create)>(symbol("cublasCreate_v2"));
  api.setStream = reinterpret_cast<decltype(api.setStream)>(symbol("cublasSetStream_v2"));
  api.sgemm = reinterpret_cast<decltype(api.sgemm)>(symbol("cublasSgemm_v2"));
  api.dgemm = reinterpret_cast<decltype(api.dgemm)>(symbol("cublasDgemm_v2"));
  api.gemmEx = reinterpret_cast<decltype(api.gemmEx)>(symbol("cublasGemmEx"));
  api.statusName = reinterpret_cast<decltype(api.statusName)>(symbol("cublasGetStatusName"));
  return api;
}

}  // namespace

const Cublas& cublas() {
  static const Cublas api = loadCublas();  // a throw leaves it unset: the next call tries again
  return api;
}

void checkCublas(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  throw Error(std::string("cuBLAS error: ") + cublas().statusName(s) + " (" + std::to_string(static_cast<int>(s)) +
              ") (in " + what + ")");
}

cublasHandle_t cublasHandle() {
  // One per thread, as cuBLAS asks; kept until the process ends (PyTorch pools them likewise).
  thread_local cublasHandle_t handle = [] {
    cublasHandle_t h = nullptr;
    checkCublas(cublas().create(&h), "cublasCreate");
    checkCublas(cublas().setStream(h, currentStream()), "cublasSetStream");
    return h;
  }();
  return handle;
}

}  // namespace dscope::cuda
