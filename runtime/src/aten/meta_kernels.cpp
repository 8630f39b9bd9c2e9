// Meta kernels: shapes and dtypes only (no data), with the same checks as the CPU kernels.
#include "Checks.h"
#include "dscope/Error.h"
#include "dscope/Library.h"

namespace dscope::at::native {
namespace {

const Device kMeta(DeviceType::Meta);

Tensor empty_meta(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Device> /*device*/) {
  return make_tensor(size, dtype.value_or(ScalarType::Float), kMeta);
}

Tensor fill_meta(const Tensor& self, const Scalar& /*value*/) { return self; }

Tensor normal_meta(const Tensor& self, double /*mean*/, double std, std::optional<int64_t> /*seed*/) {
  checkNormalArgs(self, std);
  return self;
}

Tensor add_meta(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  auto ops = elementwiseOperands("add", self, other);
  checkAlpha(self.dtype(), alpha);
  return make_tensor(ops.self.sizes(), self.dtype(), kMeta);
}

Tensor add__meta(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  elementwiseOperands("add_", self, other, /*self_is_output=*/true);
  checkAlpha(self.dtype(), alpha);
  return self;
}

Tensor mul_meta(const Tensor& self, const Tensor& other) {
  auto ops = elementwiseOperands("mul", self, other);
  return make_tensor(ops.self.sizes(), self.dtype(), kMeta);
}

Tensor mm_meta(const Tensor& self, const Tensor& mat2) {
  return make_tensor(mmOutputShape(self, mat2), self.dtype(), kMeta);
}

Tensor sum_meta(const Tensor& self, std::optional<ScalarType> dtype) {
  return make_tensor({}, dtype.value_or(self.dtype()), kMeta);
}

Tensor relu_meta(const Tensor& self) { return make_tensor(self.sizes(), self.dtype(), kMeta); }

Tensor threshold_backward_meta(const Tensor& grad_output, const Tensor& self, const Scalar& /*threshold*/) {
  auto ops = elementwiseOperands("threshold_backward", grad_output, self);
  return make_tensor(ops.self.sizes(), grad_output.dtype(), kMeta);
}

// Reached whenever either side is Meta (the Meta backend bit is the highest).
Tensor copy_meta(const Tensor& self, const Tensor& src, bool /*non_blocking*/) {
  if (!self.is_meta() && src.is_meta()) throw NotImplementedError("Cannot copy out of meta tensor; no data!");
  copySource(self, src);
  return self;
}

}  // namespace

DSCOPE_LIBRARY_IMPL(aten, Meta, m) {
  m.impl("empty.memory_format", empty_meta);
  m.impl("fill_.Scalar", fill_meta);
  m.impl("normal_", normal_meta);
  m.impl("add.Tensor", add_meta);
  m.impl("add_.Tensor", add__meta);
  m.impl("mul.Tensor", mul_meta);
  m.impl("mm", mm_meta);
  m.impl("sum", sum_meta);
  m.impl("relu", relu_meta);
  m.impl("threshold_backward", threshold_backward_meta);
  m.impl("copy_", copy_meta);
}

}  // namespace dscope::at::native
