// Private: argument checks and output metadata shared by the CPU and Meta kernels, so that a
// Meta tensor fails exactly where a CPU tensor would.
#pragma once

#include <vector>

#include "dscope/Tensor.h"

namespace dscope::at::native {

// Operands of a same-shape elementwise op, with a 0-d operand expanded (stride 0) to the
// other's shape. `self_is_output` (in-place ops): self's shape is fixed, only other may expand.
struct ElementwiseOperands {
  Tensor self;
  Tensor other;
};
ElementwiseOperands elementwiseOperands(const char* op, const Tensor& self, const Tensor& other,
                                        bool self_is_output = false);

// "Expected all tensors to be on the same device, but found at least two devices, cpu and meta!"
void checkSameDevice(const Tensor& a, const Tensor& b);
// add's rule: an integral tensor takes no floating-point alpha.
void checkAlpha(ScalarType dtype, const Scalar& alpha);
// mm's checks (2-D, same dtype, inner sizes); returns the output shape.
std::vector<int64_t> mmOutputShape(const Tensor& self, const Tensor& mat2);
// copy_'s check: src must broadcast to self (same shape, or expandable to it); returns src viewed as self's shape.
Tensor copySource(const Tensor& self, const Tensor& src);
void checkNormalArgs(const Tensor& self, double std);

std::vector<int64_t> toVector(IntArrayRef sizes);
std::string shapeString(IntArrayRef sizes);  // "[2, 3]"

}  // namespace dscope::at::native
