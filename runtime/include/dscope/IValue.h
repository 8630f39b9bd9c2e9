// IValue: one boxed operator argument or return value; a Stack is what boxed kernels see.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "dscope/Error.h"
#include "dscope/Tensor.h"

namespace dscope {

class IValue {
 public:
  IValue() = default;  // None
  IValue(std::nullopt_t) {}
  IValue(Tensor t) : v_(std::move(t)) {}
  IValue(double d) : v_(d) {}
  IValue(int64_t i) : v_(i) {}
  IValue(int i) : v_(static_cast<int64_t>(i)) {}
  IValue(bool b) : v_(b) {}
  IValue(ScalarType t) : v_(static_cast<int64_t>(t)) {}  // c10 boxes ScalarType as int
  IValue(Device d) : v_(d) {}
  IValue(std::string s) : v_(std::move(s)) {}
  IValue(const char* s) : v_(std::string(s)) {}
  IValue(IntArrayRef l) : v_(std::vector<int64_t>(l.begin(), l.end())) {}
  IValue(std::vector<int64_t> l) : v_(std::move(l)) {}
  IValue(TensorList l) : v_(std::vector<Tensor>(l.begin(), l.end())) {}
  IValue(std::vector<Tensor> l) : v_(std::move(l)) {}
  IValue(const Scalar& s) {
    if (s.isFloatingPoint()) v_ = s.toDouble();
    else if (s.isBoolean()) v_ = s.to<bool>();
    else v_ = s.toLong();
  }
  template <class T>
  IValue(std::optional<T> o) {
    if (o) *this = IValue(std::move(*o));
  }

  bool isNone() const { return v_.index() == 0; }
  bool isTensor() const { return is<Tensor>(); }
  bool isDouble() const { return is<double>(); }
  bool isInt() const { return is<int64_t>(); }
  bool isBool() const { return is<bool>(); }
  bool isIntList() const { return is<std::vector<int64_t>>(); }
  bool isTensorList() const { return is<std::vector<Tensor>>(); }
  bool isDevice() const { return is<Device>(); }
  bool isString() const { return is<std::string>(); }

  const Tensor& toTensor() const { return get<Tensor>("Tensor"); }
  double toDouble() const { return get<double>("float"); }
  int64_t toInt() const { return get<int64_t>("int"); }
  bool toBool() const { return get<bool>("bool"); }
  const std::vector<int64_t>& toIntList() const { return get<std::vector<int64_t>>("int[]"); }
  const std::vector<Tensor>& toTensorList() const { return get<std::vector<Tensor>>("Tensor[]"); }
  Device toDevice() const { return get<Device>("Device"); }
  const std::string& toStringRef() const { return get<std::string>("str"); }
  ScalarType toScalarType() const { return static_cast<ScalarType>(toInt()); }
  Scalar toScalar() const {
    if (isDouble()) return Scalar(toDouble());
    if (isBool()) return Scalar(toBool());
    return Scalar(toInt());
  }
  // "None", "Tensor", "int", ... for error messages.
  const char* tagName() const;

 private:
  template <class T>
  bool is() const { return std::holds_alternative<T>(v_); }
  template <class T>
  const T& get(const char* want) const {
    if (auto* p = std::get_if<T>(&v_)) return *p;
    throw Error(std::string("IValue: expected ") + want + " but got " + tagName());
  }
  std::variant<std::monostate, Tensor, double, int64_t, bool, std::vector<int64_t>,
               std::vector<Tensor>, Device, std::string>
      v_;
};

using Stack = std::vector<IValue>;

}  // namespace dscope
