// Devices (c10::DeviceType values for the four we support) and their dispatch backends.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "dscope/DispatchKeySet.h"

namespace dscope {

enum class DeviceType : int8_t { CPU = 0, CUDA = 1, Meta = 14, PrivateUse1 = 20 };

struct Device {
  DeviceType type = DeviceType::CPU;
  int8_t index = -1;  // -1: the current device of that type

  Device() = default;
  Device(DeviceType t, int8_t i = -1) : type(t), index(i) {}
  // "cpu", "cuda", "cuda:1", "meta", "privateuseone" (or the renamed PrivateUse1 backend name)
  explicit Device(const std::string& spec);
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool is_cpu() const { return type == DeviceType::CPU; }
  bool is_cuda() const { return type == DeviceType::CUDA; }
  bool is_meta() const { return type == DeviceType::Meta; }
  std::string str() const;
};

std::ostream& operator<<(std::ostream&, const Device&);
const char* toString(DeviceType t);

BackendComponent toBackendComponent(DeviceType t);
// The dense dispatch key of a device type: CPU, CUDA, Meta, PrivateUse1.
DispatchKey computeDispatchKey(DeviceType t);

// PyTorch's torch.utils.rename_privateuse1_backend: the name of the PrivateUse1 device, used in
// device strings and in "Could not run ..." errors. Default "privateuseone".
void rename_privateuse1_backend(const std::string& name);
const std::string& get_privateuse1_backend();

}  // namespace dscope
