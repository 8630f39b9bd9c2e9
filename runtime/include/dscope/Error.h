// dscope::Error: every failure the runtime reports (c10::Error's role).
#pragma once

#include <stdexcept>
#include <string>

namespace dscope {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& msg) : std::runtime_error(msg) {}
};

// Raised for "Could not run '<op>' with arguments from the '<key>' backend" (c10::NotImplementedError).
class NotImplementedError : public Error {
 public:
  using Error::Error;
};

}  // namespace dscope

// DSCOPE_CHECK(cond, msg-expr): throw dscope::Error(msg) when cond is false.
#define DSCOPE_CHECK(cond, ...)                       \
  do {                                                \
    if (!(cond)) throw ::dscope::Error(__VA_ARGS__);  \
  } while (0)
