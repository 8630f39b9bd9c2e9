#include "dscope/Device.h"

#include "dscope/Error.h"

namespace dscope {

namespace {
std::string& privateuse1Name() {
  static std::string name = "privateuseone";
  return name;
}
}  // namespace

void rename_privateuse1_backend(const std::string& name) { privateuse1Name() = name; }
const std::string& get_privateuse1_backend() { return privateuse1Name(); }

const char* toString(DeviceType t) {
  switch (t) {
    case DeviceType::CPU: return "cpu";
    case DeviceType::CUDA: return "cuda";
    case DeviceType::Meta: return "meta";
    case DeviceType::PrivateUse1: return get_privateuse1_backend().c_str();
  }
  return "unknown";
}

Device::Device(const std::string& spec) {
  auto colon = spec.find(':');
  std::string type = spec.substr(0, colon);
  if (type == "cpu") this->type = DeviceType::CPU;
  else if (type == "cuda") this->type = DeviceType::CUDA;
  else if (type == "meta") this->type = DeviceType::Meta;
  else if (type == get_privateuse1_backend() || type == "privateuseone") this->type = DeviceType::PrivateUse1;
  else throw Error("Expected one of cpu, cuda, meta, " + get_privateuse1_backend() + " device type at start of device string: " + spec);
  if (colon != std::string::npos) {
    try {
      index = static_cast<int8_t>(std::stoi(spec.substr(colon + 1)));
    } catch (const std::exception&) {
      throw Error("Invalid device string: '" + spec + "'");
    }
  }
}

std::string Device::str() const {
  std::string s = toString(type);
  return index >= 0 ? s + ":" + std::to_string(index) : s;
}

std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.str(); }

BackendComponent toBackendComponent(DeviceType t) {
  switch (t) {
    case DeviceType::CPU: return BackendComponent::CPUBit;
    case DeviceType::CUDA: return BackendComponent::CUDABit;
    case DeviceType::Meta: return BackendComponent::MetaBit;
    case DeviceType::PrivateUse1: return BackendComponent::PrivateUse1Bit;
  }
  return BackendComponent::InvalidBit;
}

DispatchKey computeDispatchKey(DeviceType t) {
  return toRuntimePerBackendFunctionalityKey(DispatchKey::Dense, toBackendComponent(t));
}

}  // namespace dscope
