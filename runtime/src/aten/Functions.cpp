// The aten operator definitions (PyTorch's RegisterSchema.cpp), the typed handles
// (Operators.cpp), the at:: convenience functions and the Tensor methods.
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

namespace _ops {
namespace {
// The typed handle of Op, looked up on first use (all registrations ran at load time).
template <class Op>
const TypedOperatorHandle<typename Op::schema>& typedHandle() {
  static const auto handle =
      Dispatcher::singleton().findSchemaOrThrow(Op::name, Op::overload_name).template typed<typename Op::schema>();
  return handle;
}
}  // namespace

using OptDtype = std::optional<ScalarType>;
using OptDevice = std::optional<Device>;

Tensor empty_memory_format::call(IntArrayRef size, OptDtype dtype, OptDevice device) {
  return typedHandle<empty_memory_format>().call(size, dtype, device);
}
Tensor empty_memory_format::redispatch(DispatchKeySet ks, IntArrayRef size, OptDtype dtype, OptDevice device) {
  return typedHandle<empty_memory_format>().redispatch(ks, size, dtype, device);
}

Tensor zeros::call(IntArrayRef size, OptDtype dtype, OptDevice device) {
  return typedHandle<zeros>().call(size, dtype, device);
}
Tensor zeros::redispatch(DispatchKeySet ks, IntArrayRef size, OptDtype dtype, OptDevice device) {
  return typedHandle<zeros>().redispatch(ks, size, dtype, device);
}

Tensor ones::call(IntArrayRef size, OptDtype dtype, OptDevice device) {
  return typedHandle<ones>().call(size, dtype, device);
}
Tensor ones::redispatch(DispatchKeySet ks, IntArrayRef size, OptDtype dtype, OptDevice device) {
  return typedHandle<ones>().redispatch(ks, size, dtype, device);
}

Tensor randn::call(IntArrayRef size, OptDtype dtype, OptDevice device) {
  return typedHandle<randn>().call(size, dtype, device);
}
Tensor randn::redispatch(DispatchKeySet ks, IntArrayRef size, OptDtype dtype, OptDevice device) {
  return typedHandle<randn>().redispatch(ks, size, dtype, device);
}

Tensor fill__Scalar::call(const Tensor& self, const Scalar& value) { return typedHandle<fill__Scalar>().call(self, value); }
Tensor fill__Scalar::redispatch(DispatchKeySet ks, const Tensor& self, const Scalar& value) {
  return typedHandle<fill__Scalar>().redispatch(ks, self, value);
}

Tensor normal_::call(const Tensor& self, double mean, double std, std::optional<int64_t> seed) {
  return typedHandle<normal_>().call(self, mean, std, seed);
}
Tensor normal_::redispatch(DispatchKeySet ks, const Tensor& self, double mean, double std, std::optional<int64_t> seed) {
  return typedHandle<normal_>().redispatch(ks, self, mean, std, seed);
}

Tensor add_Tensor::call(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  return typedHandle<add_Tensor>().call(self, other, alpha);
}
Tensor add_Tensor::redispatch(DispatchKeySet ks, const Tensor& self, const Tensor& other, const Scalar& alpha) {
  return typedHandle<add_Tensor>().redispatch(ks, self, other, alpha);
}

Tensor add__Tensor::call(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  return typedHandle<add__Tensor>().call(self, other, alpha);
}
Tensor add__Tensor::redispatch(DispatchKeySet ks, const Tensor& self, const Tensor& other, const Scalar& alpha) {
  return typedHandle<add__Tensor>().redispatch(ks, self, other, alpha);
}

Tensor mul_Tensor::call(const Tensor& self, const Tensor& other) { return typedHandle<mul_Tensor>().call(self, other); }
Tensor mul_Tensor::redispatch(DispatchKeySet ks, const Tensor& self, const Tensor& other) {
  return typedHandle<mul_Tensor>().redispatch(ks, self, other);
}

Tensor mm::call(const Tensor& self, const Tensor& mat2) { return typedHandle<mm>().call(self, mat2); }
Tensor mm::redispatch(DispatchKeySet ks, const Tensor& self, const Tensor& mat2) {
  return typedHandle<mm>().redispatch(ks, self, mat2);
}

Tensor sum::call(const Tensor& self, OptDtype dtype) { return typedHandle<sum>().call(self, dtype); }
Tensor sum::redispatch(DispatchKeySet ks, const Tensor& self, OptDtype dtype) {
  return typedHandle<sum>().redispatch(ks, self, dtype);
}

Tensor relu::call(const Tensor& self) { return typedHandle<relu>().call(self); }
Tensor relu::redispatch(DispatchKeySet ks, const Tensor& self) { return typedHandle<relu>().redispatch(ks, self); }

Tensor threshold_backward::call(const Tensor& grad_output, const Tensor& self, const Scalar& threshold) {
  return typedHandle<threshold_backward>().call(grad_output, self, threshold);
}
Tensor threshold_backward::redispatch(DispatchKeySet ks, const Tensor& grad_output, const Tensor& self,
                                      const Scalar& threshold) {
  return typedHandle<threshold_backward>().redispatch(ks, grad_output, self, threshold);
}

Tensor copy_::call(const Tensor& self, const Tensor& src, bool non_blocking) {
  return typedHandle<copy_>().call(self, src, non_blocking);
}
Tensor copy_::redispatch(DispatchKeySet ks, const Tensor& self, const Tensor& src, bool non_blocking) {
  return typedHandle<copy_>().redispatch(ks, self, src, non_blocking);
}

Tensor _to_copy::call(const Tensor& self, OptDtype dtype, OptDevice device, bool non_blocking) {
  return typedHandle<_to_copy>().call(self, dtype, device, non_blocking);
}
Tensor _to_copy::redispatch(DispatchKeySet ks, const Tensor& self, OptDtype dtype, OptDevice device,
                            bool non_blocking) {
  return typedHandle<_to_copy>().redispatch(ks, self, dtype, device, non_blocking);
}

Tensor to_device::call(const Tensor& self, Device device, ScalarType dtype, bool non_blocking, bool copy) {
  return typedHandle<to_device>().call(self, device, dtype, non_blocking, copy);
}
Tensor to_device::redispatch(DispatchKeySet ks, const Tensor& self, Device device, ScalarType dtype,
                             bool non_blocking, bool copy) {
  return typedHandle<to_device>().redispatch(ks, self, device, dtype, non_blocking, copy);
}

}  // namespace _ops

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
