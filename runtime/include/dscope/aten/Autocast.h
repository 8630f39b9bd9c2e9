// Autocast (torch.autocast's C++ side): an RAII mode that turns the Autocast<device> key on for
// this thread, plus the per-device lower-precision dtype its kernels cast to.
//
//   { dscope::autocast::AutocastMode on(DeviceType::CPU); at::mm(a, b); }  // bfloat16 result
//
// Autocast keys sit in the TLS *excluded* set by default (see LocalDispatchKeySet.h), so
// enabling autocast means removing the key from that set. Kernels exist for CPU today; CUDA
// plugs in by registering the same lower-precision wrappers at AutocastCUDA (the mode and the
// dtype table below already handle DeviceType::CUDA).
#pragma once

#include <optional>

#include "dscope/Device.h"
#include "dscope/DispatchKey.h"
#include "dscope/ScalarType.h"

namespace dscope::autocast {

// AutocastCPU, AutocastCUDA, AutocastPrivateUse1; throws for a device without autocast (Meta).
DispatchKey autocastKeyFor(DeviceType device);

bool is_autocast_enabled(DeviceType device);
void set_autocast_enabled(DeviceType device, bool enabled);
// The dtype lower-precision ops cast to: BFloat16 for CPU, Half for CUDA/PrivateUse1 by default.
ScalarType get_autocast_dtype(DeviceType device);
void set_autocast_dtype(DeviceType device, ScalarType dtype);

class AutocastMode {
 public:
  // dtype: what lower-precision ops cast to; nullopt keeps the device's current autocast dtype
  // (BFloat16 for CPU unless changed), as torch.autocast(device_type) does.
  explicit AutocastMode(DeviceType device, std::optional<ScalarType> dtype = std::nullopt);
  AutocastMode(const AutocastMode&) = delete;
  AutocastMode& operator=(const AutocastMode&) = delete;
  ~AutocastMode();

 private:
  DeviceType device_;
  bool prev_enabled_;
  ScalarType prev_dtype_;
};

}  // namespace dscope::autocast
