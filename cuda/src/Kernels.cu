// The device code of the CUDA backend: grid-stride loops over any strides (a contiguous fast
// path, otherwise each thread turns its linear index into an offset), float16/bfloat16
// computed in float, and a two-pass deterministic sum. Only Kernels.h's plain types cross
// into this file.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <type_traits>

#include "Kernels.h"

namespace dscope::cuda::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 65535;  // the grid-stride loop covers the rest

int blocksFor(int64_t n) { return static_cast<int>(std::min<int64_t>((n + kThreads - 1) / kThreads, kMaxBlocks)); }

// ---------------------------------------------------------------- element types

// The type arithmetic happens in (c10's opmath_type): float for the 16-bit floats.
template <class T>
struct OpMathOf {
  using type = T;
};
template <>
struct OpMathOf<__half> {
  using type = float;
};
template <>
struct OpMathOf<__nv_bfloat16> {
  using type = float;
};
template <class T>
using opmath_t = typename OpMathOf<T>::type;

// The type sums accumulate in: the CPU kernels' acc_t (float accumulates in double).
template <class T>
struct AccOf {
  using type = opmath_t<T>;
};
template <>
struct AccOf<float> {
  using type = double;
};
template <class T>
using acc_t = typename AccOf<T>::type;

template <class T>
__device__ __forceinline__ opmath_t<T> load(const T* p) {
  return *p;
}
template <>
__device__ __forceinline__ float load<__half>(const __half* p) {
  return __half2float(*p);
}
template <>
__device__ __forceinline__ float load<__nv_bfloat16>(const __nv_bfloat16* p) {
  return __bfloat162float(*p);
}

// Rounds to nearest even, as the CPU Half/BFloat16 constructors do.
template <class T>
__device__ __forceinline__ void store(T* p, opmath_t<T> v) {
  *p = v;
}
template <>
__device__ __forceinline__ void store<__half>(__half* p, float v) {
  *p = __float2half_rn(v);
}
template <>
__device__ __forceinline__ void store<__nv_bfloat16>(__nv_bfloat16* p, float v) {
  *p = __float2bfloat16_rn(v);
}

template <class T>
struct Tag {
  using type = T;
};

// Calls f(Tag<T>{}) with the device element type of `dtype`.
template <class F>
cudaError_t dispatchDtype(Dtype dtype, F&& f) {
  switch (dtype) {
    case Dtype::Long: return f(Tag<int64_t>{});
    case Dtype::Half: return f(Tag<__half>{});
    case Dtype::Float: return f(Tag<float>{});
    case Dtype::Double: return f(Tag<double>{});
    case Dtype::BFloat16: return f(Tag<__nv_bfloat16>{});
  }
  return cudaErrorInvalidValue;
}

// A Scalar in op-math type M (Scalar::to<M>() on the CPU side).
template <class M>
M scalarAs(ScalarArg s) {
  if constexpr (std::is_integral_v<M>) return static_cast<M>(s.i);
  else return static_cast<M>(s.f);
}

// ---------------------------------------------------------------- indexing (offsetOf: Kernels.h)

__device__ __forceinline__ int64_t firstIndex() { return blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; }
__device__ __forceinline__ int64_t gridStride() { return static_cast<int64_t>(blockDim.x) * gridDim.x; }

// Enqueues kernel<<<blocks for n, kThreads>>>(args...) unless n is 0.
template <class... Params, class... Args>
cudaError_t launch(int64_t n, cudaStream_t stream, void (*kernel)(Params...), Args... args) {
  if (n == 0) return cudaSuccess;
  kernel<<<blocksFor(n), kThreads, 0, stream>>>(args...);
  return cudaGetLastError();
}

// ---------------------------------------------------------------- elementwise kernels

template <class O, class I>
__global__ void copyKernel(Shape shape, Operand dst, Operand src) {
  O* out = static_cast<O*>(dst.data);
  const I* in = static_cast<const I*>(src.data);
  for (int64_t i = firstIndex(); i < shape.numel; i += gridStride())
    store(out + offsetOf(i, shape, dst), static_cast<opmath_t<O>>(load(in + offsetOf(i, shape, src))));
}

template <class T>
__global__ void fillKernel(Shape shape, Operand dst, opmath_t<T> value) {
  T* out = static_cast<T*>(dst.data);
  for (int64_t i = firstIndex(); i < shape.numel; i += gridStride()) store(out + offsetOf(i, shape, dst), value);
}

template <class M>
struct AddOp {
  M alpha;
  __device__ M operator()(M x, M y) const { return x + alpha * y; }
};
template <class M>
struct MulOp {
  __device__ M operator()(M x, M y) const { return x * y; }
};
template <class M>
struct ThresholdBackwardOp {
  M threshold;
  __device__ M operator()(M grad, M x) const { return x <= threshold ? M(0) : grad; }
};

template <class T, class Op>
__global__ void binaryKernel(Shape shape, Operand out, Operand a, Operand b, Op op) {
  T* o = static_cast<T*>(out.data);
  const T* x = static_cast<const T*>(a.data);
  const T* y = static_cast<const T*>(b.data);
  for (int64_t i = firstIndex(); i < shape.numel; i += gridStride())
    store(o + offsetOf(i, shape, out), op(load(x + offsetOf(i, shape, a)), load(y + offsetOf(i, shape, b))));
}

template <class T>
__global__ void reluKernel(Shape shape, Operand out, Operand a) {
  using M = opmath_t<T>;
  T* o = static_cast<T*>(out.data);
  const T* x = static_cast<const T*>(a.data);
  for (int64_t i = firstIndex(); i < shape.numel; i += gridStride()) {
    const M v = load(x + offsetOf(i, shape, a));
    store(o + offsetOf(i, shape, out), v < M(0) ? M(0) : v);  // NaN < 0 is false: NaN stays NaN
  }
}

// ---------------------------------------------------------------- sum

constexpr int kSumThreads = 256;     // a power of two (the tree reduction halves it)
constexpr int kSumMaxBlocks = 1024;  // partial sums per call

// Tree-reduces cache[0 .. kSumThreads) into cache[0]; every thread of the block calls it.
template <class A>
__device__ void blockReduce(A* cache) {
  __syncthreads();
  for (int s = kSumThreads / 2; s > 0; s /= 2) {
    if (static_cast<int>(threadIdx.x) < s) cache[threadIdx.x] += cache[threadIdx.x + s];
    __syncthreads();
  }
}

template <class T>
__global__ void sumPartialsKernel(const T* in, int64_t n, acc_t<T>* partials) {
  using A = acc_t<T>;
  __shared__ A cache[kSumThreads];
  A total = A(0);
  for (int64_t i = firstIndex(); i < n; i += gridStride()) total += static_cast<A>(load(in + i));
  cache[threadIdx.x] = total;
  blockReduce(cache);
  if (threadIdx.x == 0) partials[blockIdx.x] = cache[0];
}

template <class T>
__global__ void sumFinalKernel(const acc_t<T>* partials, int count, T* out) {
  using A = acc_t<T>;
  __shared__ A cache[kSumThreads];
  A total = A(0);
  for (int i = threadIdx.x; i < count; i += kSumThreads) total += partials[i];
  cache[threadIdx.x] = total;
  blockReduce(cache);
  if (threadIdx.x == 0) store(out, static_cast<opmath_t<T>>(cache[0]));
}

}  // namespace

// ---------------------------------------------------------------- launchers

cudaError_t copy(const Shape& shape, const Operand& dst, const Operand& src, cudaStream_t stream) {
  return dispatchDtype(dst.dtype, [&](auto out_tag) {
    using O = typename decltype(out_tag)::type;
    return dispatchDtype(src.dtype, [&](auto in_tag) {
      using I = typename decltype(in_tag)::type;
      return launch(shape.numel, stream, &copyKernel<O, I>, shape, dst, src);
    });
  });
}

cudaError_t fill(const Shape& shape, const Operand& dst, ScalarArg value, cudaStream_t stream) {
  return dispatchDtype(dst.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return launch(shape.numel, stream, &fillKernel<T>, shape, dst, scalarAs<opmath_t<T>>(value));
  });
}

cudaError_t binary(BinaryOp op, const Shape& shape, const Operand& out, const Operand& a, const Operand& b,
                   ScalarArg scalar, cudaStream_t stream) {
  return dispatchDtype(out.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = opmath_t<T>;
    switch (op) {
      case BinaryOp::Add:
        return launch(shape.numel, stream, &binaryKernel<T, AddOp<M>>, shape, out, a, b, AddOp<M>{scalarAs<M>(scalar)});
      case BinaryOp::Mul:
        return launch(shape.numel, stream, &binaryKernel<T, MulOp<M>>, shape, out, a, b, MulOp<M>{});
      case BinaryOp::ThresholdBackward:
        return launch(shape.numel, stream, &binaryKernel<T, ThresholdBackwardOp<M>>, shape, out, a, b,
                      ThresholdBackwardOp<M>{scalarAs<M>(scalar)});
    }
    return cudaErrorInvalidValue;
  });
}

cudaError_t relu(const Shape& shape, const Operand& out, const Operand& a, cudaStream_t stream) {
  return dispatchDtype(out.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return launch(shape.numel, stream, &reluKernel<T>, shape, out, a);
  });
}

size_t sumScratchBytes() { return kSumMaxBlocks * sizeof(double); }  // the widest accumulator

cudaError_t sum(Dtype dtype, const void* in, int64_t n, void* out, void* scratch, cudaStream_t stream) {
  return dispatchDtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    static_assert(sizeof(A) <= sizeof(double), "sumScratchBytes() assumes 8-byte accumulators at most");
    // At least one block, so that an empty input still writes its partial (0).
    const int blocks = static_cast<int>(std::clamp<int64_t>((n + kSumThreads - 1) / kSumThreads, 1, kSumMaxBlocks));
    A* partials = static_cast<A*>(scratch);
    sumPartialsKernel<T><<<blocks, kSumThreads, 0, stream>>>(static_cast<const T*>(in), n, partials);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    sumFinalKernel<T><<<1, kSumThreads, 0, stream>>>(partials, blocks, static_cast<T*>(out));
    return cudaGetLastError();
  });
}

}  // namespace dscope::cuda::kernels
