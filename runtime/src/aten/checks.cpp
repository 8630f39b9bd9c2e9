#include "Checks.h"

#include <algorithm>

#include "dscope/Error.h"

namespace dscope::at::native {

std::vector<int64_t> toVector(IntArrayRef sizes) { return {sizes.begin(), sizes.end()}; }

std::string shapeString(IntArrayRef sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

void checkSameDevice(const Tensor& a, const Tensor& b) {
  DSCOPE_CHECK(a.device() == b.device(), "Expected all tensors to be on the same device, but found at least two devices, " +
                                             a.device().str() + " and " + b.device().str() + "!");
}

namespace {
void checkSameDtype(const char* op, const Tensor& a, const Tensor& b) {
  DSCOPE_CHECK(a.dtype() == b.dtype(), std::string(op) + ": expected both tensors to have the same dtype, but got " +
                                           toString(a.dtype()) + " and " + toString(b.dtype()) +
                                           " (dscope does no type promotion)");
}

// PyTorch's broadcast error for same-rank shapes; ours for anything else we do not broadcast.
[[noreturn]] void shapeMismatch(const char* op, IntArrayRef a, IntArrayRef b) {
  if (a.size() == b.size())
    for (size_t d = 0; d < a.size(); ++d)
      if (a[d] != b[d])
        throw Error("The size of tensor a (" + std::to_string(a[d]) + ") must match the size of tensor b (" +
                    std::to_string(b[d]) + ") at non-singleton dimension " + std::to_string(d));
  throw Error(std::string(op) + ": shapes " + shapeString(a) + " and " + shapeString(b) +
              " differ; dscope's elementwise ops take same-shape tensors (a 0-d tensor broadcasts)");
}

bool sameShape(const Tensor& a, const Tensor& b) {
  auto x = a.sizes(), y = b.sizes();
  return std::equal(x.begin(), x.end(), y.begin(), y.end());
}
}  // namespace

ElementwiseOperands elementwiseOperands(const char* op, const Tensor& self, const Tensor& other, bool self_is_output) {
  checkSameDevice(self, other);
  checkSameDtype(op, self, other);
  if (sameShape(self, other)) return {self, other};
  if (other.dim() == 0) return {self, other.expand(self.sizes())};
  if (self.dim() == 0 && !self_is_output) return {self.expand(other.sizes()), other};
  if (self_is_output && self.dim() == 0)
    throw Error("output with shape [] doesn't match the broadcast shape " + shapeString(other.sizes()));
  shapeMismatch(op, self.sizes(), other.sizes());
}

void checkAlpha(ScalarType dtype, const Scalar& alpha) {
  DSCOPE_CHECK(isFloatingType(dtype) || !alpha.isFloatingPoint(),
               "For integral input tensors, argument alpha must not be a floating point number.");
}

std::vector<int64_t> mmOutputShape(const Tensor& self, const Tensor& mat2) {
  DSCOPE_CHECK(self.dim() == 2, "self must be a matrix");
  DSCOPE_CHECK(mat2.dim() == 2, "mat2 must be a matrix");
  checkSameDevice(self, mat2);
  DSCOPE_CHECK(self.size(1) == mat2.size(0),
               "mat1 and mat2 shapes cannot be multiplied (" + std::to_string(self.size(0)) + "x" +
                   std::to_string(self.size(1)) + " and " + std::to_string(mat2.size(0)) + "x" +
                   std::to_string(mat2.size(1)) + ")");
  DSCOPE_CHECK(self.dtype() == mat2.dtype(), std::string("expected mat1 and mat2 to have the same dtype, but got: ") +
                                                 toString(self.dtype()) + " != " + toString(mat2.dtype()));
  return {self.size(0), mat2.size(1)};
}

Tensor copySource(const Tensor& self, const Tensor& src) {
  if (sameShape(self, src)) return src;
  DSCOPE_CHECK(src.dim() == 0 || src.dim() == self.dim(),
               "copy_: the source of shape " + shapeString(src.sizes()) + " cannot be broadcast to " +
                   shapeString(self.sizes()));
  for (int64_t d = 0; d < src.dim(); ++d)
    if (src.size(d) != 1 && src.size(d) != self.size(d)) shapeMismatch("copy_", src.sizes(), self.sizes());
  return src.expand(self.sizes());
}

void checkNormalArgs(const Tensor& self, double std) {
  DSCOPE_CHECK(isFloatingType(self.dtype()),
               std::string("normal_ expects a floating-point tensor, but got ") + toString(self.dtype()));
  DSCOPE_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std " + std::to_string(std));
}

}  // namespace dscope::at::native
