// Autocast: the TLS mode (AutocastMode) and the lower-precision kernels (PyTorch's
// autocast_mode.cpp, reduced to mm on CPU).
#include "dscope/aten/Autocast.h"

#include "dscope/Error.h"
#include "dscope/Library.h"
#include "dscope/LocalDispatchKeySet.h"
#include "dscope/aten/Functions.h"

namespace dscope::autocast {

DispatchKey autocastKeyFor(DeviceType device) {
  switch (device) {
    case DeviceType::CPU: return DispatchKey::AutocastCPU;
    case DeviceType::CUDA: return DispatchKey::AutocastCUDA;
    case DeviceType::PrivateUse1: return DispatchKey::AutocastPrivateUse1;
    case DeviceType::Meta: break;
  }
  throw Error(std::string("autocast is not supported on device type ") + toString(device));
}

// Enabled means "the autocast key is not excluded": the TLS is the only state, as in c10.
bool is_autocast_enabled(DeviceType device) { return !impl::tls_is_dispatch_key_excluded(autocastKeyFor(device)); }

void set_autocast_enabled(DeviceType device, bool enabled) {
  impl::tls_set_dispatch_key_excluded(autocastKeyFor(device), !enabled);
}

namespace {
// Thread-local like PyTorch's autocast dtypes; indexed CPU, CUDA, PrivateUse1.
size_t dtypeSlot(DeviceType device) {
  switch (device) {
    case DeviceType::CPU: return 0;
    case DeviceType::CUDA: return 1;
    case DeviceType::PrivateUse1: return 2;
    case DeviceType::Meta: break;
  }
  throw Error(std::string("autocast is not supported on device type ") + toString(device));
}
thread_local ScalarType autocast_dtypes[3] = {ScalarType::BFloat16, ScalarType::Half, ScalarType::Half};
}  // namespace

ScalarType get_autocast_dtype(DeviceType device) { return autocast_dtypes[dtypeSlot(device)]; }
void set_autocast_dtype(DeviceType device, ScalarType dtype) { autocast_dtypes[dtypeSlot(device)] = dtype; }

AutocastMode::AutocastMode(DeviceType device, std::optional<ScalarType> dtype)
    : device_(device), prev_enabled_(is_autocast_enabled(device)), prev_dtype_(get_autocast_dtype(device)) {
  if (dtype) set_autocast_dtype(device, *dtype);
  set_autocast_enabled(device, true);
}

AutocastMode::~AutocastMode() {
  set_autocast_enabled(device_, prev_enabled_);
  set_autocast_dtype(device_, prev_dtype_);
}

namespace {

// PyTorch's cached_cast for the lower-precision policy: floating-point tensors on the autocast
// device are cast, except float64 (is_eligible excludes kDouble).
Tensor castForAutocast(const Tensor& t, DeviceType device) {
  ScalarType to = get_autocast_dtype(device);
  bool eligible = t.defined() && t.device().type == device && isFloatingType(t.dtype()) && t.dtype() != ScalarType::Double;
  return eligible && t.dtype() != to ? t.to(to) : t;
}

// The lower-precision wrapper (PyTorch's WrapFunction_<CastPolicy::lower_precision_fp, ...>):
// autocast off for the nested calls, inputs cast, then a normal (not redispatched) call.
// Register the same template at AutocastCUDA (DeviceType::CUDA) when CUDA kernels exist.
template <DeviceType device>
Tensor mm_autocast(const Tensor& self, const Tensor& mat2) {
  impl::ExcludeDispatchKeyGuard no_autocast(autocastKeyFor(device));
  return at::mm(castForAutocast(self, device), castForAutocast(mat2, device));
}

}  // namespace

DSCOPE_LIBRARY_IMPL(aten, AutocastCPU, m) { m.impl("mm", &mm_autocast<DeviceType::CPU>); }

}  // namespace dscope::autocast
