// How dscope's targets refuse: std::runtime_error holding the one-line reason, printed as the
// "dscope: ..." line or a record's "error".
#pragma once

#include <stdexcept>
#include <string>

namespace dscope::cli {

[[noreturn]] inline void refuse(const std::string& message) { throw std::runtime_error(message); }

}  // namespace dscope::cli
