#include "dscope/format/Tensor.h"

namespace dscope::format {

std::string tensorLine(std::span<const int64_t> sizes, ScalarType dtype, Device device, bool requires_grad) {
  std::string s = "Tensor[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  s += std::string("] ") + toString(dtype) + " " + device.str();
  if (requires_grad) s += " requires_grad";
  return s;
}

}  // namespace dscope::format
