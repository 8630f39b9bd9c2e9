// The one-line description of a tensor, for every printer of tensors: the runtime's
// Tensor::toString and the inspect library's `summary Tensor` (debugger value printers).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "dscope/Device.h"
#include "dscope/ScalarType.h"

namespace dscope::format {

// "Tensor[2, 3] float32 cpu requires_grad" (sizes, dtype, device, and requires_grad when set).
std::string tensorLine(std::span<const int64_t> sizes, ScalarType dtype, Device device, bool requires_grad);

}  // namespace dscope::format
