// Kernels that are compositions of other operators: the BackendSelect kernels of the factories,
// CompositeExplicitAutograd factories and _to_copy, CompositeImplicitAutograd to.device.
#include "dscope/Library.h"
#include "dscope/LocalDispatchKeySet.h"
#include "dscope/aten/Functions.h"

namespace dscope::at::native {
namespace {

// PyTorch's generated BackendSelect kernels (every factory with tensor options has one): a
// factory has no tensor argument to dispatch on, so the backend comes from its options; TLS
// still applies, and only keys below BackendSelect remain.
template <class Op>
Tensor factory_backend_select(DispatchKeySet /*ks*/, IntArrayRef size, std::optional<ScalarType> dtype,
                              std::optional<Device> device) {
  DispatchKeySet backend(computeDispatchKey(device.value_or(Device(DeviceType::CPU)).type));
  auto tls = impl::tls_local_dispatch_key_set();
  DispatchKeySet ks = ((backend | tls.included_) - tls.excluded_) &
                      DispatchKeySet(DispatchKeySet::FULL_AFTER, DispatchKey::BackendSelect);
  return Op::redispatch(ks, size, dtype, device);
}

// Reached from BackendSelect at the chosen backend, where CompositeExplicitAutograd fills the slot.
Tensor zeros_composite(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Device> device) {
  return _ops::fill__Scalar::call(_ops::empty_memory_format::call(size, dtype, device), 0);
}

Tensor ones_composite(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Device> device) {
  return _ops::fill__Scalar::call(_ops::empty_memory_format::call(size, dtype, device), 1);
}

Tensor randn_composite(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Device> device) {
  return _ops::normal_::call(_ops::empty_memory_format::call(size, dtype, device), 0, 1, std::nullopt);
}

// A fresh contiguous tensor on the target device/dtype, filled by copy_ (also PyTorch's clone path).
Tensor _to_copy_composite(const Tensor& self, std::optional<ScalarType> dtype, std::optional<Device> device,
                          bool non_blocking) {
  Tensor out = _ops::empty_memory_format::call(self.sizes(), dtype.value_or(self.dtype()), device.value_or(self.device()));
  return _ops::copy_::call(out, self, non_blocking);
}

// Returns self itself (an alias) when nothing changes, as PyTorch's to() does.
Tensor to_device_composite(const Tensor& self, Device device, ScalarType dtype, bool non_blocking, bool copy) {
  if (self.device() == device && self.dtype() == dtype && !copy) return self;
  return _ops::_to_copy::call(self, dtype, device, non_blocking);
}

}  // namespace

DSCOPE_LIBRARY_IMPL(aten, BackendSelect, m) {
  m.impl("empty.memory_format", factory_backend_select<_ops::empty_memory_format>);
  m.impl("zeros", factory_backend_select<_ops::zeros>);
  m.impl("ones", factory_backend_select<_ops::ones>);
  m.impl("randn", factory_backend_select<_ops::randn>);
}

DSCOPE_LIBRARY_IMPL(aten, CompositeExplicitAutograd, m) {
  m.impl("zeros", zeros_composite);
  m.impl("ones", ones_composite);
  m.impl("randn", randn_composite);
  m.impl("_to_copy", _to_copy_composite);
}

DSCOPE_LIBRARY_IMPL(aten, CompositeImplicitAutograd, m) { m.impl("to.device", to_device_composite); }

}  // namespace dscope::at::native
