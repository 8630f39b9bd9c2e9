#include "dscope/ScalarType.h"

#include <cmath>

namespace dscope {

const char* toString(ScalarType t) {
  switch (t) {
    case ScalarType::Long: return "int64";
    case ScalarType::Half: return "float16";
    case ScalarType::Float: return "float32";
    case ScalarType::Double: return "float64";
    case ScalarType::BFloat16: return "bfloat16";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& os, ScalarType t) { return os << toString(t); }

size_t elementSize(ScalarType t) {
  switch (t) {
    case ScalarType::Long: case ScalarType::Double: return 8;
    case ScalarType::Float: return 4;
    case ScalarType::Half: case ScalarType::BFloat16: return 2;
  }
  return 0;
}

bool isFloatingType(ScalarType t) { return t != ScalarType::Long; }

// The branch-free conversions c10 uses (from the FP16 library): exact round-to-nearest-even,
// subnormals, infinities and NaN included.
Half::Half(float f) {
  float base = (std::fabs(f) * 0x1.0p+112f) * 0x1.0p-110f;
  uint32_t w = std::bit_cast<uint32_t>(f);
  uint32_t shl1_w = w + w;
  uint32_t sign = w & 0x80000000u;
  uint32_t bias = shl1_w & 0xff000000u;
  if (bias < 0x71000000u) bias = 0x71000000u;
  base = std::bit_cast<float>((bias >> 1) + 0x07800000u) + base;
  uint32_t bits = std::bit_cast<uint32_t>(base);
  uint32_t nonsign = ((bits >> 13) & 0x7c00u) + (bits & 0x0fffu);
  x = static_cast<uint16_t>((sign >> 16) | (shl1_w > 0xff000000u ? 0x7e00u : nonsign));
}

Half::operator float() const {
  uint32_t w = static_cast<uint32_t>(x) << 16;
  uint32_t sign = w & 0x80000000u;
  uint32_t two_w = w + w;
  float normalized = std::bit_cast<float>((two_w >> 4) + (0xe0u << 23)) * 0x1.0p-112f;
  float denormalized = std::bit_cast<float>((two_w >> 17) | (126u << 23)) - 0.5f;
  uint32_t r = sign | (two_w < (1u << 27) ? std::bit_cast<uint32_t>(denormalized) : std::bit_cast<uint32_t>(normalized));
  return std::bit_cast<float>(r);
}

}  // namespace dscope
