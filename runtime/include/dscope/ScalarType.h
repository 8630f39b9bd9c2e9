// Element types (c10::ScalarType values), 16-bit float storage types, and Scalar.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <ostream>

namespace dscope {

// Values as in c10 so that raw numbers read from memory mean the same thing.
enum class ScalarType : int8_t { Long = 4, Half = 5, Float = 6, Double = 7, BFloat16 = 15 };

const char* toString(ScalarType t);
std::ostream& operator<<(std::ostream&, ScalarType);
size_t elementSize(ScalarType t);
bool isFloatingType(ScalarType t);

// IEEE binary16, stored as bits; arithmetic happens in float.
struct Half {
  uint16_t x = 0;
  Half() = default;
  Half(float f);  // round to nearest even
  operator float() const;
};

// bfloat16: the top half of a float32, rounded to nearest even.
struct BFloat16 {
  uint16_t x = 0;
  BFloat16() = default;
  BFloat16(float f) {
    uint32_t bits = std::bit_cast<uint32_t>(f);
    if ((bits & 0x7fffffff) > 0x7f800000) { x = 0x7fc0; return; }  // NaN stays NaN
    bits += 0x7fff + ((bits >> 16) & 1);
    x = static_cast<uint16_t>(bits >> 16);
  }
  operator float() const { return std::bit_cast<float>(static_cast<uint32_t>(x) << 16); }
};

// A number passed to an operator (c10::Scalar): integral, floating or boolean.
class Scalar {
 public:
  enum class Tag : uint8_t { Int, Double, Bool };
  Scalar() : Scalar(int64_t{0}) {}
  Scalar(int v) : Scalar(static_cast<int64_t>(v)) {}
  Scalar(int64_t v) : tag_(Tag::Int), i_(v) {}
  Scalar(double v) : tag_(Tag::Double), d_(v) {}
  Scalar(float v) : Scalar(static_cast<double>(v)) {}
  Scalar(bool v) : tag_(Tag::Bool), i_(v) {}

  Tag tag() const { return tag_; }
  bool isIntegral() const { return tag_ == Tag::Int; }
  bool isFloatingPoint() const { return tag_ == Tag::Double; }
  bool isBoolean() const { return tag_ == Tag::Bool; }
  template <class T>
  T to() const { return tag_ == Tag::Double ? static_cast<T>(d_) : static_cast<T>(i_); }
  double toDouble() const { return to<double>(); }
  int64_t toLong() const { return to<int64_t>(); }

 private:
  Tag tag_;
  union {
    int64_t i_;
    double d_;
  };
};

}  // namespace dscope
