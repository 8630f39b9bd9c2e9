#include "dscope/format/DispatchRecord.h"

namespace dscope::format {

namespace {
constexpr const char* kLabels[] = {"[?]", "[call]", "[redispatch]", "[callBoxed]", "[redispatchBoxed]"};
constexpr const char* kNames[] = {"?", "call", "redispatch", "callBoxed", "redispatchBoxed"};
constexpr uint8_t kindIndex(uint8_t kind) { return kind <= 4 ? kind : 0; }
}  // namespace

const char* recordKindLabel(uint8_t kind) { return kLabels[kindIndex(kind)]; }
const char* recordKindName(uint8_t kind) { return kNames[kindIndex(kind)]; }

std::string recordLine(uint8_t kind, std::string_view op_name, DispatchKey key) {
  return recordLine(kind, op_name, std::string_view(toString(key)));
}

std::string recordLine(uint8_t kind, std::string_view op_name, std::string_view key_name) {
  std::string line = recordKindLabel(kind);
  line += " op=[";
  line += op_name;
  line += "], key=[";
  line += key_name;
  return line + "]";
}

}  // namespace dscope::format
