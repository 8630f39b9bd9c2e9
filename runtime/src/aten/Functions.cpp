// The aten operator definitions (PyTorch's RegisterSchema.cpp), the at:: convenience functions
// and the Tensor methods.
#include "dscope/aten/Functions.h"

#include "Loops.h"
#include "dscope/Dispatcher.h"
#include "dscope/Library.h"

namespace dscope::at {

DSCOPE_LIBRARY(aten, m) {
  m.def(_ops::empty_memory_format::schema_str);
  m.def(_ops::zeros::schema_str);
  m.def(_ops::ones::schema_str);
  m.def(_ops::randn::schema_str);
  m.def(_ops::fill__Scalar::schema_str);
  m.def(_ops::normal_::schema_str);
  m.def(_ops::add_Tensor::schema_str);
  m.def(_ops::add__Tensor::schema_str);
  m.def(_ops::mul_Tensor::schema_str);
  m.def(_ops::mm::schema_str);
  m.def(_ops::sum::schema_str);
  m.def(_ops::relu::schema_str);
  m.def(_ops::threshold_backward::schema_str);
  m.def(_ops::copy_::schema_str);
  m.def(_ops::_to_copy::schema_str);
  m.def(_ops::to_device::schema_str);
}


// ---------------------------------------------------------------- convenience functions

namespace {
// Factories mark their result as a leaf requiring grad when asked (torch.ones(..., requires_grad=True)).
Tensor withRequiresGrad(Tensor t, const TensorOptions& options) {
  if (options.requires_grad_) t.set_requires_grad(true);
  return t;
}
}  // namespace

Tensor empty(SizesRef size, TensorOptions options) {
  return withRequiresGrad(_ops::empty_memory_format::call(size, options.dtype_, options.device_), options);
}
Tensor zeros(SizesRef size, TensorOptions options) {
  return withRequiresGrad(_ops::zeros::call(size, options.dtype_, options.device_), options);
}
Tensor ones(SizesRef size, TensorOptions options) {
  return withRequiresGrad(_ops::ones::call(size, options.dtype_, options.device_), options);
}
Tensor randn(SizesRef size, TensorOptions options) {
  return withRequiresGrad(_ops::randn::call(size, options.dtype_, options.device_), options);
}
Tensor full(SizesRef size, const Scalar& value, TensorOptions options) {
  Tensor t = _ops::empty_memory_format::call(size, options.dtype_, options.device_);
  _ops::fill__Scalar::call(t, value);
  return withRequiresGrad(t, options);
}
Tensor fill_(const Tensor& self, const Scalar& value) { return _ops::fill__Scalar::call(self, value); }
Tensor normal_(const Tensor& self, double mean, double std, std::optional<int64_t> seed) {
  return _ops::normal_::call(self, mean, std, seed);
}
Tensor add(const Tensor& self, const Tensor& other, const Scalar& alpha) { return _ops::add_Tensor::call(self, other, alpha); }
Tensor add_(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  return _ops::add__Tensor::call(self, other, alpha);
}
Tensor mul(const Tensor& self, const Tensor& other) { return _ops::mul_Tensor::call(self, other); }
Tensor mm(const Tensor& self, const Tensor& mat2) { return _ops::mm::call(self, mat2); }
Tensor sum(const Tensor& self, std::optional<ScalarType> dtype) { return _ops::sum::call(self, dtype); }
Tensor relu(const Tensor& self) { return _ops::relu::call(self); }
Tensor threshold_backward(const Tensor& grad_output, const Tensor& self, const Scalar& threshold) {
  return _ops::threshold_backward::call(grad_output, self, threshold);
}
Tensor copy_(const Tensor& self, const Tensor& src, bool non_blocking) { return _ops::copy_::call(self, src, non_blocking); }
Tensor _to_copy(const Tensor& self, std::optional<ScalarType> dtype, std::optional<Device> device, bool non_blocking) {
  return _ops::_to_copy::call(self, dtype, device, non_blocking);
}

void manual_seed(uint64_t seed) { native::manualSeedDefaultGenerator(seed); }

}  // namespace dscope::at

// ---------------------------------------------------------------- Tensor methods (declared in Tensor.h)

namespace dscope {

Tensor Tensor::add(const Tensor& other, const Scalar& alpha) const { return at::_ops::add_Tensor::call(*this, other, alpha); }
Tensor Tensor::add_(const Tensor& other, const Scalar& alpha) const {
  return at::_ops::add__Tensor::call(*this, other, alpha);
}
Tensor Tensor::mul(const Tensor& other) const { return at::_ops::mul_Tensor::call(*this, other); }
Tensor Tensor::mm(const Tensor& mat2) const { return at::_ops::mm::call(*this, mat2); }
Tensor Tensor::sum(std::optional<ScalarType> dtype) const { return at::_ops::sum::call(*this, dtype); }
Tensor Tensor::relu() const { return at::_ops::relu::call(*this); }
Tensor Tensor::copy_(const Tensor& src, bool non_blocking) const { return at::_ops::copy_::call(*this, src, non_blocking); }
Tensor Tensor::to(Device device, ScalarType dtype, bool non_blocking, bool copy) const {
  return at::_ops::to_device::call(*this, device, dtype, non_blocking, copy);
}

}  // namespace dscope
