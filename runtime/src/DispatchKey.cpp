#include "dscope/DispatchKey.h"

#include <array>
#include <string>
#include <unordered_map>

#include "dscope/Error.h"

namespace dscope {
namespace {

// Names of keys 0..156, built once from the same X-macro lists that define the enum.
struct KeyNames {
  std::array<std::string, num_all_dispatch_keys> names;
  KeyNames() {
    size_t i = 0;
    names[i++] = "Undefined";
#define DSCOPE_NAME(k) names[i++] = #k;
    DSCOPE_FORALL_FUNCTIONALITY_KEYS(DSCOPE_NAME)
    names[i++] = "UnknownUnknown";  // EndOfFunctionalityKeys, as c10's default branch spells it
#define DSCOPE_RUNTIME_NAME(prefix, b) names[i++] = std::string(prefix) + #b;
#define DSCOPE_PB_NAMES(f, prefix)                          \
  names[i++] = std::string(#prefix) + "Undefined";          \
  DSCOPE_FORALL_BACKENDS(DSCOPE_RUNTIME_NAME, #prefix)
    DSCOPE_FORALL_PER_BACKEND_FUNCTIONALITIES(DSCOPE_PB_NAMES)
    DSCOPE_FORALL_ALIAS_KEYS(DSCOPE_NAME)
#undef DSCOPE_PB_NAMES
#undef DSCOPE_RUNTIME_NAME
#undef DSCOPE_NAME
  }
};

const KeyNames& keyNames() {
  static const KeyNames n;
  return n;
}

}  // namespace

const char* toString(DispatchKey k) {
  auto v = static_cast<uint16_t>(k);
  return v < num_all_dispatch_keys ? keyNames().names[v].c_str() : "UnknownUnknown";
}

const char* toString(BackendComponent b) {
  // c10 spells these two without the "Bit" suffix.
  if (b == BackendComponent::MTIABit) return "MTIA";
  if (b == BackendComponent::MAIABit) return "MAIA";
  switch (b) {
    case BackendComponent::InvalidBit: return "InvalidBit";
#define DSCOPE_BIT_NAME(_, b) \
  case BackendComponent::b##Bit: return #b "Bit";
      DSCOPE_FORALL_BACKENDS(DSCOPE_BIT_NAME, _)
#undef DSCOPE_BIT_NAME
  }
  return "UNKNOWN_BACKEND_BIT";
}

std::ostream& operator<<(std::ostream& os, DispatchKey k) { return os << toString(k); }
std::ostream& operator<<(std::ostream& os, BackendComponent b) { return os << toString(b); }

// Accepts every name toString gives a real key (functionality, runtime and alias keys). c10's
// parseDispatchKey uses a narrower fixed map (it rejects e.g. QuantizedHIP or AutogradVE); a
// debugger needs to accept whatever PyTorch prints, so this is deliberately the superset.
std::optional<DispatchKey> parseDispatchKey(std::string_view name) {
  static const auto* byName = [] {
    auto* m = new std::unordered_map<std::string_view, DispatchKey>;
    for (uint16_t v = 0; v < num_all_dispatch_keys; ++v) {
      auto k = static_cast<DispatchKey>(v);
      bool real = k < DispatchKey::EndOfFunctionalityKeys || isAliasDispatchKey(k) ||
                  toBackendComponent(k) != BackendComponent::InvalidBit;  // not StartOf*
      if (real) m->emplace(toString(k), k);
    }
    return m;
  }();
  auto it = byName->find(name);
  if (it == byName->end()) return std::nullopt;
  return it->second;
}

DispatchKey parseDispatchKeyOrThrow(std::string_view name) {
  if (auto k = parseDispatchKey(name)) return *k;
  throw Error("could not parse dispatch key: " + std::string(name));
}

}  // namespace dscope
