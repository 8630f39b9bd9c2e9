// From dscope tensors to the arguments of the device code: the Shape/Operand of a launch and the
// cuBLAS arguments of mm. Host-only decisions, kept apart so that tests check them on CPU
// tensors without a GPU (tests/cuda/test_launch_args.cpp).
#pragma once

#include <algorithm>

#include "Kernels.h"
#include "dscope/Tensor.h"

namespace dscope::cuda {

inline kernels::Dtype kernelDtype(ScalarType t) { return static_cast<kernels::Dtype>(static_cast<int8_t>(t)); }

inline kernels::Shape shapeOf(const Tensor& t) {
  kernels::Shape s;
  s.dim = static_cast<int>(t.dim());
  std::copy(t.sizes().begin(), t.sizes().end(), s.sizes);
  s.numel = t.numel();
  return s;
}

inline kernels::Operand operandOf(const Tensor& t) {
  kernels::Operand o;
  o.data = t.data_ptr();
  o.dtype = kernelDtype(t.dtype());
  o.contiguous = t.is_contiguous();
  std::copy(t.strides().begin(), t.strides().end(), o.strides);
  return o;
}

// How cuBLAS (column-major) reads a row-major matrix operand x (r x c). A contiguous x, read
// column-major with ld = c, is x^T (op N gives x^T). A transposed view of a contiguous matrix,
// read column-major with ld = r, is x itself (op T gives x^T). Any other layout is copied to a
// contiguous matrix first.
struct GemmOperandLayout {
  bool copy;       // pass a contiguous copy of x (then transpose is false and ld = max(1, c))
  bool transpose;  // cuBLAS op T rather than N
  int64_t ld;
};

inline GemmOperandLayout gemmOperandLayout(const Tensor& x) {
  if (x.is_contiguous()) return {false, false, std::max<int64_t>(1, x.size(1))};
  if (x.t().is_contiguous()) return {false, true, std::max<int64_t>(1, x.size(0))};
  return {true, false, std::max<int64_t>(1, x.size(1))};
}

// cublas<t>gemm(first.op, second.op, m, n, k, 1, mat2, first.ld, self, second.ld, 0, out, ldc):
// row-major out (n x m) = self (n x k) mat2 (k x m) is, column-major, out^T = mat2^T self^T, so
// cuBLAS's first operand is mat2 and its second self, and it writes out^T (m x n, ld m), which
// is out in row-major order.
struct GemmPlan {
  GemmOperandLayout first;   // mat2
  GemmOperandLayout second;  // self
  int64_t m, n, k, ldc;
};

inline GemmPlan planGemm(const Tensor& self, const Tensor& mat2) {
  return {gemmOperandLayout(mat2), gemmOperandLayout(self), mat2.size(1), self.size(0), self.size(1),
          std::max<int64_t>(1, mat2.size(1))};
}

}  // namespace dscope::cuda
