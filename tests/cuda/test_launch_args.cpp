// The host-side decisions of the CUDA kernels, checked on CPU tensors (no GPU needed):
//  * offsetOf (the device code's strided walk) over shapeOf/operandOf of a view reaches the
//    elements the CPU copy kernel reaches;
//  * the cuBLAS arguments planGemm gives for mm, run through a reference of cuBLAS's own
//    column-major GEMM, produce at::mm's result, and meet cuBLAS's rules for the leading
//    dimensions.
#include <doctest/doctest.h>

#include <array>
#include <string>
#include <vector>

#include "LaunchArgs.h"
#include "dscope/aten/Functions.h"

using namespace dscope;
using cuda::GemmPlan;

namespace {

// 0, 1, 2, ... as float64 in a contiguous CPU tensor.
Tensor iota(std::initializer_list<int64_t> sizes) {
  Tensor t = at::empty(sizes, TensorOptions(ScalarType::Double));
  for (int64_t i = 0; i < t.numel(); ++i) t.data_ptr<double>()[i] = static_cast<double>(i);
  return t;
}

// A contiguous float64 copy, made by the CPU copy kernel (its own strided walk).
Tensor contiguousCopy(const Tensor& t) {
  Tensor out = at::empty(t.sizes(), TensorOptions(ScalarType::Double));
  out.copy_(t);
  return out;
}

// Each element of view v through offsetOf equals the CPU copy's element at the same linear index.
void checkWalk(const Tensor& v) {
  const auto shape = cuda::shapeOf(v);
  const auto operand = cuda::operandOf(v);
  CHECK(operand.contiguous == v.is_contiguous());
  Tensor expected = contiguousCopy(v);
  const double* base = v.data_ptr<double>();
  for (int64_t i = 0; i < v.numel(); ++i) {
    CAPTURE(i);
    CHECK(base[cuda::kernels::offsetOf(i, shape, operand)] == expected.data_ptr<double>()[i]);
  }
}

std::string layoutName(const cuda::GemmOperandLayout& l) {
  return std::string(l.copy ? "copy" : l.transpose ? "T" : "N") + " ld=" + std::to_string(l.ld);
}

// cuBLAS's GEMM, by its definition: C (m x n, column-major, ldc) = op(A) (m x k) op(B) (k x n),
// where op T reads the stored column-major matrix transposed.
void referenceGemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const double* A, int64_t lda, const double* B,
                   int64_t ldb, double* C, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t p = 0; p < k; ++p) {
        const double a = ta ? A[p + i * lda] : A[i + p * lda];
        const double b = tb ? B[j + p * ldb] : B[p + j * ldb];
        acc += a * b;
      }
      C[i + j * ldc] = acc;
    }
}

// mm(self, mat2) as mm_cuda hands it to cuBLAS, computed by the reference: equal to at::mm on the CPU.
void checkGemm(const Tensor& self, const Tensor& mat2) {
  const GemmPlan plan = cuda::planGemm(self, mat2);
  CAPTURE(layoutName(plan.first));
  CAPTURE(layoutName(plan.second));
  REQUIRE(plan.m == mat2.size(1));
  REQUIRE(plan.n == self.size(0));
  REQUIRE(plan.k == self.size(1));
  // cuBLAS's argument rules (else CUBLAS_STATUS_INVALID_VALUE).
  CHECK(plan.first.ld >= std::max<int64_t>(1, plan.first.transpose ? plan.k : plan.m));
  CHECK(plan.second.ld >= std::max<int64_t>(1, plan.second.transpose ? plan.n : plan.k));
  CHECK(plan.ldc >= std::max<int64_t>(1, plan.m));
  CHECK((!plan.first.copy || !plan.first.transpose));

  const Tensor first = plan.first.copy ? contiguousCopy(mat2) : mat2;
  const Tensor second = plan.second.copy ? contiguousCopy(self) : self;
  std::vector<double> c(static_cast<size_t>(plan.ldc * plan.n), -1.0);
  referenceGemm(plan.first.transpose, plan.second.transpose, plan.m, plan.n, plan.k, first.data_ptr<double>(),
                plan.first.ld, second.data_ptr<double>(), plan.second.ld, c.data(), plan.ldc);

  Tensor expected = at::mm(self, mat2);  // row-major n x m
  for (int64_t i = 0; i < plan.n; ++i)
    for (int64_t j = 0; j < plan.m; ++j) {
      CAPTURE(i);
      CAPTURE(j);
      CHECK(c[static_cast<size_t>(j + i * plan.ldc)] == expected.data_ptr<double>()[i * plan.m + j]);
    }
}

// The layouts an mm operand of shape r x c can come in: contiguous, a transposed view, every
// other column of a wider matrix, and a broadcast (stride 0) one.
std::vector<Tensor> layouts(int64_t r, int64_t c) {
  Tensor wide = iota({r, 2 * c});
  const int64_t sizes[] = {r, c}, every_other[] = {2 * c, 2};
  return {iota({r, c}).mul(at::full({}, 0.5, TensorOptions(ScalarType::Double))), iota({c, r}).t(),
          wide.as_strided_view(sizes, every_other, 1), at::full({}, 3.0, TensorOptions(ScalarType::Double)).expand(sizes)};
}

}  // namespace

TEST_SUITE_BEGIN("host");

TEST_CASE("offsetOf walks views as the CPU copy kernel does") {
  Tensor base = iota({4, 6});
  checkWalk(base);
  checkWalk(base.t());
  const int64_t sizes[] = {4, 3}, strides[] = {6, 2};
  checkWalk(base.as_strided_view(sizes, strides, 1));  // every other column, from column 1
  const int64_t sizes3[] = {2, 3, 2}, strides3[] = {1, 8, 2};
  checkWalk(iota({24}).as_strided_view(sizes3, strides3, 0));  // a 3-D permutation
  checkWalk(at::full({}, 5.0, TensorOptions(ScalarType::Double)).expand(sizes));  // stride 0
  checkWalk(iota({}));                                                           // 0-d
  const int64_t one_sizes[] = {1, 4}, one_strides[] = {99, 1};
  checkWalk(base.as_strided_view(one_sizes, one_strides, 2));  // a size-1 dimension's stride is irrelevant
}

TEST_CASE("planGemm: every operand layout gives at::mm through cuBLAS's column-major GEMM") {
  for (const auto& nkm : {std::array<int64_t, 3>{3, 4, 5}, {1, 4, 5}, {3, 1, 5}, {3, 4, 1}, {1, 1, 1}, {2, 7, 2}}) {
    const int64_t n = nkm[0], k = nkm[1], m = nkm[2];  // (not a structured binding: clang 14 cannot capture one)
    CAPTURE(n);
    CAPTURE(k);
    CAPTURE(m);
    for (const Tensor& a : layouts(n, k))
      for (const Tensor& b : layouts(k, m)) checkGemm(a, b);
  }
}

TEST_CASE("planGemm: contiguous operands go as they are, transposed views with op T") {
  Tensor a = iota({3, 4}), b = iota({4, 5});
  GemmPlan plan = cuda::planGemm(a, b);
  CHECK((!plan.first.copy && !plan.first.transpose && plan.first.ld == 5));
  CHECK((!plan.second.copy && !plan.second.transpose && plan.second.ld == 4));
  CHECK(plan.ldc == 5);
  plan = cuda::planGemm(iota({4, 3}).t(), iota({5, 4}).t());
  CHECK((!plan.first.copy && plan.first.transpose && plan.first.ld == 4));
  CHECK((!plan.second.copy && plan.second.transpose && plan.second.ld == 3));
}

TEST_SUITE_END();
