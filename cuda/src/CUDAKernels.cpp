// The CUDA kernels of the aten operators and the AutocastCUDA wrapper of mm, registered when
// libdscope_cuda is loaded (PyTorch's RegisterCUDA.cpp). Argument checks are the ones the CPU
// and Meta kernels share (runtime/src/aten/Checks.h), so a CUDA tensor fails where a CPU one
// would. No kernel here calls the dispatcher: the trace shows the operator, not its plumbing.
#include <algorithm>
#include <array>
#include <climits>
#include <cstring>

#include "CUDAContext.h"
#include "Checks.h"
#include "Kernels.h"
#include "LaunchArgs.h"
#include "dscope/Library.h"
#include "dscope/LocalDispatchKeySet.h"
#include "dscope/aten/Autocast.h"
#include "dscope/aten/Functions.h"
#include "dscope/cuda/CUDA.h"

namespace dscope::cuda {
namespace {

using at::native::checkAlpha;
using at::native::copySource;
using at::native::elementwiseOperands;
using at::native::mmOutputShape;

static_assert(static_cast<int>(kernels::Dtype::Long) == static_cast<int>(ScalarType::Long));
static_assert(static_cast<int>(kernels::Dtype::Half) == static_cast<int>(ScalarType::Half));
static_assert(static_cast<int>(kernels::Dtype::Float) == static_cast<int>(ScalarType::Float));
static_assert(static_cast<int>(kernels::Dtype::Double) == static_cast<int>(ScalarType::Double));
static_assert(static_cast<int>(kernels::Dtype::BFloat16) == static_cast<int>(ScalarType::BFloat16));
static_assert(kernels::kMaxDim == TensorImpl::kMaxDim);

const Device kCPU(DeviceType::CPU);
// dscope's CUDA tensors are on "cuda" (index -1, as CPU tensors are on "cpu"): the one GPU, cuda:0.
const Device kCUDA(DeviceType::CUDA);

Device cudaDevice(std::optional<Device> requested) {
  const Device d = requested.value_or(kCUDA);
  DSCOPE_CHECK(d.index <= 0, "dscope's CUDA backend uses one GPU (cuda:0); got " + d.str());
  ensureAvailable();
  return kCUDA;
}

size_t nbytes(const Tensor& t) { return static_cast<size_t>(t.numel()) * t.element_size(); }

kernels::ScalarArg scalarArg(const Scalar& s) { return {s.toDouble(), s.toLong()}; }

Tensor emptyCUDA(IntArrayRef sizes, ScalarType dtype) { return make_tensor(sizes, dtype, kCUDA); }

// dst = src (same shape; any dtypes and strides; both on the GPU).
void deviceCopy(const Tensor& dst, const Tensor& src) {
  check(kernels::copy(shapeOf(dst), operandOf(dst), operandOf(src), currentStream()), "the CUDA copy kernel");
}

// t itself when it is contiguous in `dtype`, else a contiguous copy converted to it (on the GPU).
Tensor deviceContiguous(const Tensor& t, ScalarType dtype) {
  if (t.is_contiguous() && t.dtype() == dtype) return t;
  Tensor out = emptyCUDA(t.sizes(), dtype);
  deviceCopy(out, t);
  return out;
}

// ---------------------------------------------------------------- host-side layout

// Calls f(i, offset) for each element in row-major order: i its linear index, offset its
// element offset under `strides`.
template <class F>
void forEachOffset(IntArrayRef sizes, IntArrayRef strides, F&& f) {
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;
  std::array<int64_t, TensorImpl::kMaxDim> index{};
  int64_t offset = 0;
  for (int64_t i = 0; i < numel; ++i) {
    f(i, offset);
    for (int d = static_cast<int>(sizes.size()) - 1; d >= 0; --d) {  // odometer, innermost first
      if (++index[d] < sizes[d]) {
        offset += strides[d];
        break;
      }
      offset -= strides[d] * (sizes[d] - 1);
      index[d] = 0;
    }
  }
}

// A contiguous CPU tensor with t's elements (t itself when it is contiguous). Bytes only: the
// dtype conversion, if any, happens on the GPU.
Tensor hostContiguous(const Tensor& t) {
  if (t.is_contiguous()) return t;
  Tensor out = make_tensor(t.sizes(), t.dtype(), kCPU);
  const size_t es = t.element_size();
  const char* src = static_cast<const char*>(t.data_ptr());
  char* dst = static_cast<char*>(out.data_ptr());
  forEachOffset(t.sizes(), t.strides(), [&](int64_t i, int64_t off) { std::memcpy(dst + i * es, src + off * es, es); });
  return out;
}

// dst (a CPU tensor, any strides) = the contiguous CPU tensor src of the same shape and dtype.
void hostScatter(const Tensor& dst, const Tensor& src) {
  const size_t es = dst.element_size();
  const char* from = static_cast<const char*>(src.data_ptr());
  char* to = static_cast<char*>(dst.data_ptr());
  forEachOffset(dst.sizes(), dst.strides(), [&](int64_t i, int64_t off) { std::memcpy(to + off * es, from + i * es, es); });
}

void syncStream(const char* after) {
  check(cudaStreamSynchronize(currentStream()), after);
}

// ---------------------------------------------------------------- kernels

Tensor empty_cuda(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Device> device) {
  return make_tensor(size, dtype.value_or(ScalarType::Float), cudaDevice(device));
}

Tensor fill_cuda(const Tensor& self, const Scalar& value) {
  check(kernels::fill(shapeOf(self), operandOf(self), scalarArg(value), currentStream()), "the CUDA fill_ kernel");
  return self;
}

void binary(kernels::BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& scalar,
            const char* what) {
  check(kernels::binary(op, shapeOf(out), operandOf(out), operandOf(a), operandOf(b), scalarArg(scalar),
                        currentStream()),
        what);
}

Tensor add_cuda(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  auto ops = elementwiseOperands("add", self, other);
  checkAlpha(self.dtype(), alpha);
  Tensor out = emptyCUDA(ops.self.sizes(), self.dtype());
  binary(kernels::BinaryOp::Add, out, ops.self, ops.other, alpha, "the CUDA add kernel");
  return out;
}

Tensor add__cuda(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  auto ops = elementwiseOperands("add_", self, other, /*self_is_output=*/true);
  checkAlpha(self.dtype(), alpha);
  binary(kernels::BinaryOp::Add, self, self, ops.other, alpha, "the CUDA add_ kernel");
  return self;
}

Tensor mul_cuda(const Tensor& self, const Tensor& other) {
  auto ops = elementwiseOperands("mul", self, other);
  Tensor out = emptyCUDA(ops.self.sizes(), self.dtype());
  binary(kernels::BinaryOp::Mul, out, ops.self, ops.other, 0, "the CUDA mul kernel");
  return out;
}

Tensor threshold_backward_cuda(const Tensor& grad_output, const Tensor& self, const Scalar& threshold) {
  auto ops = elementwiseOperands("threshold_backward", grad_output, self);
  Tensor out = emptyCUDA(ops.self.sizes(), grad_output.dtype());
  binary(kernels::BinaryOp::ThresholdBackward, out, ops.self, ops.other, threshold, "the CUDA threshold_backward kernel");
  return out;
}

Tensor relu_cuda(const Tensor& self) {
  Tensor out = emptyCUDA(self.sizes(), self.dtype());
  check(kernels::relu(shapeOf(out), operandOf(out), operandOf(self), currentStream()), "the CUDA relu kernel");
  return out;
}

// As the CPU kernel: each element converted to the output dtype, then accumulated (float in
// double, float16/bfloat16 in float); here a conversion pass first, then one reduction.
Tensor sum_cuda(const Tensor& self, std::optional<ScalarType> dtype) {
  const ScalarType out_dtype = dtype.value_or(self.dtype());
  Tensor out = emptyCUDA({}, out_dtype);
  Tensor in = deviceContiguous(self, out_dtype);
  const int64_t scratch_size[] = {static_cast<int64_t>(kernels::sumScratchBytes() / sizeof(double))};
  Tensor scratch = emptyCUDA(scratch_size, ScalarType::Double);
  check(kernels::sum(kernelDtype(out_dtype), in.data_ptr(), in.numel(), out.data_ptr(), scratch.data_ptr(),
                     currentStream()),
        "the CUDA sum kernel");
  return out;  // scratch goes back to the cache now: the next user is ordered after this sum
}

// Between the GPU and the host (either direction) or on the GPU; any dtypes and strides, src
// broadcast to self. Blocking: the host side is complete when it returns (non_blocking is
// accepted and ignored).
Tensor copy_cuda(const Tensor& self, const Tensor& src, bool /*non_blocking*/) {
  const Tensor from = copySource(self, src);
  const bool to_gpu = self.device().is_cuda(), from_gpu = from.device().is_cuda();
  DSCOPE_CHECK((to_gpu || self.is_cpu()) && (from_gpu || from.is_cpu()),
               "copy_: cannot copy from " + from.device().str() + " to " + self.device().str() +
                   " (the CUDA backend copies between cpu and cuda)");
  if (self.numel() == 0) return self;
  cudaStream_t stream = currentStream();
  if (to_gpu && from_gpu) {
    deviceCopy(self, from);
  } else if (to_gpu) {  // host to device: upload the bytes as they are, convert on the GPU if needed
    Tensor host = hostContiguous(from);
    const bool direct = self.is_contiguous() && self.dtype() == host.dtype();
    Tensor landing = direct ? self : emptyCUDA(host.sizes(), host.dtype());
    check(cudaMemcpyAsync(landing.data_ptr(), host.data_ptr(), nbytes(host), cudaMemcpyHostToDevice, stream),
          "cudaMemcpyAsync (host to device)");
    if (!direct) deviceCopy(self, landing);
    syncStream("cudaStreamSynchronize (after a copy to the GPU)");  // `host` may be freed on return
  } else {  // device to host: convert on the GPU, download contiguous bytes, lay them out on the host
    Tensor dev = deviceContiguous(from, self.dtype());
    Tensor host = self.is_contiguous() ? self : make_tensor(self.sizes(), self.dtype(), kCPU);
    check(cudaMemcpyAsync(host.data_ptr(), dev.data_ptr(), nbytes(host), cudaMemcpyDeviceToHost, stream),
          "cudaMemcpyAsync (device to host)");
    syncStream("cudaStreamSynchronize (after a copy from the GPU)");
    if (!host.is_same(self)) hostScatter(self, host);
  }
  return self;
}

// ---------------------------------------------------------------- mm (cuBLAS)

int cublasInt(int64_t v, const char* what) {
  DSCOPE_CHECK(v <= INT_MAX, std::string("mm on CUDA: ") + what + " " + std::to_string(v) + " exceeds cuBLAS's int range");
  return static_cast<int>(v);
}

cublasOperation_t cublasOp(const GemmOperandLayout& l) { return l.transpose ? CUBLAS_OP_T : CUBLAS_OP_N; }

// The plan (LaunchArgs.h) says which operand goes first and how cuBLAS reads each.
Tensor mm_cuda(const Tensor& self, const Tensor& mat2) {
  Tensor out = emptyCUDA(mmOutputShape(self, mat2), self.dtype());
  const ScalarType dtype = self.dtype();
  DSCOPE_CHECK(dtype != ScalarType::Long, "mm on CUDA: int64 is not supported (cuBLAS has no integer GEMM; "
                                          "PyTorch's CUDA mm rejects it too)");
  if (out.numel() == 0) return out;
  if (self.size(1) == 0) {  // an empty sum: zeros
    check(cudaMemsetAsync(out.data_ptr(), 0, nbytes(out), currentStream()), "cudaMemsetAsync");
    return out;
  }
  const GemmPlan plan = planGemm(self, mat2);
  const Tensor first = plan.first.copy ? deviceContiguous(mat2, dtype) : mat2;
  const Tensor second = plan.second.copy ? deviceContiguous(self, dtype) : self;
  const cublasOperation_t op1 = cublasOp(plan.first), op2 = cublasOp(plan.second);
  const int m = cublasInt(plan.m, "size"), n = cublasInt(plan.n, "size"), k = cublasInt(plan.k, "size");
  const int ld1 = cublasInt(plan.first.ld, "leading dimension"), ld2 = cublasInt(plan.second.ld, "leading dimension");
  const int ldc = cublasInt(plan.ldc, "leading dimension");
  cublasHandle_t handle = cublasHandle();
  const Cublas& api = cublas();
  void* c = out.data_ptr();
  switch (dtype) {
    case ScalarType::Float: {
      const float alpha = 1, beta = 0;
      checkCublas(api.sgemm(handle, op1, op2, m, n, k, &alpha, first.data_ptr<float>(), ld1,
                            second.data_ptr<float>(), ld2, &beta, static_cast<float*>(c), ldc),
                  "cublasSgemm");
      break;
    }
    case ScalarType::Double: {
      const double alpha = 1, beta = 0;
      checkCublas(api.dgemm(handle, op1, op2, m, n, k, &alpha, first.data_ptr<double>(), ld1,
                            second.data_ptr<double>(), ld2, &beta, static_cast<double*>(c), ldc),
                  "cublasDgemm");
      break;
    }
    case ScalarType::Half:
    case ScalarType::BFloat16: {  // 16-bit in and out, float accumulation (as PyTorch)
      const cudaDataType type = dtype == ScalarType::Half ? CUDA_R_16F : CUDA_R_16BF;
      const float alpha = 1, beta = 0;
      checkCublas(api.gemmEx(handle, op1, op2, m, n, k, &alpha, first.data_ptr(), type, ld1, second.data_ptr(), type,
                             ld2, &beta, c, type, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                  "cublasGemmEx");
      break;
    }
    case ScalarType::Long: break;  // rejected above
  }
  return out;
}

// ---------------------------------------------------------------- autocast

// The lower-precision policy of autocast.cpp's mm_autocast, for CUDA: floating-point CUDA
// tensors other than float64 are cast to the CUDA autocast dtype (float16 unless set).
Tensor castForAutocastCUDA(const Tensor& t) {
  const ScalarType to = autocast::get_autocast_dtype(DeviceType::CUDA);
  const bool eligible =
      t.defined() && t.device().is_cuda() && isFloatingType(t.dtype()) && t.dtype() != ScalarType::Double;
  return eligible && t.dtype() != to ? t.to(to) : t;
}

Tensor mm_autocast_cuda(const Tensor& self, const Tensor& mat2) {
  impl::ExcludeDispatchKeyGuard no_autocast(DispatchKey::AutocastCUDA);
  return at::mm(castForAutocastCUDA(self), castForAutocastCUDA(mat2));
}

}  // namespace

DSCOPE_LIBRARY_IMPL(aten, CUDA, m) {
  m.impl("empty.memory_format", empty_cuda);
  m.impl("fill_.Scalar", fill_cuda);
  m.impl("add.Tensor", add_cuda);
  m.impl("add_.Tensor", add__cuda);
  m.impl("mul.Tensor", mul_cuda);
  m.impl("mm", mm_cuda);
  m.impl("sum", sum_cuda);
  m.impl("relu", relu_cuda);
  m.impl("threshold_backward", threshold_backward_cuda);
  m.impl("copy_", copy_cuda);
}

DSCOPE_LIBRARY_IMPL(aten, AutocastCUDA, m) { m.impl("mm", mm_autocast_cuda); }

}  // namespace dscope::cuda
