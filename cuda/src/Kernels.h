// The interface between the operator kernels (CUDAKernels.cpp, C++20, dscope types) and the
// device code (Kernels.cu, the one nvcc translation unit, C++17): raw pointers, dtype codes and
// element strides only, so that nvcc never parses the runtime's headers.
//
// Every launcher enqueues on `stream` and returns the launch status (cudaGetLastError); it
// launches nothing when there are no elements. Errors of the kernels themselves show up at the
// next synchronizing call, as always in CUDA.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace dscope::cuda::kernels {

// The element types, with c10's ScalarType values (so a ScalarType converts by value).
enum class Dtype : int8_t { Long = 4, Half = 5, Float = 6, Double = 7, BFloat16 = 15 };

constexpr int kMaxDim = 8;  // TensorImpl::kMaxDim

// The shape every operand of one launch is walked in (the output's).
struct Shape {
  int dim = 0;
  int64_t sizes[kMaxDim] = {};
  int64_t numel = 0;
};

// One operand: `data` points at its element 0 (storage offset applied); the element at index
// (i0, ..., i{dim-1}) of the Shape is data[i0 * strides[0] + ...] (strides in elements, 0 for a
// broadcast dimension). `contiguous`: element i is data[i] (the fast path).
struct Operand {
  void* data = nullptr;
  Dtype dtype = Dtype::Float;
  bool contiguous = true;
  int64_t strides[kMaxDim] = {};
};

#ifdef __CUDACC__
#define DSCOPE_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define DSCOPE_HOST_DEVICE inline
#endif

// The element offset in operand o of the element at linear index `linear` (row-major over
// `shape`). Host and device: the host tests check it against the CPU's strided walk.
DSCOPE_HOST_DEVICE int64_t offsetOf(int64_t linear, const Shape& shape, const Operand& o) {
  if (o.contiguous) return linear;
  int64_t offset = 0;
  for (int d = shape.dim - 1; d >= 0; --d) {
    const int64_t size = shape.sizes[d];  // >= 1: nothing is launched for an empty shape
    offset += (linear % size) * o.strides[d];
    linear /= size;
  }
  return offset;
}

// A Scalar argument: `i` for int64 kernels, `f` for floating-point ones.
struct ScalarArg {
  double f = 0;
  int64_t i = 0;
};

// dst = src converted to dst's dtype (any strides on both sides).
cudaError_t copy(const Shape& shape, const Operand& dst, const Operand& src, cudaStream_t stream);

// dst = value, in dst's dtype.
cudaError_t fill(const Shape& shape, const Operand& dst, ScalarArg value, cudaStream_t stream);

// out = op(a, b) elementwise; all three have out's dtype. Computed in float for float16/bfloat16,
// as the CPU kernels do.
enum class BinaryOp : int8_t {
  Add,                // a + scalar * b (scalar = alpha)
  Mul,                // a * b
  ThresholdBackward,  // b <= scalar ? 0 : a (a = grad, b = self, scalar = threshold)
};
cudaError_t binary(BinaryOp op, const Shape& shape, const Operand& out, const Operand& a, const Operand& b,
                   ScalarArg scalar, cudaStream_t stream);

// out = a < 0 ? 0 : a (NaN stays NaN).
cudaError_t relu(const Shape& shape, const Operand& out, const Operand& a, cudaStream_t stream);

// *out = the sum of n contiguous elements of `in` (both of dtype `dtype`), accumulated like the
// CPU kernel (float in double, float16/bfloat16 in float). `scratch` is device memory of at
// least sumScratchBytes() bytes, only used by this stream-ordered call.
size_t sumScratchBytes();
cudaError_t sum(Dtype dtype, const void* in, int64_t n, void* out, void* scratch, cudaStream_t stream);

}  // namespace dscope::cuda::kernels
