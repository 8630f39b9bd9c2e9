// What a PyTorch thread is throwing when a C++ exception was never caught: std::terminate does
// not unwind, so the thrown object and every frame that led to the throw are still there to read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "source/c10/TorchView.h"

namespace dscope::inspect {

// c10's "Could not run 'OP' with arguments from the 'KEY' backend": a call reached a key where
// its operator has no kernel (OperatorEntry::reportError).
struct CouldNotRun {
  std::string op, key;  // as the message names them; op is a registered operator, key a key of the profile
};

// The Could-not-run error thrown on the stack span [low, high) (the frames from the innermost to the
// thrower, __cxa_throw's among them), or nullopt when no word of the span leads to one.
std::optional<CouldNotRun> couldNotRunThrown(const TorchView& tv, uint64_t low, uint64_t high);

}  // namespace dscope::inspect
