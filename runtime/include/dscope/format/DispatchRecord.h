// One dispatch record in PyTorch's trace words, for every printer of dispatch chains: the
// runtime's trace and crash handler, and the inspect library's dispatch-trace.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "dscope/DispatchKey.h"

namespace dscope::format {

// "[call]", "[redispatch]", "[callBoxed]", "[redispatchBoxed]" (dscope_record_kind 1..4), or
// "[?]" for any other value (a corrupt record). Allocation-free: the crash handler uses it.
const char* recordKindLabel(uint8_t kind);
// "call", "redispatch", ... without brackets, or "?".
const char* recordKindName(uint8_t kind);
// "[call] op=[aten::mm], key=[AutogradCPU]"
std::string recordLine(uint8_t kind, std::string_view op_name, DispatchKey key);
// The same with the key already spelled (dispatch-trace --frames: "<key set optimized out>").
std::string recordLine(uint8_t kind, std::string_view op_name, std::string_view key_name);

}  // namespace dscope::format
